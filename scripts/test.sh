#!/usr/bin/env bash
# Runs every lazuli test: formatting and vet checks, the main module's unit,
# engine-conformance, wire and fuzz-seed tests, and the SDK conformance
# module against both engines.
#
#   scripts/test.sh            # all tests
#   scripts/test.sh quick      # under two minutes: vet, unit tests, an SDK sample
#   LAZULI_TARGETS=all scripts/test.sh   # conformance on all four targets
set -euo pipefail
cd "$(dirname "$0")/.."
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
# section names a step and how long the run has taken so far, so a slow
# step shows in the log.
section() { echo "== $* [${SECONDS}s]"; }

section "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi

if [ "${1:-}" = quick ]; then
  # The check to run before each commit, in under two minutes on two
  # cores: vet, the unit tests of internal/ (no race detector, which
  # triples their time), and one sample of each service's SDK conformance
  # tests in memory. The durable engines' conformance, crash and
  # PostgreSQL suites (minutes of their own) run in the full run only,
  # which is what CI runs.
  section "quick: go vet"
  go vet ./...
  section "quick: unit tests of internal/..."
  go test -count=1 -timeout 5m $(go list ./internal/... | grep -Ev '/internal/engine/(logstore|sqlitestore|pgstore)$')
  section "quick: SDK conformance sample (in memory)"
  (cd conformance && LAZULI_TARGETS=mem-inproc go test -count=1 -timeout 5m ./blob/ ./queue/ ./table/ ./file/ \
    -run '^(TestPutGetBlob|TestContainers|TestMessageLifecycle|TestCompetingConsumers|TestEntityCRUD|TestRaceOptimisticCounter|TestShareLifecycle|TestDirectoriesAndFiles)$')
  section "quick tests passed (the full run: scripts/test.sh)"
  exit 0
fi

section "go vet"
go vet ./...
(cd conformance && go vet ./...)

section "staticcheck"
# Pinned: the release that understands the Go the module asks for.
go run "$STATICCHECK" ./...

# Everything runs under the race detector: concurrency is what lazuli is
# about, and every race test should also be data-race free.
section "main module (race detector on)"
# The metrics test checks the admin listener's scrape with promtool
# (Debian package prometheus), and cmd/lazuli's TestContainerImage builds
# the container image with scripts/image.sh (Debian package umoci) and
# reads its configuration and layer back; here neither may go unchecked.
command -v promtool >/dev/null 2>&1 || { echo "promtool is needed (apt-get install prometheus)" >&2; exit 1; }
command -v umoci >/dev/null 2>&1 || { echo "umoci is needed (apt-get install umoci)" >&2; exit 1; }
LAZULI_REQUIRE_PROMTOOL=1 LAZULI_REQUIRE_UMOCI=1 go test -race -count=1 -timeout 15m ./...

section "h1 against net/http: differential fuzzing (20 s)"
# h1 and net/http must agree on every request boundary, method, target,
# header field and body, or both refuse; see internal/h1/diff_test.go.
go test -count=1 -run '^$' -fuzz '^FuzzDifferential$' -fuzztime 20s ./internal/h1/

section "SDK conformance (targets: ${LAZULI_TARGETS:-default}; race detector on)"
(cd conformance && go test -race -count=1 -timeout 15m ./...)

section "SDK conformance on PostgreSQL: one lazuli, and three lazuli sharing one database"
# The postgres engine's own code runs under the race detector above
# (storagetest, the cluster tests); this pass checks the services on it.
(cd conformance && LAZULI_TARGETS=postgres-tcp,postgres3-tcp go test -count=1 -timeout 15m ./blob/... ./queue/... ./table/... ./robustness/... ./security/... ./dfs/...)

section "scale: a queue of 1,000,000 messages and a table of 1,000,000 entities, both engines"
# These are Go benchmarks that also check correctness (counts, order,
# every lookup answered); they print p50/p99 latencies and rates.
go test -count=1 -run '^$' -bench 'BenchmarkMillionMessageQueue' -benchtime 500x -timeout 20m ./internal/queue/
go test -count=1 -run '^$' -bench 'BenchmarkTable1M' -benchtime 500x -timeout 20m ./internal/table/

section "JavaScript SDKs (@azure/storage-blob, @azure/storage-queue, @azure/data-tables)"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'kill "${lz_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
  go build -o "$tmp/lazuli" ./cmd/lazuli
  # An extra account whose key is not strict base64, as scripts written
  # for the reference emulator carry.
  AZURITE_ACCOUNTS="jslenient:password123" \
    "$tmp/lazuli" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0 --webPort 0 2>"$tmp/log" &
  lz_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$tmp/log" && break
    sleep 0.1
  done
  table_addr=$(sed -n 's/^lazuli: blob .* table \([^ ]*\) file .*/\1/p' "$tmp/log")
  [ -n "$table_addr" ] || { echo "lazuli did not start:"; cat "$tmp/log"; exit 1; }
  blob_addr=$(sed -n 's/^lazuli: blob \([^ ]*\) queue .*/\1/p' "$tmp/log")
  queue_addr=$(sed -n 's/^lazuli: blob .* queue \([^ ]*\) table .*/\1/p' "$tmp/log")
  web_addr=$(sed -n 's/^lazuli: blob .* web \([^ ]*\).*/\1/p' "$tmp/log")
  (cd conformance/table/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
    LAZULI_TABLE_URL="http://$table_addr/devstoreaccount1" node roundtrip.mjs)
  # Blob: batch framing, append-blob seal, CRC-64 uploads, round trips.
  (cd conformance/blob/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
    LAZULI_BLOB_URL="http://$blob_addr/devstoreaccount1" LAZULI_LENIENT_ACCOUNT="jslenient:password123" node blob.mjs &&
    LAZULI_BLOB_URL="http://$blob_addr/devstoreaccount1" node softdelete.mjs &&
    LAZULI_BLOB_URL="http://$blob_addr/devstoreaccount1" LAZULI_WEB_URL="http://$web_addr/devstoreaccount1" node website.mjs)
  (cd conformance/queue/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
    LAZULI_QUEUE_URL="http://$queue_addr/devstoreaccount1" node queue.mjs)
  kill "$lz_pid"
else
  echo "node and npm are needed for this step" >&2
  exit 1
fi

section "Data Lake Storage Gen2: JavaScript SDK (@azure/storage-file-datalake), Python (Debian's azure.storage.filedatalake), az storage fs"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && command -v az >/dev/null 2>&1 &&
  /usr/bin/python3 -c 'import azure.storage.filedatalake' 2>/dev/null; then
  dtmp=$(mktemp -d)
  trap 'kill "${lzd_pid:-}" 2>/dev/null || true; rm -rf "$dtmp" "${tmp:-}"' EXIT
  go build -o "$dtmp/lazuli" ./cmd/lazuli
  "$dtmp/lazuli" --inMemoryPersistence --silent --hierarchicalNamespace --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0 2>"$dtmp/log" &
  lzd_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$dtmp/log" && break
    sleep 0.1
  done
  dfs_addr=$(sed -n 's/^lazuli: blob \([^ ]*\) queue .*/\1/p' "$dtmp/log")
  [ -n "$dfs_addr" ] || { echo "lazuli did not start:"; cat "$dtmp/log"; exit 1; }
  (cd conformance/dfs/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
    LAZULI_BLOB_URL="http://$dfs_addr/devstoreaccount1" node dfs.mjs)
  LAZULI_BLOB_URL="http://$dfs_addr/devstoreaccount1" /usr/bin/python3 conformance/dfs/python/dfs.py
  conformance/dfs/az/roundtrip.sh "http://$dfs_addr/devstoreaccount1"
  kill "$lzd_pid"
else
  echo "node, npm, az (Debian's azure-cli) and Debian's python3-azure are needed for this step" >&2
  exit 1
fi

section "File service: JavaScript SDK (@azure/storage-file-share) and az CLI round trips"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && command -v az >/dev/null 2>&1; then
  ftmp=$(mktemp -d)
  trap 'kill "${lzf_pid:-}" 2>/dev/null || true; rm -rf "$ftmp" "${tmp:-}"' EXIT
  go build -o "$ftmp/lazuli" ./cmd/lazuli
  "$ftmp/lazuli" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0 2>"$ftmp/log" &
  lzf_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$ftmp/log" && break
    sleep 0.1
  done
  file_addr=$(sed -n 's/^lazuli: blob .* file \([^ ]*\).*/\1/p' "$ftmp/log")
  [ -n "$file_addr" ] || { echo "lazuli did not start:"; cat "$ftmp/log"; exit 1; }
  (cd conformance/file/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
    LAZULI_FILE_URL="http://$file_addr/devstoreaccount1" node roundtrip.mjs)
  conformance/file/az/roundtrip.sh "http://$file_addr/devstoreaccount1"
  kill "$lzf_pid"
else
  echo "node, npm and az (Debian's azure-cli) are needed for this step" >&2
  exit 1
fi

section "Blob soft delete and versions: az CLI"
if command -v az >/dev/null 2>&1; then
  btmp=$(mktemp -d)
  trap 'kill "${lzb_pid:-}" 2>/dev/null || true; rm -rf "$btmp" "${ftmp:-}" "${tmp:-}"' EXIT
  go build -o "$btmp/lazuli" ./cmd/lazuli
  # A second account keeps versions; the development account soft-deletes.
  vkey=$(printf 'lazuli versions test account key, not a secret, 64 bytes long!!' | base64 -w0)
  AZURITE_ACCOUNTS="azversions:$vkey" "$btmp/lazuli" --inMemoryPersistence --silent --blobVersioningAccounts azversions \
    --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0 2>"$btmp/log" &
  lzb_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$btmp/log" && break
    sleep 0.1
  done
  blob_addr=$(sed -n 's/^lazuli: blob \([^ ]*\) queue .*/\1/p' "$btmp/log")
  [ -n "$blob_addr" ] || { echo "lazuli did not start:"; cat "$btmp/log"; exit 1; }
  conformance/blob/az/protect.sh "http://$blob_addr" "azversions:$vkey"
  kill "$lzb_pid"
else
  echo "az (Debian's azure-cli) is needed for this step" >&2
  exit 1
fi

section "Web console in headless Chromium (playwright-core, Debian's chromium), checked with the JavaScript SDKs"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1 &&
  command -v smbclient >/dev/null 2>&1; then
  ctmp=$(mktemp -d)
  trap 'kill "${lzc_pid:-}" 2>/dev/null || true; rm -rf "$ctmp" "${ftmp:-}" "${tmp:-}"' EXIT
  go build -o "$ctmp/lazuli" ./cmd/lazuli
  "$ctmp/lazuli" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0 2>"$ctmp/log" &
  lzc_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$ctmp/log" && break
    sleep 0.1
  done
  ready=$(grep '^lazuli: blob' "$ctmp/log" || true)
  addr_of() { sed -n "s/.* $1 \([^ ]*\).*/\1/p" <<<"$ready"; }
  admin_addr=$(addr_of admin)
  [ -n "$admin_addr" ] || { echo "lazuli did not start with an admin listener:"; cat "$ctmp/log"; exit 1; }
  # A second lazuli whose admin listener is bound beyond loopback, so that
  # it asks for an account and its key.
  auth_account="consoleuser:$(printf 'console user key, 32 bytes long!' | base64)"
  AZURITE_ACCOUNTS="$auth_account" "$ctmp/lazuli" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 \
    --filePort 0 --smbPort -1 --adminHost 0.0.0.0 --adminPort 0 2>"$ctmp/log2" &
  lzc2_pid=$!
  trap 'kill "${lzc_pid:-}" "${lzc2_pid:-}" 2>/dev/null || true; rm -rf "$ctmp" "${ftmp:-}" "${tmp:-}"' EXIT
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$ctmp/log2" && break
    sleep 0.1
  done
  ready2=$(grep '^lazuli: blob' "$ctmp/log2" || true)
  auth_admin=$(sed -n 's/.* admin [^ ]*:\([0-9]*\).*/\1/p' <<<"$ready2")
  auth_blob=$(sed -n 's/^lazuli: blob \([^ ]*\) .*/\1/p' <<<"$ready2")
  [ -n "$auth_admin" ] || { echo "lazuli did not start with an admin listener:"; cat "$ctmp/log2"; exit 1; }
  (cd conformance/console/js && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null &&
    LAZULI_CONSOLE_URL="http://$admin_addr/" LAZULI_BLOB_URL="http://$(addr_of blob)/devstoreaccount1" \
    LAZULI_QUEUE_URL="http://$(addr_of queue)/devstoreaccount1" LAZULI_TABLE_URL="http://$(addr_of table)/devstoreaccount1" \
    LAZULI_FILE_URL="http://$(addr_of file)/devstoreaccount1" LAZULI_SMB_PORT="$(addr_of smb | sed 's/.*://')" \
    LAZULI_CONSOLE_AUTH_URL="http://127.0.0.1:$auth_admin/" LAZULI_CONSOLE_AUTH_ACCOUNT="$auth_account" \
    LAZULI_AUTH_BLOB_URL="http://$auth_blob" node console.mjs)
  kill "$lzc_pid" "$lzc2_pid"
else
  echo "node, npm, chromium and smbclient are needed for this step" >&2
  exit 1
fi

section "import of a data directory the reference emulator wrote (npm azurite, JavaScript SDKs)"
bash scripts/azurite-import.sh

section "SMB: Samba's smbtorture subtests lazuli passes (scripts/smbtorture-pass.txt)"
# Each listed smb2.* subtest of Samba's protocol test suite must keep
# passing; scripts/smbtorture.sh compares lazuli with smbd on the whole
# selection.
if command -v smbtorture >/dev/null 2>&1 && command -v az >/dev/null 2>&1; then
  bash scripts/smbtorture.sh ci
else
  echo "smbtorture (Debian's samba-testsuite) and az (azure-cli) are needed for this step" >&2
  exit 1
fi

section "README recipes: az CLI, Python, JavaScript and Go SDKs, rclone"
bash scripts/recipes.sh

section "all tests passed"
