#!/usr/bin/env bash
# Drives lazuli's dfs API with the az CLI (Debian's azure-cli) as a user
# would: a connection string naming the BlobEndpoint of a lazuli started
# with --hierarchicalNamespace, then `az storage fs` commands.
#
#   conformance/dfs/az/roundtrip.sh http://127.0.0.1:10000/devstoreaccount1
set -euo pipefail
endpoint=${1:-http://127.0.0.1:10000/devstoreaccount1}
key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$endpoint;"
export AZURE_CORE_COLLECT_TELEMETRY=no AZURE_CORE_ONLY_SHOW_ERRORS=yes AZURE_CORE_NO_COLOR=yes
work=$(mktemp -d)
export AZURE_CONFIG_DIR="$work/az"
trap 'rm -rf "$work"' EXIT
az() { command az "$@" --only-show-errors 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }; }
fail() { echo "az fs round trip: $*" >&2; exit 1; }

fs="azfs$(date +%s%N | tail -c 9)"
az storage fs create --name "$fs" --output none
az storage fs directory create --file-system "$fs" --name raw/2024 --output none
printf 'hello lake\n' >"$work/hello.txt"
az storage fs file upload --file-system "$fs" --source "$work/hello.txt" --path raw/2024/hello.txt --output none
listed=$(az storage fs file list --file-system "$fs" --query "[].name" --output tsv | tr '\n' ' ')
[ "$listed" = "raw raw/2024 raw/2024/hello.txt " ] || fail "listed: $listed"
az storage fs directory move --file-system "$fs" --name raw --new-directory "$fs/curated" --output none
listed=$(az storage fs file list --file-system "$fs" --query "[].name" --output tsv | tr '\n' ' ')
[ "$listed" = "curated curated/2024 curated/2024/hello.txt " ] || fail "listed after move: $listed"
az storage fs file download --file-system "$fs" --path curated/2024/hello.txt --destination "$work/back.txt" --output none
cmp "$work/hello.txt" "$work/back.txt" || fail "downloaded file differs"
az storage fs access set --file-system "$fs" --path curated/2024/hello.txt --permissions rwxr-x--- --output none
perms=$(az storage fs access show --file-system "$fs" --path curated/2024/hello.txt --query permissions --output tsv)
[ "$perms" = "rwxr-x---" ] || fail "permissions: $perms"
az storage fs directory delete --file-system "$fs" --name curated --yes --output none
listed=$(az storage fs file list --file-system "$fs" --query "[].name" --output tsv)
[ -z "$listed" ] || fail "left after delete: $listed"
az storage fs delete --name "$fs" --yes --output none
echo "dfs az: ok"
