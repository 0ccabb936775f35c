#!/usr/bin/env bash
# Drives lazuli's File endpoint with the az CLI (Debian's azure-cli) the way
# a user would: a connection string naming the FileEndpoint, then share,
# directory and file commands including the batch ones.
#
#   conformance/file/az/roundtrip.sh http://127.0.0.1:10003/devstoreaccount1
set -euo pipefail
endpoint=${1:-http://127.0.0.1:10003/devstoreaccount1}
key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;FileEndpoint=$endpoint;"
export AZURE_CORE_COLLECT_TELEMETRY=no AZURE_CORE_ONLY_SHOW_ERRORS=yes AZURE_CORE_NO_COLOR=yes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Progress bars go to stderr; it is shown only when a command fails.
az() { command az "$@" --only-show-errors 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }; }
fail() { echo "az round trip: $*" >&2; exit 1; }

share="azshare$(date +%s%N | tail -c 9)"
az storage share create --name "$share" --quota 2 --output none
az storage directory create --share-name "$share" --name docs --output none
printf 'hello from az\n' >"$work/hello.txt"
head -c 5000000 /dev/urandom >"$work/big.bin"
az storage file upload --share-name "$share" --source "$work/hello.txt" --path docs/hello.txt --output none
az storage file upload --share-name "$share" --source "$work/big.bin" --path docs/big.bin --output none
az storage file download --share-name "$share" --path DOCS/Hello.TXT --dest "$work/back.txt" --output none
cmp "$work/hello.txt" "$work/back.txt" || fail "downloaded file differs"
az storage file download --share-name "$share" --path docs/big.bin --dest "$work/big.back" --output none
cmp "$work/big.bin" "$work/big.back" || fail "downloaded big file differs"
listed=$(az storage file list --share-name "$share" --path docs --query "[].name" --output tsv | sort | tr '\n' ' ')
[ "$listed" = "big.bin hello.txt " ] || fail "listed: $listed"
[ "$(az storage file exists --share-name "$share" --path docs/hello.txt --query exists --output tsv)" = "true" ] || fail "exists"

# Batch upload and download of a small tree.
mkdir -p "$work/tree/a/b" "$work/out"
for f in one a/two a/b/three; do echo "content of $f" >"$work/tree/$f.txt"; done
az storage file upload-batch --destination "$share" --source "$work/tree" --destination-path batch --output none
az storage file download-batch --destination "$work/out" --source "$share" --pattern 'batch/*' --output none
diff -r "$work/tree" "$work/out/batch" || fail "batch round trip differs"

az storage file delete --share-name "$share" --path docs/hello.txt --output none
[ "$(az storage file exists --share-name "$share" --path docs/hello.txt --query exists --output tsv)" = "false" ] || fail "deleted file exists"
az storage share list --query "[?name=='$share'].name" --output tsv | grep -qx "$share" || fail "share not listed"
az storage share delete --name "$share" --output none
[ "$(az storage share exists --name "$share" --query exists --output tsv)" = "false" ] || fail "deleted share exists"
echo "az round trip: ok"
