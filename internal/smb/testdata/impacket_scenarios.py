"""Share-mode, delete-pending and byte-range lock scenarios driven with
impacket against an SMB server. Usage:
  impacket_scenarios.py HOST PORT SHARE USER KEY
Prints one line per check: "ok NAME" or "FAIL NAME: detail"."""
import sys
import threading
import time

from impacket.smbconnection import SMBConnection, SessionError
from impacket import smb3
from impacket import smb3structs as s3
from impacket.nt_errors import STATUS_SUCCESS, ERROR_MESSAGES

host, port, share, user, key = sys.argv[1:6]
port = int(port)

READ = s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES
WRITE = s3.FILE_WRITE_DATA | s3.FILE_READ_ATTRIBUTES
DELETE = s3.DELETE | s3.FILE_READ_ATTRIBUTES
SR, SW, SD = s3.FILE_SHARE_READ, s3.FILE_SHARE_WRITE, s3.FILE_SHARE_DELETE
failures = 0


def connect():
    # SMB 3.0: impacket's NTLM logon on 3.1.1 starts the session's
    # pre-auth hash from zeros instead of the connection's hash (MS-SMB2
    # 3.2.5.2), so its signing key differs from the one the specification
    # (and Samba's smbclient, tested on 3.1.1) derives.
    c = SMBConnection(host, host, sess_port=port, preferredDialect=s3.SMB2_DIALECT_30)
    c.login(user, key, "AZURE")
    return c, c.connectTree(share)


def status_of(fn):
    try:
        fn()
        return "STATUS_SUCCESS"
    except (SessionError, smb3.SessionError) as e:
        code = e.getErrorCode() if hasattr(e, "getErrorCode") else e.get_error_code()
        return ERROR_MESSAGES[code][0]


def check(name, got, want):
    global failures
    if got == want:
        print("ok", name)
    else:
        failures += 1
        print("FAIL %s: got %s, want %s" % (name, got, want))


def open_(c, t, path, access, share_mode, disp=s3.FILE_OPEN_IF, opts=s3.FILE_NON_DIRECTORY_FILE):
    return c.createFile(t, path, desiredAccess=access, shareMode=share_mode, creationOption=opts,
                        creationDisposition=disp)


def lock(c, t, fid, off, n, flags):
    smb = c.getSMBServer()
    packet = smb.SMB_PACKET()
    packet['Command'] = s3.SMB2_LOCK
    packet['TreeID'] = t
    req = s3.SMB2Lock()
    req['FileID'] = fid
    req['LockCount'] = 1
    req['LockSequence'] = 0
    el = s3.SMB2_LOCK_ELEMENT()
    el['Offset'] = off
    el['Length'] = n
    el['Flags'] = flags
    el['Reserved'] = 0
    req['Locks'] = el.getData()
    packet['Data'] = req
    ans = smb.recvSMB(smb.sendSMB(packet))
    ans.isValidAnswer(STATUS_SUCCESS)


a, ta = connect()
b, tb = connect()

# Share modes: the examples of the Windows share-access rules.
for name, (acc1, sh1, acc2, sh2, want) in {
    "read-sharewrite then write-shareread": (READ, SW, WRITE, SR, "STATUS_SUCCESS"),
    "write-shareread then write-sharewrite": (WRITE, SR, WRITE, SW, "STATUS_SHARING_VIOLATION"),
    "write-sharewrite then write-shareread": (WRITE, SW, WRITE, SR, "STATUS_SHARING_VIOLATION"),
    "read-shareread then read-shareread": (READ, SR, READ, SR, "STATUS_SUCCESS"),
    "read-sharenone then read-shareall": (READ, 0, READ, SR | SW | SD, "STATUS_SHARING_VIOLATION"),
    "attributes-only open never conflicts": (READ, 0, s3.FILE_READ_ATTRIBUTES, 0, "STATUS_SUCCESS"),
    "delete-shareall then delete-sharedelete": (DELETE, SR | SW | SD, DELETE, SD, "STATUS_SUCCESS"),
}.items():
    path = "sm-%d.txt" % abs(hash(name))
    f1 = open_(a, ta, path, acc1, sh1)
    got = status_of(lambda: b.closeFile(tb, open_(b, tb, path, acc2, sh2)))
    check("share mode: " + name, got, want)
    a.closeFile(ta, f1)

# Delete pending: while the delete-on-close handle is open, new opens get
# STATUS_DELETE_PENDING; after its close, the file is gone.
f1 = open_(a, ta, "dp.txt", DELETE | READ, SR | SW | SD, opts=s3.FILE_NON_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE)
a.closeFile(ta, f1)
check("delete-on-close removes the file", status_of(lambda: open_(b, tb, "dp.txt", READ, SR, disp=s3.FILE_OPEN)),
      "STATUS_OBJECT_NAME_NOT_FOUND")
f1 = open_(a, ta, "dp2.txt", DELETE | READ, SR | SW | SD)
a.getSMBServer().setInfo(ta, f1, b"\x01", s3.SMB2_0_INFO_FILE, s3.SMB2_FILE_DISPOSITION_INFO)
check("open of a delete-pending file", status_of(lambda: open_(b, tb, "dp2.txt", READ, SR | SW | SD, disp=s3.FILE_OPEN)),
      "STATUS_DELETE_PENDING")
a.closeFile(ta, f1)
check("delete-pending file gone after last close",
      status_of(lambda: open_(b, tb, "dp2.txt", READ, SR, disp=s3.FILE_OPEN)), "STATUS_OBJECT_NAME_NOT_FOUND")

# Byte-range locks.
fa = open_(a, ta, "lk.txt", READ | WRITE, SR | SW)
a.writeFile(ta, fa, b"x" * 100)
fb = open_(b, tb, "lk.txt", READ | WRITE, SR | SW)
lock(a, ta, fa, 10, 10, s3.SMB2_LOCKFLAG_EXCLUSIVE_LOCK | s3.SMB2_LOCKFLAG_FAIL_IMMEDIATELY)
check("write into another open's exclusive range", status_of(lambda: b.writeFile(tb, fb, b"y", 15)),
      "STATUS_FILE_LOCK_CONFLICT")
check("read inside another open's exclusive range", status_of(lambda: b.readFile(tb, fb, 12, 4)),
      "STATUS_FILE_LOCK_CONFLICT")
check("write outside the range", status_of(lambda: b.writeFile(tb, fb, b"y", 50)), "STATUS_SUCCESS")
check("conflicting lock, fail immediately",
      status_of(lambda: lock(b, tb, fb, 15, 1, s3.SMB2_LOCKFLAG_SHARED_LOCK | s3.SMB2_LOCKFLAG_FAIL_IMMEDIATELY)),
      "STATUS_LOCK_NOT_GRANTED")
result = {}


def waiter():
    result["status"] = status_of(lambda: lock(b, tb, fb, 15, 1, s3.SMB2_LOCKFLAG_EXCLUSIVE_LOCK))
    result["at"] = time.time()


th = threading.Thread(target=waiter)
th.start()
time.sleep(0.5)
released = time.time()
lock(a, ta, fa, 10, 10, s3.SMB2_LOCKFLAG_UNLOCK)
th.join(10)
check("waiting lock granted after unlock", result.get("status"), "STATUS_SUCCESS")
check("waiting lock waited for the unlock", result.get("at", 0) >= released, True)
check("unlock of a range not locked", status_of(lambda: lock(a, ta, fa, 10, 10, s3.SMB2_LOCKFLAG_UNLOCK)),
      "STATUS_RANGE_NOT_LOCKED")
a.closeFile(ta, fa)
b.closeFile(tb, fb)

# A dropped connection releases its opens at once.
c, tc = connect()
open_(c, tc, "drop.txt", READ | WRITE, 0)
c.getSMBServer().get_socket().close()
time.sleep(0.3)
check("handles released on disconnect", status_of(lambda: b.closeFile(tb, open_(b, tb, "drop.txt", READ, SR))),
      "STATUS_SUCCESS")
sys.exit(1 if failures else 0)
