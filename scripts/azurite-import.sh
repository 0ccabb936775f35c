#!/usr/bin/env bash
# Imports a data directory the reference emulator itself wrote: installs
# azurite and the JavaScript SDKs from npm (conformance/azimport/js), has
# azurite store blobs, snapshots, queues with messages and tables with
# typed entities, stops it, checks that lazuli refuses to serve that
# directory, imports it with `lazuli import-azurite`, starts lazuli on the
# result and reads everything back through the SDKs.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill "${az_pid:-}" "${lz_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
# A binary built already (LAZULI_BIN, as scripts/test.sh sets), or one
# built now.
if [ -n "${LAZULI_BIN:-}" ]; then
  ln -s "$LAZULI_BIN" "$tmp/lazuli"
else
  go build -o "$tmp/lazuli" ./cmd/lazuli
fi
js=conformance/azimport/js
(cd "$js" && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null)

# Three free ports for azurite (which has no "pick a free port").
read -r bp qp tp < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
mkdir "$tmp/azurite"
"$js/node_modules/.bin/azurite" --location "$tmp/azurite" --blobPort "$bp" --queuePort "$qp" --tablePort "$tp" \
  --silent --disableTelemetry --skipApiVersionCheck >"$tmp/azurite.log" 2>&1 &
az_pid=$!
for _ in $(seq 1 100); do
  grep -q 'Table service is successfully listening' "$tmp/azurite.log" && break
  sleep 0.2
done
grep -q 'Table service is successfully listening' "$tmp/azurite.log" || { echo "azurite did not start:"; cat "$tmp/azurite.log"; exit 1; }
(cd "$js" && node write.mjs "127.0.0.1:$bp" "127.0.0.1:$qp" "127.0.0.1:$tp" "$tmp/seen.json")
kill "$az_pid"; wait "$az_pid" 2>/dev/null || true
az_pid=

# lazuli refuses to write beside the reference emulator's files.
if "$tmp/lazuli" --location "$tmp/azurite" --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 2>"$tmp/refused.log"; then
  echo "lazuli started on the reference emulator's directory"; exit 1
fi
grep -q "import-azurite" "$tmp/refused.log" || { echo "no import advice:"; cat "$tmp/refused.log"; exit 1; }

"$tmp/lazuli" import-azurite --from "$tmp/azurite" --location "$tmp/lazuli-data"
"$tmp/lazuli" --location "$tmp/lazuli-data" --silent --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 2>"$tmp/lazuli.log" >/dev/null &
lz_pid=$!
for _ in $(seq 1 100); do
  grep -q '^lazuli: blob' "$tmp/lazuli.log" && break
  sleep 0.1
done
read -r blob queue table < <(sed -n 's/^lazuli: blob \([^ ]*\) queue \([^ ]*\) table \([^ ]*\) .*/\1 \2 \3/p' "$tmp/lazuli.log")
[ -n "${table:-}" ] || { echo "lazuli did not start:"; cat "$tmp/lazuli.log"; exit 1; }
(cd "$js" && node check.mjs "$blob" "$queue" "$table" "$tmp/seen.json")
kill "$lz_pid"
