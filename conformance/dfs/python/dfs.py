"""Data Lake Storage Gen2 through Debian's azure.storage.filedatalake
against a lazuli started with --hierarchicalNamespace: several writers
append to one file at their own positions, one flush commits them, and a
directory moves while its files are read back.

Run with /usr/bin/python3 (Debian's modules load there):
    LAZULI_BLOB_URL=http://127.0.0.1:10000/devstoreaccount1 /usr/bin/python3 dfs.py
"""
import os
import sys
import threading
import time

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.filedatalake import DataLakeServiceClient

URL = os.environ.get("LAZULI_BLOB_URL", "http://127.0.0.1:10000/devstoreaccount1")
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

svc = DataLakeServiceClient(URL, credential={"account_name": "devstoreaccount1", "account_key": KEY})
fs = svc.get_file_system_client("pyfs%d" % int(time.time() * 1000))
fs.create_file_system()

# Multi-writer appends: each writer appends its own block at its own
# position; one flush at the end commits them all in order.
f = fs.get_file_client("logs/day1/events.log")
f.create_file()
blocks = [("block-%02d|" % i).encode() * 100 for i in range(16)]
offsets, pos = [], 0
for b in blocks:
    offsets.append(pos)
    pos += len(b)
errors = []


def writer(i):
    try:
        f.append_data(blocks[i], offset=offsets[i], length=len(blocks[i]))
    except Exception as e:  # noqa: BLE001 - reported below
        errors.append(e)


threads = [threading.Thread(target=writer, args=(i,)) for i in range(len(blocks))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
try:
    f.flush_data(pos - 1)
    raise AssertionError("flush short of the end succeeded")
except HttpResponseError as e:
    assert e.error_code == "InvalidFlushPosition", e.error_code
f.flush_data(pos)
assert f.download_file().readall() == b"".join(blocks)

# Access control round trip.
f.set_access_control(owner="ownerid", permissions="rwxr-----")
acl = f.get_access_control()
assert acl["owner"] == "ownerid" and acl["permissions"] == "rwxr-----", acl

# A directory move: the files come along, the old name is gone.
d = fs.get_directory_client("logs")
d.rename_directory(fs.file_system_name + "/archive")
assert fs.get_file_client("archive/day1/events.log").download_file().readall() == b"".join(blocks)
try:
    fs.get_file_client("logs/day1/events.log").get_file_properties()
    raise AssertionError("old name still there")
except ResourceNotFoundError:
    pass

names = sorted(p.name for p in fs.get_paths(recursive=True))
assert names == ["archive", "archive/day1", "archive/day1/events.log"], names
fs.delete_file_system()

# Path - Create with an expiry: an int is milliseconds from now
# (RelativeToNow), a datetime an Absolute time; the file then reads as gone.
import datetime
ex = svc.get_file_system_client("pyexp%d" % int(time.time() * 1000))
ex.create_file_system()
at = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(days=1)
assert ex.create_file("later.txt", expires_on=at).get_file_properties().expiry_time == at
brief = ex.create_file("brief.txt", expires_on=1500)
assert brief.get_file_properties().expiry_time is not None
time.sleep(2.5)
assert not brief.exists()
assert [p.name for p in ex.get_paths()] == ["later.txt"]
ex.delete_file_system()

# Path soft delete: a directory deleted recursively is one deleted path;
# undelete_path sends "<path>?deletionid=<id>" and brings its tree back.
from azure.storage.filedatalake import RetentionPolicy
svc.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=1))
try:
    sd = svc.get_file_system_client("pysd%d" % int(time.time() * 1000))
    sd.create_file_system()
    fx = sd.create_file("old/a/x.txt")
    fx.append_data(b"x", 0, 1)
    fx.flush_data(1)
    sd.get_directory_client("old").delete_directory()
    gone = list(sd.list_deleted_paths())
    assert [p.name for p in gone] == ["old"] and gone[0].deletion_id and gone[0].remaining_retention_days == 1, gone
    back = sd._undelete_path("old", gone[0].deletion_id)
    assert back.get_directory_properties().metadata.get("hdi_isfolder") == "true"
    assert sd.get_file_client("old/a/x.txt").download_file().readall() == b"x"
    assert list(sd.list_deleted_paths()) == []
    sd.delete_file_system()
finally:
    svc.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=False))
print("dfs python: ok")
