# Sourced by scripts that compare lazuli with Samba: starts a private smbd
# that serves one share on 127.0.0.1 only, with its own configuration,
# passdb, state and log under a directory of the caller's. Needs root.
#
#   smbd_start DIR PORT SHARE USER PASSWORD [SHARE-OPTION...]
#
# serves DIR/share as SHARE on PORT, USER logging on with PASSWORD; each
# SHARE-OPTION ("name = value") is added to the share's section. It sets
# smbd_pid and returns once smbclient lists the share.
smbd_start() {
  local d=$1 port=$2 share=$3 user=$4 pass=$5 opt
  shift 5
  mkdir -p "$d"/{private,lock,state,cache,pid,ncalrpc,share}
  {
    cat <<CONF
[global]
  smb ports = $port
  interfaces = lo
  bind interfaces only = yes
  disable netbios = yes
  private dir = $d/private
  lock directory = $d/lock
  state directory = $d/state
  cache directory = $d/cache
  pid directory = $d/pid
  ncalrpc dir = $d/ncalrpc
  log file = $d/smbd.log
  passdb backend = tdbsam:$d/private/passdb.tdb
  map to guest = never
  server min protocol = SMB2_02
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
[$share]
  path = $d/share
  read only = no
CONF
    for opt in "$@"; do echo "  $opt"; done
  } >"$d/smb.conf"
  printf '%s\n%s\n' "$pass" "$pass" | smbpasswd -c "$d/smb.conf" -a -s "$user" >/dev/null
  # In a session of its own: smbd signals its whole process group when it
  # stops, which would otherwise end the caller too.
  setsid smbd --foreground --no-process-group -s "$d/smb.conf" >"$d/smbd.out" 2>&1 &
  smbd_pid=$!
  for _ in $(seq 1 100); do
    smbclient -p "$port" -U "$user%$pass" "//127.0.0.1/$share" -c ls >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "smbd did not start:" >&2
  cat "$d/smbd.out" >&2
  exit 1
}
