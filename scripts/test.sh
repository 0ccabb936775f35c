#!/usr/bin/env bash
# Runs every lazuli test: formatting and vet checks, the main module's unit,
# engine-conformance, wire and fuzz-seed tests, and the SDK conformance
# module against both engines.
#
#   scripts/test.sh            # all tests
#   scripts/test.sh quick      # under two minutes: vet, unit tests, an SDK sample
#   LAZULI_TARGETS=all scripts/test.sh   # conformance on all four targets
#
# The full run builds the lazuli binary once for every step that runs it
# (LAZULI_BIN). Steps that mostly wait (smbtorture waits out lease-break
# timeouts) run in the background beside the CPU-bound Go steps, and the
# round trips through other clients (node, az, Python, Chromium, each
# busy on one core at a time) run two at a time; each background step's
# output is printed whole when it ends, with its time.
set -euo pipefail
cd "$(dirname "$0")/.."
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
# section names a step and how long the run has taken so far, so a slow
# step shows in the log.
section() { echo "== $* [${SECONDS}s]"; }
# -trimpath keeps the checkout's directory out of every compiled package,
# so a second clone or worktree reuses the build cache's packages instead
# of compiling the whole tree again (under -race, about 280 s of CPU).
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"

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

# ---- the full run ----
work=$(mktemp -d)
# killtree stops a background step and whatever it started (by id).
killtree() {
  local c
  for c in $(pgrep -P "$1" || true); do killtree "$c"; done
  kill "$1" 2>/dev/null || true
}
declare -A bg_title=() bg_start=() bg_pool=() bg_log=()
pool_running=0
failed=()
cleanup() {
  local p
  for p in "${!bg_title[@]}"; do killtree "$p"; done
  rm -rf "$work"
}
trap cleanup EXIT

# spawn STEP TITLE [pool]: runs the function STEP in the background, its
# output in a log of its own; "pool" counts it among the round trips that
# run two at a time.
spawn() {
  section "$2: started in the background"
  (set -e; "$1") >"$work/$1.log" 2>&1 &
  bg_title[$!]=$2
  bg_log[$!]=$work/$1.log
  bg_start[$!]=$SECONDS
  bg_pool[$!]=${3:-}
  if [ -n "${3:-}" ]; then pool_running=$((pool_running + 1)); fi
}

# reap waits for one background step to end and prints its output and
# time; a failure is remembered and fails the run at the end.
reap() {
  local pid rc=0
  wait -n -p pid "${!bg_title[@]}" || rc=$?
  echo "== ${bg_title[$pid]} [ran from ${bg_start[$pid]}s to ${SECONDS}s: $((SECONDS - bg_start[$pid]))s]"
  cat "${bg_log[$pid]}"
  if [ "$rc" != 0 ]; then
    echo "== FAILED: ${bg_title[$pid]} (exit $rc)"
    failed+=("${bg_title[$pid]}")
  fi
  if [ -n "${bg_pool[$pid]}" ]; then pool_running=$((pool_running - 1)); fi
  unset "bg_title[$pid]" "bg_start[$pid]" "bg_pool[$pid]" "bg_log[$pid]"
}

# start_lazuli LOG FLAGS...: starts $LAZULI_BIN with FLAGS (standard error
# to LOG) as lz_pid and waits for its startup line, which it puts in ready.
start_lazuli() {
  local log=$1
  shift
  "$LAZULI_BIN" "$@" 2>"$log" &
  lz_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$log" && break
    sleep 0.1
  done
  ready=$(grep '^lazuli: blob' "$log" || true)
  [ -n "$ready" ] || { echo "lazuli did not start:"; cat "$log"; return 1; }
}
# addr_of SERVICE: the address the startup line in ready gives SERVICE.
addr_of() { sed -n "s/.* $1 \([^ ]*\).*/\1/p" <<<"$ready"; }
# npm_in DIR: installs the JavaScript packages of DIR.
npm_in() { (cd "$1" && npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null); }

section "build lazuli (used by every step below that runs the binary)"
export LAZULI_BIN="$work/lazuli"
go build -o "$LAZULI_BIN" ./cmd/lazuli

step_smbtorture() {
  # Each listed smb2.* subtest of Samba's protocol test suite must keep
  # passing; scripts/smbtorture.sh compares lazuli with smbd on the whole
  # selection. Most of its time is spent waiting for lease and oplock
  # break timeouts, so it runs beside the Go steps.
  if ! command -v smbtorture >/dev/null 2>&1 || ! command -v az >/dev/null 2>&1; then
    echo "smbtorture (Debian's samba-testsuite) and az (azure-cli) are needed for this step" >&2
    return 1
  fi
  bash scripts/smbtorture.sh ci
}
spawn step_smbtorture "SMB: Samba's smbtorture subtests lazuli passes (scripts/smbtorture-pass.txt)"

section "go vet"
go vet ./...
(cd conformance && go vet ./...)

section "staticcheck"
# Pinned: the release that understands the Go the module asks for.
go run "$STATICCHECK" ./...

# Everything runs under the race detector: concurrency is what lazuli is
# about, and every race test should also be data-race free. -race also
# turns on the compiler's checkptr checks of unsafe.Pointer conversions;
# they stay on for lazuli's code but are off for modernc.org's SQLite,
# which is C translated to Go (pointer arithmetic on nearly every line):
# there they cost about 40% of the CPU of every SQLite-backed test.
race=(-race "-gcflags=modernc.org/...=-d=checkptr=0")
section "main module (race detector on)"
# The metrics test checks the admin listener's scrape with promtool
# (Debian package prometheus), and cmd/lazuli's TestContainerImage builds
# the container image with scripts/image.sh (Debian package umoci) and
# reads its configuration and layer back; here neither may go unchecked.
command -v promtool >/dev/null 2>&1 || { echo "promtool is needed (apt-get install prometheus)" >&2; exit 1; }
command -v umoci >/dev/null 2>&1 || { echo "umoci is needed (apt-get install umoci)" >&2; exit 1; }
# -vet=off here and below: the go vet step has already run all of vet on both modules.
LAZULI_REQUIRE_PROMTOOL=1 LAZULI_REQUIRE_UMOCI=1 go test "${race[@]}" -vet=off -count=1 -timeout 15m ./...

section "h1 against net/http: differential fuzzing (200,000 inputs)"
# h1 and net/http must agree on every request boundary, method, target,
# header field and body, or both refuse; see internal/h1/diff_test.go.
# A count rather than a duration: with Go 1.26 a duration's deadline can
# end the run as a failure while a worker is mid-input (go.dev/issue/75804,
# fixed in Go 1.27). About 15 s at this machine's 13,000-17,000 inputs/s.
go test -count=1 -run '^$' -fuzz '^FuzzDifferential$' -fuzztime 200000x ./internal/h1/

section "SDK conformance (targets: ${LAZULI_TARGETS:-default}; race detector on)"
(cd conformance && go test "${race[@]}" -vet=off -count=1 -timeout 15m ./...)

section "SDK conformance on PostgreSQL: one lazuli, and three lazuli sharing one database"
# The postgres engine's own code runs under the race detector above
# (storagetest, the cluster tests); this pass checks the services on it.
(cd conformance && LAZULI_TARGETS=postgres-tcp,postgres3-tcp go test -vet=off -count=1 -timeout 15m ./blob/... ./queue/... ./table/... ./robustness/... ./security/... ./dfs/...)

section "scale: a queue of 1,000,000 messages and a table of 1,000,000 entities, both engines"
# These are Go benchmarks that also check correctness (counts, order,
# every lookup answered); they print p50/p99 latencies and rates.
go test -count=1 -run '^$' -bench 'BenchmarkMillionMessageQueue' -benchtime 500x -timeout 20m ./internal/queue/
go test -count=1 -run '^$' -bench 'BenchmarkTable1M' -benchtime 500x -timeout 20m ./internal/table/

# The round trips through other clients, each with a lazuli of its own.

step_js() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "node and npm are needed for this step" >&2; return 1; }
  d=$(mktemp -d) # not local: the EXIT trap reads it after the function returns
  trap 'kill "${lz_pid:-}" 2>/dev/null || true; rm -rf "$d"' EXIT
  # An extra account whose key is not strict base64, as scripts written
  # for the reference emulator carry, and one that keeps blob versions
  # (version-level immutability needs them).
  local wkey
  wkey=$(printf 'lazuli worm test account key, not a secret, 64 bytes long!!!!!!!' | base64 -w0)
  AZURITE_ACCOUNTS="jslenient:password123;jsworm:$wkey" start_lazuli "$d/log" --inMemoryPersistence --silent \
    --blobVersioningAccounts jsworm --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0 --webPort 0
  local blob="http://$(addr_of blob)/devstoreaccount1"
  npm_in conformance/table/js
  (cd conformance/table/js && LAZULI_TABLE_URL="http://$(addr_of table)/devstoreaccount1" node roundtrip.mjs)
  # Blob: batch framing, append-blob seal, CRC-64 uploads, round trips.
  npm_in conformance/blob/js
  (cd conformance/blob/js && LAZULI_BLOB_URL=$blob LAZULI_LENIENT_ACCOUNT="jslenient:password123" node blob.mjs &&
    LAZULI_BLOB_URL=$blob node softdelete.mjs &&
    LAZULI_BLOB_URL="http://$(addr_of blob)/jsworm" LAZULI_ACCOUNT=jsworm LAZULI_KEY="$wkey" node immutability.mjs &&
    LAZULI_BLOB_URL=$blob LAZULI_WEB_URL="http://$(addr_of web)/devstoreaccount1" node website.mjs)
  npm_in conformance/queue/js
  (cd conformance/queue/js && LAZULI_QUEUE_URL="http://$(addr_of queue)/devstoreaccount1" node queue.mjs)
}

step_dfs() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1 || ! command -v az >/dev/null 2>&1 ||
    ! command -v openssl >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import azure.storage.filedatalake' 2>/dev/null; then
    echo "node, npm, az (Debian's azure-cli), openssl and Debian's python3-azure are needed for this step" >&2
    return 1
  fi
  d=$(mktemp -d) # not local: the EXIT trap reads it after the function returns
  trap 'kill "${lz_pid:-}" 2>/dev/null || true; rm -rf "$d"' EXIT
  start_lazuli "$d/log" --inMemoryPersistence --silent --hierarchicalNamespace --blobPort 0 --queuePort 0 --tablePort 0 \
    --filePort 0 --smbPort 0 --adminPort 0
  local url="http://$(addr_of blob)/devstoreaccount1"
  npm_in conformance/dfs/js
  (cd conformance/dfs/js && LAZULI_BLOB_URL=$url node dfs.mjs && LAZULI_BLOB_URL=$url node blobapi.mjs &&
    LAZULI_BLOB_URL=$url node move.mjs && LAZULI_BLOB_URL=$url node softdelete.mjs)
  LAZULI_BLOB_URL=$url /usr/bin/python3 conformance/dfs/python/dfs.py
  conformance/dfs/az/roundtrip.sh "$url"
  kill "$lz_pid"
  # ACL enforcement needs OAuth, which lazuli serves over HTTPS only.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$d/key.pem" -out "$d/cert.pem" 2>/dev/null
  start_lazuli "$d/log2" --inMemoryPersistence --silent --hierarchicalNamespace --oauth basic --cert "$d/cert.pem" \
    --key "$d/key.pem" --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0
  (cd conformance/dfs/js && NODE_EXTRA_CA_CERTS="$d/cert.pem" LAZULI_BLOB_URL="https://$(addr_of blob)/devstoreaccount1" node acl.mjs)
  REQUESTS_CA_BUNDLE="$d/cert.pem" LAZULI_BLOB_URL="https://$(addr_of blob)/devstoreaccount1" /usr/bin/python3 conformance/dfs/python/acl.py
}

step_file() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1 || ! command -v az >/dev/null 2>&1; then
    echo "node, npm and az (Debian's azure-cli) are needed for this step" >&2
    return 1
  fi
  d=$(mktemp -d) # not local: the EXIT trap reads it after the function returns
  trap 'kill "${lz_pid:-}" 2>/dev/null || true; rm -rf "$d"' EXIT
  start_lazuli "$d/log" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0
  local url="http://$(addr_of file)/devstoreaccount1"
  npm_in conformance/file/js
  (cd conformance/file/js && LAZULI_FILE_URL=$url node roundtrip.mjs)
  conformance/file/az/roundtrip.sh "$url"
}

step_blob_az() {
  command -v az >/dev/null 2>&1 && /usr/bin/python3 -c 'import azure.storage.blob' 2>/dev/null ||
    { echo "az (Debian's azure-cli) and Debian's python3-azure are needed for this step" >&2; return 1; }
  local vkey
  d=$(mktemp -d) # not local: the EXIT trap reads it after the function returns
  trap 'kill "${lz_pid:-}" 2>/dev/null || true; rm -rf "$d"' EXIT
  # A second account keeps versions; the development account soft-deletes.
  vkey=$(printf 'lazuli versions test account key, not a secret, 64 bytes long!!' | base64 -w0)
  AZURITE_ACCOUNTS="azversions:$vkey" start_lazuli "$d/log" --inMemoryPersistence --silent --blobVersioningAccounts azversions \
    --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0
  conformance/blob/az/protect.sh "http://$(addr_of blob)" "azversions:$vkey"
}

step_console() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1 ||
    ! command -v smbclient >/dev/null 2>&1; then
    echo "node, npm, chromium and smbclient are needed for this step" >&2
    return 1
  fi
  local auth_account ready1 auth_admin auth_blob
  d=$(mktemp -d) # not local: the EXIT trap reads it after the function returns
  trap 'kill "${lz_pid:-}" "${lz1_pid:-}" 2>/dev/null || true; rm -rf "$d"' EXIT
  start_lazuli "$d/log" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 --filePort 0 --smbPort 0 --adminPort 0
  lz1_pid=$lz_pid
  ready1=$ready
  [ -n "$(addr_of admin)" ] || { echo "lazuli did not start with an admin listener:"; cat "$d/log"; return 1; }
  # A second lazuli whose admin listener is bound beyond loopback, so that
  # it asks for an account and its key.
  auth_account="consoleuser:$(printf 'console user key, 32 bytes long!' | base64)"
  AZURITE_ACCOUNTS="$auth_account" start_lazuli "$d/log2" --inMemoryPersistence --silent --blobPort 0 --queuePort 0 --tablePort 0 \
    --filePort 0 --smbPort -1 --adminHost 0.0.0.0 --adminPort 0
  auth_admin=$(sed -n 's/.* admin [^ ]*:\([0-9]*\).*/\1/p' <<<"$ready")
  auth_blob=$(addr_of blob)
  [ -n "$auth_admin" ] || { echo "lazuli did not start with an admin listener:"; cat "$d/log2"; return 1; }
  ready=$ready1
  npm_in conformance/console/js
  (cd conformance/console/js &&
    LAZULI_CONSOLE_URL="http://$(addr_of admin)/" LAZULI_BLOB_URL="http://$(addr_of blob)/devstoreaccount1" \
    LAZULI_QUEUE_URL="http://$(addr_of queue)/devstoreaccount1" LAZULI_TABLE_URL="http://$(addr_of table)/devstoreaccount1" \
    LAZULI_FILE_URL="http://$(addr_of file)/devstoreaccount1" LAZULI_SMB_PORT="$(addr_of smb | sed 's/.*://')" \
    LAZULI_CONSOLE_AUTH_URL="http://127.0.0.1:$auth_admin/" LAZULI_CONSOLE_AUTH_ACCOUNT="$auth_account" \
    LAZULI_AUTH_BLOB_URL="http://$auth_blob" node console.mjs)
}

step_import() { bash scripts/azurite-import.sh; }

step_recipes() { bash scripts/recipes.sh; }

# Longest first, two at a time: each keeps about one core busy.
pool() {
  local step title
  while [ $# -gt 0 ]; do
    step=$1 title=$2
    shift 2
    while [ "$pool_running" -ge 2 ]; do reap; done
    spawn "$step" "$title" pool
  done
}
pool \
  step_file "File service: JavaScript SDK (@azure/storage-file-share) and az CLI round trips" \
  step_blob_az "Blob soft delete, versions, immutability and legal holds: az CLI" \
  step_recipes "README recipes: az CLI, Python, JavaScript and Go SDKs, rclone" \
  step_dfs "Data Lake Storage Gen2: JavaScript SDK (@azure/storage-file-datalake), Python (Debian's azure.storage.filedatalake), az storage fs" \
  step_import "import of a data directory the reference emulator wrote (npm azurite, JavaScript SDKs)" \
  step_console "Web console in headless Chromium (playwright-core, Debian's chromium), checked with the JavaScript SDKs" \
  step_js "JavaScript SDKs (@azure/storage-blob, @azure/storage-queue, @azure/data-tables)"
while [ ${#bg_title[@]} -gt 0 ]; do reap; done

if [ ${#failed[@]} -gt 0 ]; then
  section "failed: ${failed[*]}"
  exit 1
fi
section "all tests passed"
