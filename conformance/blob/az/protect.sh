#!/usr/bin/env bash
# Drives blob data protection with the az CLI (Debian's azure-cli): the
# delete retention policy, a listing with --include d and az storage blob
# undelete in the development account, and versions (--include v,
# --version-id), immutability policies and legal holds in an account that
# keeps versions. lazuli runs with
#   AZURITE_ACCOUNTS="azversions:<key>" --blobVersioningAccounts azversions
#
#   conformance/blob/az/protect.sh http://127.0.0.1:10000 azversions:<key>
set -euo pipefail
base=${1:-http://127.0.0.1:10000}
vaccount=${2%%:*}
vkey=${2#*:}
key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$base/devstoreaccount1;"
export AZURE_CORE_COLLECT_TELEMETRY=no AZURE_CORE_ONLY_SHOW_ERRORS=yes AZURE_CORE_NO_COLOR=yes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
az() { command az "$@" --only-show-errors 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }; }
fail() { echo "az blob protection: $*" >&2; exit 1; }

c="azprotect$(date +%s%N | tail -c 9)"
az storage blob service-properties delete-policy update --enable true --days-retained 2 --output none
[ "$(az storage blob service-properties delete-policy show --query days --output tsv)" = "2" ] || fail "policy days"
az storage container create --name "$c" --output none
printf 'first\n' >"$work/one.txt"
printf 'second\n' >"$work/two.txt"
az storage blob upload --container-name "$c" --name b --file "$work/one.txt" --output none
az storage blob upload --container-name "$c" --name b --file "$work/two.txt" --overwrite --output none

# Soft delete: the deleted blob is listed with --include d and comes back
# with az storage blob undelete.
az storage blob delete --container-name "$c" --name b --output none
[ "$(az storage blob exists --container-name "$c" --name b --query exists --output tsv)" = "false" ] || fail "deleted blob exists"
listed=$(az storage blob list --container-name "$c" --include d --query "[].[name, deleted]" --output tsv | tr 'A-Z' 'a-z')
[ "$listed" = "$(printf 'b\ttrue')" ] || fail "deleted listing: $listed"
az storage blob undelete --container-name "$c" --name b --output none
az storage blob download --container-name "$c" --name b --file "$work/back.txt" --output none
cmp "$work/two.txt" "$work/back.txt" || fail "undeleted blob differs"
az storage blob service-properties delete-policy update --enable false --output none

# Versions: two uploads, two versions, the second current; the first
# reads back by its id.
export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$vaccount;AccountKey=$vkey;BlobEndpoint=$base/$vaccount;"
az storage container create --name "$c" --output none
az storage blob upload --container-name "$c" --name b --file "$work/one.txt" --output none
az storage blob upload --container-name "$c" --name b --file "$work/two.txt" --overwrite --output none
versions=$(az storage blob list --container-name "$c" --include v --query "[].[versionId, isCurrentVersion]" --output tsv)
[ "$(echo "$versions" | wc -l)" = "2" ] || fail "versions listed: $versions"
[ "$(echo "$versions" | tail -1 | cut -f2 | tr 'A-Z' 'a-z')" = "true" ] || fail "current version: $versions"
first=$(echo "$versions" | head -1 | cut -f1)
az storage blob download --container-name "$c" --name b --version-id "$first" --file "$work/v1.txt" --output none
cmp "$work/one.txt" "$work/v1.txt" || fail "version 1 differs"

# Version-level immutability: az cannot create such a container on the
# data plane, so Debian's Python SDK does (with the header); then az sets
# and deletes an immutability policy and a legal hold, and a delete under
# either is refused.
w="${c}w"
/usr/bin/python3 - "$w" <<'PY'
import os, sys
from azure.storage.blob import ContainerClient
ContainerClient.from_connection_string(os.environ["AZURE_STORAGE_CONNECTION_STRING"], sys.argv[1]).create_container(
    headers={"x-ms-immutable-storage-with-versioning-enabled": "true"})
PY
az storage blob upload --container-name "$w" --name held --file "$work/one.txt" --output none
until=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
az storage blob immutability-policy set --container-name "$w" --name held --expiry-time "$until" --policy-mode Unlocked --output none
mode=$(az storage blob show --container-name "$w" --name held --query "immutabilityPolicy.policyMode" --output tsv | tr 'A-Z' 'a-z')
[ "$mode" = "unlocked" ] || fail "policy mode: $mode"
if command az storage blob delete --container-name "$w" --name held --only-show-errors >/dev/null 2>"$work/del"; then
  fail "a blob under an immutability policy was deleted"
fi
grep -q BlobImmutableDueToPolicy "$work/del" || fail "delete under policy: $(cat "$work/del")"
az storage blob immutability-policy delete --container-name "$w" --name held --output none
az storage blob set-legal-hold --container-name "$w" --name held --legal-hold true --output none
[ "$(az storage blob show --container-name "$w" --name held --query "hasLegalHold" --output tsv | tr 'A-Z' 'a-z')" = "true" ] || fail "legal hold not shown"
if command az storage blob delete --container-name "$w" --name held --only-show-errors >/dev/null 2>"$work/del"; then
  fail "a blob under a legal hold was deleted"
fi
grep -q BlobImmutableDueToLegalHold "$work/del" || fail "delete under hold: $(cat "$work/del")"
az storage blob set-legal-hold --container-name "$w" --name held --legal-hold false --output none
az storage blob delete --container-name "$w" --name held --output none
echo "az blob protection: ok"
