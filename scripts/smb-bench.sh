#!/usr/bin/env bash
# Compares lazuli's SMB server with Samba's smbd, in one run, through
# smbclient: a 256 MiB file put and get, and 1,000 small files put.
# lazuli runs on a data directory (log engine); smbd serves a plain
# directory. Needs root (smbd), smbclient, samba and the az CLI (to create
# the share over REST). Ports: LAZULI_BENCH_BASE (default 32400) and up.
# Each workload runs [rounds] times through each server; medians compared.
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
for tool in smbd smbpasswd smbclient az bc; do
  command -v "$tool" >/dev/null || { echo "smb-bench: $tool is needed (Debian: samba, smbclient, bc; az: the Azure CLI)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'kill ${lz_pid:-} ${smbd_pid:-} 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/lazuli" ./cmd/lazuli
"$tmp/lazuli" --location "$tmp/lz-data" --silent --blobPort "$base" --queuePort $((base + 1)) --tablePort $((base + 2)) \
  --filePort $((base + 3)) --smbPort $((base + 4)) --adminPort 0 2>"$tmp/lz.log" &
lz_pid=$!

smbd_start "$tmp/samba" $((base + 5)) bench root "$key" "force user = root"

for _ in $(seq 1 100); do
  grep -q '^lazuli: blob' "$tmp/lz.log" && break
  sleep 0.1
done
cs="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;FileEndpoint=http://127.0.0.1:$((base + 3))/devstoreaccount1;"
az storage share create --name bench --connection-string "$cs" -o none

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
printf '%-28s %12s %12s %8s   %s\n' workload "lazuli (s)" "smbd (s)" ratio "runs lazuli / smbd"
for w in "put ${big_mib} MiB" "get ${big_mib} MiB" "put ${small} small files"; do
  ls=() ss=()
  for i in $(seq 1 "$rounds"); do
    case $w in
      put*MiB) cmd="put big.bin big.bin" ;;
      get*MiB) cmd="get big.bin big.out; !rm -f big.out" ;;
      *) cmd="mkdir s$i; cd s$i; lcd small; prompt off; mput *" ;;
    esac
    ls+=("$(run lazuli $((base + 4)) "devstoreaccount1%$key" "$cmd" bench)")
    ss+=("$(run smbd $((base + 5)) "root%$key" "$cmd" bench)")
  done
  l=$(median "${ls[@]}") s=$(median "${ss[@]}")
  printf '%-28s %12.2f %12.2f %8.2f   %s / %s\n' "$w" "$l" "$s" "$(echo "$l / $s" | bc -l)" "${ls[*]}" "${ss[*]}"
done
echo "lazuli peak RSS: $(rss $lz_pid) KiB"
