#!/usr/bin/env bash
# Runs Samba's SMB2 protocol test suite (smbtorture, Debian package
# samba-testsuite) on a broad selection of file-server subtests against
# lazuli and against a private smbd set up for Windows clients
# (vfs objects = acl_xattr streams_xattr), side by side, and prints
# pass/fail per subtest and counts per suite for both.
#
#   scripts/smbtorture.sh                 # both servers, the whole selection
#   scripts/smbtorture.sh lazuli          # lazuli only
#   scripts/smbtorture.sh samba           # smbd only
#   scripts/smbtorture.sh ci              # CI: the subtests of
#                                         # scripts/smbtorture-pass.txt against
#                                         # lazuli, one process per suite;
#                                         # fails if any does not pass
#   SMBTORTURE_SUITES="smb2.lock smb2.rename" scripts/smbtorture.sh
#
# Each subtest runs in an smbtorture process of its own, bounded by
# SMBTORTURE_TIMEOUT seconds (default 60; a hang counts as a failure), on a
# fresh share state. smbd needs root (it runs as the system user
# lazulitorture, created when missing, with a private passdb and
# configuration); lazuli runs in memory. Ports: LAZULI_TORTURE_BASE (default
# 27400) and the five above it. Results go to $SMBTORTURE_OUT (default a
# temporary directory): <server>.results holds "pass|fail|skip name" lines
# (names may hold spaces). LAZULI_BIN names a lazuli binary to run instead
# of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/smbd-lib.sh
mode=${1:-both}
base=${LAZULI_TORTURE_BASE:-27400}
limit=${SMBTORTURE_TIMEOUT:-60}
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
account=devstoreaccount1
# Options of every smbtorture run: cn_max_buffer_size is the largest
# CHANGE_NOTIFY buffer the servers take (their MaxTransactSize, 8 MiB for
# both lazuli and smbd), which smb2.notify.valid-req probes one past.
topts=(--option=torture:sharedelay=100000 --option=torture:cn_max_buffer_size=8388608)

# The selection: suites that concern a file server. Subtests of SMB1 and
# of Samba's own internals (kernel oplocks, ctdb, aio delays, benchmarks)
# are left out.
suites=${SMBTORTURE_SUITES:-"smb2.connect smb2.create smb2.read smb2.rw smb2.getinfo smb2.setinfo smb2.dir
smb2.rename smb2.delete-on-close-perms smb2.sharemode smb2.lock smb2.session smb2.compound smb2.compound_find
smb2.compound_async smb2.credits smb2.ioctl smb2.oplock smb2.lease smb2.durable-open smb2.durable-v2-open
smb2.notify smb2.streams smb2.fileid smb2.maximum_allowed smb2.openattr smb2.winattr smb2.sdread smb2.dosmode
smb2.tcon smb2.mkdir smb2.timestamps smb2.set-sparse-ioctl smb2.zero-data-ioctl smb2.check-sharemode smb2.multichannel"}
# Subtests whose own sleeps outlast SMBTORTURE_TIMEOUT on any server get
# three times as long: smb2.notify.mask sleeps 200 ms in each of its 384
# rounds (77 s).
slow='^smb2\.notify\.mask\.'
# Within the suites, what is not a file-server matter.
exclude='^smb2\.ioctl\.(compress_|dup_extents_|bug14788|shadow_copy)|^smb2\.create\.bench|^smb2\.create\.quota-fake-file|^smb2\.timestamps\.(time_t_|delayed-)'

tools="smbtorture az"
[ "$mode" = ci ] || [ "$mode" = lazuli ] || tools="$tools smbd smbpasswd smbclient"
for tool in $tools; do
  command -v "$tool" >/dev/null || { echo "smbtorture.sh: $tool is needed (Debian: samba-testsuite, samba, smbclient, azure-cli)" >&2; exit 1; }
done
out=${SMBTORTURE_OUT:-$(mktemp -d)}
mkdir -p "$out"
tmp=$(mktemp -d)
# smbtorture makes a scratch directory in its base directory (by default
# the current one, the checkout, whose packages the Go tests walk meanwhile).
topts+=(--basedir="$tmp")
chmod 755 "$tmp" # smbd serves a share below it as an unprivileged user
cleanup() {
  [ -n "${lz_pid:-}" ] && kill "$lz_pid" 2>/dev/null
  [ -n "${smbd_pid:-}" ] && kill "$smbd_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# subtests lists the subtests of the selection.
subtests() {
  local all
  all=$(smbtorture --list 2>/dev/null | grep '^smb2\.' | sort -u)
  for s in $suites; do
    grep -F "$s." <<<"$all" | grep -E "^${s//./\\.}\." || true
  done | grep -Ev "$exclude" | awk '!seen[$0]++'
}

start_lazuli() {
  # A binary built already (scripts/test.sh builds one for every step).
  local bin=${LAZULI_BIN:-}
  if [ -z "$bin" ]; then
    go build -o "$tmp/lazuli" ./cmd/lazuli
    bin=$tmp/lazuli
  fi
  "$bin" --inMemoryPersistence --silent --blobPort "$base" --queuePort $((base + 1)) --tablePort $((base + 2)) \
    --filePort $((base + 3)) --smbPort $((base + 4)) --adminPort 0 2>"$tmp/lz.log" &
  lz_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$tmp/lz.log" && break
    sleep 0.1
  done
  grep -q '^lazuli: blob' "$tmp/lz.log" || { echo "lazuli did not start:"; cat "$tmp/lz.log"; exit 1; }
  az storage share create --name torture -o none --connection-string \
    "DefaultEndpointsProtocol=http;AccountName=$account;AccountKey=$key;FileEndpoint=http://127.0.0.1:$((base + 3))/$account;"
}

start_smbd() {
  id lazulitorture >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin lazulitorture
  mkdir -p "$tmp/samba/share"
  chown lazulitorture "$tmp/samba/share"
  smbd_start "$tmp/samba" $((base + 5)) torture lazulitorture "$key" \
    "vfs objects = acl_xattr streams_xattr" "map acl inherit = yes" "store dos attributes = yes" "ea support = yes"
}

# run SERVER PORT USER LIST: runs each subtest of LIST, appending
# "pass|fail|skip name" to $out/SERVER.results.
run() {
  local server=$1 port=$2 user=$3 list=$4 t res t_limit
  : >"$out/$server.results"
  while read -r t; do
    [ -n "$t" ] || continue
    res=fail
    t_limit=$limit
    grep -qE "$slow" <<<"$t" && t_limit=$((limit * 3))
    if timeout "$t_limit" smbtorture "//127.0.0.1/torture" -p "$port" -U "$user%$key" --format=subunit \
      "${topts[@]}" "$t" >"$tmp/one" 2>&1; then
      # A subtest passes when smbtorture reports it (or its only
      # sub-part) a success and nothing failed.
      if grep -q '^success: ' "$tmp/one" && ! grep -qE '^(failure|error): ' "$tmp/one"; then
        res=pass
      fi
    fi
    if grep -qE '^skip: ' "$tmp/one" && ! grep -qE '^(success|failure|error): ' "$tmp/one"; then
      res=skip
    fi
    echo "$res $t" >>"$out/$server.results"
    cp "$tmp/one" "$out/$server.$(tr '/ ' '__' <<<"$t").log"
  done <<<"$list"
}

# counts RESULTS: passed, failed and skipped subtests per suite.
counts() {
  awk '{split($2, p, "."); s = p[1] "." p[2]; n[s]++; r[s, $1]++; n["TOTAL"]++; r["TOTAL", $1]++}
       END {for (s in n) if (s != "TOTAL") printf "%-34s %4d pass %4d fail %4d skip\n", s, r[s, "pass"], r[s, "fail"], r[s, "skip"]
            printf "%-34s %4d pass %4d fail %4d skip (of %d)\n", "TOTAL", r["TOTAL", "pass"], r["TOTAL", "fail"], r["TOTAL", "skip"], n["TOTAL"]}' "$1" |
    sort
}

# azure_features RESULTS: the lines of RESULTS whose subtest is not in
# scripts/smbtorture-not-azure.txt (what Azure Files does not offer).
azure_features() {
  awk 'NR == FNR {if ($0 !~ /^#/ && $0 != "") skip[n++] = $0; next}
       {name = $0; sub(/^[a-z]+ /, "", name)
        for (i = 0; i < n; i++) {
          p = skip[i]
          if (name == p || (substr(p, length(p)) == "." && index(name, p) == 1)) next
        }
        print}' scripts/smbtorture-not-azure.txt "$1"
}

# side RESULTS1 RESULTS2: one line per subtest with both results.
side() {
  awk 'NR == FNR {r = $1; sub(/^[a-z]+ /, ""); a[$0] = r; next}
       {r = $1; sub(/^[a-z]+ /, ""); printf "%-6s %-6s %s\n", a[$0], r, $0}' "$1" "$2"
}

# run_grouped SERVER PORT USER LIST: as run, but one smbtorture process per
# suite runs all the suite's subtests of LIST (CI's budget); a subtest
# passes when its own success line is there. A slow subtest runs in a
# process of its own with a budget of its own: a suite killed at its
# budget loses the output smbtorture had not yet written, so its other
# subtests would count as failed.
run_grouped() {
  local server=$1 port=$2 user=$3 list=$4 group t short budget
  : >"$out/$server.results"
  for group in $(awk -v slow="$slow" '{split($0, p, "."); g = p[1] "." p[2]; if ($0 ~ slow) g = $0; gsub(/ /, "\\040", g); print g}' <<<"$list" | awk '!seen[$0]++'); do
    group=${group//\\040/ }
    if grep -qE "$slow" <<<"$group"; then
      tests=("$group")
      budget=$((limit * 5))
    else
      mapfile -t tests < <(grep -F "$group." <<<"$list" | grep -vE "$slow")
      budget=$((limit * 3))
    fi
    timeout "$budget" smbtorture "//127.0.0.1/torture" -p "$port" -U "$user%$key" --format=subunit \
      "${topts[@]}" "${tests[@]}" >"$tmp/one" 2>&1 || true
    for t in "${tests[@]}"; do
      short=${t##*.}
      if grep -qxF "success: $short" "$tmp/one"; then
        echo "pass $t" >>"$out/$server.results"
      else
        echo "fail $t" >>"$out/$server.results"
        cp "$tmp/one" "$out/$server.$(tr '/ ' '__' <<<"$t").log"
      fi
    done
  done
}

case $mode in
ci)
  list=$(grep -v '^#' scripts/smbtorture-pass.txt | sed '/^$/d')
  start_lazuli
  run_grouped lazuli $((base + 4)) "$account" "$list"
  failed=$(grep -v '^pass ' "$out/lazuli.results" | sed 's/^[a-z]* //' || true)
  if [ -n "$failed" ]; then
    echo "smbtorture subtests lazuli passed before and no longer passes:"
    while read -r t; do
      echo "== $t"
      cat "$out/lazuli.$(tr '/ ' '__' <<<"$t").log"
    done <<<"$failed"
    exit 1
  fi
  echo "smbtorture: lazuli passes all $(wc -l <"$out/lazuli.results") subtests of scripts/smbtorture-pass.txt"
  ;;
both | lazuli | samba)
  list=$(subtests)
  if [ "$mode" != samba ]; then
    start_lazuli
    run lazuli $((base + 4)) "$account" "$list"
  fi
  if [ "$mode" != lazuli ]; then
    start_smbd
    run samba $((base + 5)) lazulitorture "$list"
  fi
  if [ "$mode" = both ]; then
    echo "lazuli samba  subtest"
    side "$out/lazuli.results" "$out/samba.results"
    echo
    echo "lazuli, passed/run per suite:"
    counts "$out/lazuli.results"
    echo
    echo "samba (acl_xattr streams_xattr), passed/run per suite:"
    counts "$out/samba.results"
    echo
    echo "without the subtests of scripts/smbtorture-not-azure.txt (what Azure Files does not offer):"
    azure_features "$out/lazuli.results" >"$tmp/lazuli.azure"
    azure_features "$out/samba.results" >"$tmp/samba.azure"
    echo "lazuli: $(counts "$tmp/lazuli.azure" | grep '^TOTAL')"
    echo "samba:  $(counts "$tmp/samba.azure" | grep '^TOTAL')"
  else
    cat "$out/$mode.results"
    counts "$out/$mode.results"
    azure_features "$out/$mode.results" >"$tmp/$mode.azure"
    echo "without scripts/smbtorture-not-azure.txt: $(counts "$tmp/$mode.azure" | grep '^TOTAL')"
  fi
  echo "results and logs: $out"
  ;;
*)
  echo "usage: $0 [both|lazuli|samba|ci]" >&2
  exit 2
  ;;
esac
