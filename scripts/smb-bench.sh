#!/usr/bin/env bash
# Compares lazuli's SMB server with Samba's smbd, in one run, through
# smbclient: a 256 MiB file put and get, and 1,000 small files put.
# Servers, like for like by durability:
#   - lazuli on a data directory (log engine), durable (its default: a
#     WRITE or CREATE is answered once on disk), against an smbd made as
#     durable ("strict sync = yes", "sync always = yes": every write is
#     fsynced before it is answered);
#   - lazuli with --sync=false against smbd as configured by default,
#     which answers writes before they reach the disk.
# For the durable lazuli it also reports the time its log's fsyncs took
# within each call (lazuli_engine_fsync_seconds_total on its admin
# listener), and it times the disk's own durable write of the big file
# (dd conv=fdatasync): no durable put can take less. Needs root (smbd),
# smbclient, samba, curl and the az CLI (to create the shares over REST).
# Ports: LAZULI_BENCH_BASE (default 32400) and the 15 after it.
# Each workload runs [rounds] times through each server, alternating;
# medians compared.
#
#   scripts/smb-bench.sh [big MiB (256)] [small files (1000)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/smbd-lib.sh
big_mib=${1:-256}
small=${2:-1000}
rounds=${3:-3}
base=${LAZULI_BENCH_BASE:-32400}
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
for tool in smbd smbpasswd smbclient az bc curl; do
  command -v "$tool" >/dev/null || { echo "smb-bench: $tool is needed (Debian: samba, smbclient, bc; az: the Azure CLI)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'kill ${lz_pid:-} ${ns_pid:-} ${smbd_pid:-} ${sync_pid:-} 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/lazuli" ./cmd/lazuli
# lazuli LOG BASE FLAGS...: starts lazuli on ports BASE..BASE+5 (SMB at
# BASE+4, admin at BASE+5) and creates the share over REST.
lazuli() {
  local log=$1 p=$2
  shift 2
  "$tmp/lazuli" --location "$tmp/$log-data" --silent --blobPort "$p" --queuePort $((p + 1)) --tablePort $((p + 2)) \
    --filePort $((p + 3)) --smbPort $((p + 4)) --adminPort $((p + 5)) "$@" 2>"$tmp/$log.log" &
  pid=$!
  for _ in $(seq 1 100); do
    grep -q '^lazuli: blob' "$tmp/$log.log" && break
    sleep 0.1
  done
  az storage share create --name bench -o none --connection-string \
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;FileEndpoint=http://127.0.0.1:$((p + 3))/devstoreaccount1;"
}
lazuli lz "$base"
lz_pid=$pid
lazuli ns $((base + 8)) --sync=false
ns_pid=$pid
smbd_start "$tmp/samba-sync" $((base + 7)) bench root "$key" "force user = root" "strict sync = yes" "sync always = yes"
sync_pid=$smbd_pid
smbd_start "$tmp/samba" $((base + 6)) bench root "$key" "force user = root"

# fsync_seconds: the durable lazuli's fsync time so far.
fsync_seconds() {
  curl -s "http://127.0.0.1:$((base + 5))/metrics" | awk '$1 == "lazuli_engine_fsync_seconds_total" {print $2}'
}

head -c $((big_mib << 20)) /dev/urandom >"$tmp/big.bin"
mkdir "$tmp/small"
for i in $(seq 1 "$small"); do head -c 4096 /dev/urandom >"$tmp/small/f$i"; done
sleep 1

# run NAME PORT USER COMMANDS: prints the wall time of one smbclient call.
# Each call starts with the page cache written back (sync): smbd acknowledges
# writes before they reach the disk, and without it the kernel's writeback
# of its 256 MiB put landed in the next timed call, lazuli's get (measured:
# 0.6-1.0 s after an smbd put against 0.46-0.49 s after a sync).
run() {
  local start end
  sync
  start=$(date +%s.%N)
  (cd "$tmp" && smbclient "//127.0.0.1/$5" -p "$2" -U "$3" -m SMB3 -c "$4" >"$tmp/out.$1" 2>&1) ||
    { echo "$1 failed:"; cat "$tmp/out.$1"; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

rss() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }

# median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# Each workload runs $rounds times through each server, alternating, and the
# medians are compared: on a shared machine one run of each is mostly noise.
# Columns: the durable lazuli, the fsync time within it, the durable smbd
# and the ratio of the two; lazuli with --sync=false, smbd as by default
# and the ratio of the two; and the durable lazuli less its fsync time
# against the default smbd.
printf '%-24s %8s %8s %9s %8s %8s %8s %8s %9s\n' workload lazuli fsync smbd-sync "lz/sync" nosync smbd "ns/smbd" "-fsync/smbd"
for w in "put ${big_mib} MiB" "get ${big_mib} MiB" "put ${small} small files"; do
  ls=() fs=() ys=() ns=() ss=()
  for i in $(seq 1 "$rounds"); do
    case $w in
      put*MiB) cmd="put big.bin big.bin" ;;
      get*MiB) cmd="get big.bin big.out; !rm -f big.out" ;;
      *) cmd="mkdir s$i; cd s$i; lcd small; prompt off; mput *" ;;
    esac
    f0=$(fsync_seconds)
    ls+=("$(run lazuli $((base + 4)) "devstoreaccount1%$key" "$cmd" bench)")
    fs+=("$(echo "$(fsync_seconds) - $f0" | bc -l)")
    ys+=("$(run smbd-sync $((base + 7)) "root%$key" "$cmd" bench)")
    ns+=("$(run nosync $((base + 12)) "devstoreaccount1%$key" "$cmd" bench)")
    ss+=("$(run smbd $((base + 6)) "root%$key" "$cmd" bench)")
  done
  l=$(median "${ls[@]}") f=$(median "${fs[@]}") y=$(median "${ys[@]}") n=$(median "${ns[@]}") s=$(median "${ss[@]}")
  # lazuli's own time: each round's time less its own fsync time.
  own=()
  for j in "${!ls[@]}"; do own+=("$(echo "${ls[$j]} - ${fs[$j]}" | bc -l)"); done
  o=$(median "${own[@]}")
  printf '%-24s %8.2f %8.2f %9.2f %8.2f %8.2f %8.2f %8.2f %9.2f\n' "$w" "$l" "$f" "$y" \
    "$(echo "$l / $y" | bc -l)" "$n" "$s" "$(echo "$n / $s" | bc -l)" "$(echo "$o / $s" | bc -l)"
  echo "  runs lazuli ${ls[*]}; fsync ${fs[*]}; smbd-sync ${ys[*]}; nosync ${ns[*]}; smbd ${ss[*]}"
done
# The disk's own durable write of the big file on lazuli's filesystem, in
# the same run: no durable put can take less.
ds=()
for _ in $(seq 1 "$rounds"); do
  sync
  start=$(date +%s.%N)
  dd if="$tmp/big.bin" of="$tmp/lz-data/dd.bin" bs=1M conv=fdatasync status=none
  end=$(date +%s.%N)
  rm -f "$tmp/lz-data/dd.bin"
  ds+=("$(echo "$end - $start" | bc -l)")
done
printf 'disk: dd of %d MiB with conv=fdatasync on the data directory: %.2f s (median of %s)\n' "$big_mib" "$(median "${ds[@]}")" "${ds[*]}"
echo "lazuli peak RSS: $(rss $lz_pid) KiB (durable), $(rss $ns_pid) KiB (--sync=false)"
