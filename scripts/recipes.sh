#!/usr/bin/env bash
# Runs every recipe of the README against a freshly built lazuli: the
# build and install commands, the az CLI, Python (Debian's azure-storage
# and azure-data-tables packages), the JavaScript and Go SDKs, and rclone
# with an account SAS URL, and smbclient on a share made over REST. Needs az,
# python3, node/npm, rclone and smbclient (.ci/run
# installs the Debian packages); exits non-zero at the first failure.
#
# In CI (CI=true) with the default ports 10000-10003 free, lazuli runs on
# them and the JavaScript recipe uses UseDevelopmentStorage=true; otherwise
# (a shared machine) it runs on free ports and every recipe gets the
# explicit connection string. The az CLI, Python and Go recipes always use
# the explicit string: those clients do not expand UseDevelopmentStorage=true.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

tmp=$(mktemp -d)
lz_pid=""
cleanup() {
  if [ -n "$lz_pid" ]; then kill "$lz_pid" 2>/dev/null || true; wait "$lz_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "-- build and install"
go build -o "$tmp/lazuli" ./cmd/lazuli
GOBIN="$tmp/gobin" go install ./cmd/lazuli
"$tmp/gobin/lazuli" --version
"$tmp/lazuli" --help >/dev/null

ports_free=${CI:-false}
for p in 10000 10001 10002 10003; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ports_free=false; fi
done
if [ "$ports_free" = true ]; then
  port_args=()
else
  echo "(not in CI or default ports busy: running on free ports; UseDevelopmentStorage=true is not exercised)"
  port_args=(--blobPort 0 --queuePort 0 --tablePort 0 --filePort 0)
fi
# SMB takes a free port, so a busy 10445 cannot fail the recipes.
"$tmp/lazuli" --inMemoryPersistence --silent --smbPort 0 --adminPort 0 "${port_args[@]}" 2>"$tmp/log" &
lz_pid=$!
for _ in $(seq 1 100); do
  grep -q '^lazuli: blob' "$tmp/log" && break
  sleep 0.1
done
read -r blob queue table file smb < <(sed -n 's/^lazuli: blob \([^ ]*\) queue \([^ ]*\) table \([^ ]*\) file \([^ ]*\) smb \([^ ]*\).*/\1 \2 \3 \4 \5/p' "$tmp/log")
[ -n "${blob:-}" ] || { echo "lazuli did not start:"; cat "$tmp/log"; exit 1; }

key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
explicit="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=http://$blob/devstoreaccount1;QueueEndpoint=http://$queue/devstoreaccount1;TableEndpoint=http://$table/devstoreaccount1;"
sdk_cs=$explicit
if [ "$ports_free" = true ]; then sdk_cs='UseDevelopmentStorage=true'; fi

echo "-- az CLI ($(az version --query '"azure-cli"' -o tsv 2>/dev/null))"
export AZURE_CORE_COLLECT_TELEMETRY=no AZURE_CORE_ONLY_SHOW_ERRORS=yes
echo "hello from az" >"$tmp/hello.txt"
az storage container create -n azrecipe --connection-string "$explicit" -o none
az storage blob upload -c azrecipe -n hello.txt -f "$tmp/hello.txt" --connection-string "$explicit" -o none --no-progress
az storage blob download -c azrecipe -n hello.txt -f "$tmp/back.txt" --connection-string "$explicit" -o none --no-progress
cmp "$tmp/hello.txt" "$tmp/back.txt"
az storage queue create -n azrecipe --connection-string "$explicit" -o none
az storage message put -q azrecipe --content hello --connection-string "$explicit" -o none
[ "$(az storage message get -q azrecipe --connection-string "$explicit" --query '[0].content' -o tsv)" = hello ]
az storage table create -n azrecipe --connection-string "$explicit" -o none
az storage entity insert -t azrecipe -e PartitionKey=p RowKey=r Value=7 --connection-string "$explicit" -o none
[ "$(az storage entity show -t azrecipe --partition-key p --row-key r --connection-string "$explicit" --query Value -o tsv)" = 7 ]
echo "az recipe ok"

echo "-- Python (Debian python3-azure-storage, python3-azure)"
AZURE_STORAGE_CONNECTION_STRING=$explicit /usr/bin/python3 scripts/recipes/recipe.py

echo "-- JavaScript SDKs (npm)"
(cd scripts/recipes/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
  AZURE_STORAGE_CONNECTION_STRING=$sdk_cs node recipe.mjs)

echo "-- Go SDK"
(cd conformance && AZURE_STORAGE_CONNECTION_STRING=$explicit go run ./recipe)

echo "-- rclone ($(rclone version | head -1)) with an account SAS URL"
sas=$(az storage account generate-sas --connection-string "$explicit" --services b --resource-types sco \
  --permissions rwdlac --expiry "$(date -u -d '+1 hour' +%Y-%m-%dT%H:%MZ)" -o tsv)
remote=":azureblob,sas_url='http://$blob/devstoreaccount1?$sas':"
mkdir -p "$tmp/tree/sub"
echo one >"$tmp/tree/a.txt"; echo two >"$tmp/tree/sub/b.txt"
export RCLONE_CONFIG=/dev/null
rclone mkdir "${remote}rclonerecipe"
rclone copy "$tmp/tree" "${remote}rclonerecipe/tree"
rclone check "$tmp/tree" "${remote}rclonerecipe/tree"
[ "$(rclone cat "${remote}rclonerecipe/tree/sub/b.txt")" = two ]
rclone lsd "$remote" | grep -q rclonerecipe
echo "rclone recipe ok"

echo "-- smbclient ($(smbclient --version)) on a share made over REST"
fileexplicit="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;FileEndpoint=http://$file/devstoreaccount1;"
az storage share create -n myshare --connection-string "$fileexplicit" -o none
smb_port=${smb##*:}
echo "hello over SMB" >"$tmp/smb.txt"
(cd "$tmp" && smbclient //127.0.0.1/myshare -p "$smb_port" -U "devstoreaccount1%$key" -c 'put smb.txt; ls' >/dev/null)
smbclient -L 127.0.0.1 -p "$smb_port" -U "devstoreaccount1%$key" 2>/dev/null | grep -q myshare
az storage file download -s myshare -p smb.txt --dest "$tmp/smb-back.txt" --connection-string "$fileexplicit" -o none --no-progress
cmp "$tmp/smb.txt" "$tmp/smb-back.txt"
echo "smbclient recipe ok"

echo "-- all recipes passed"
