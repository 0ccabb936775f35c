"""POSIX ACLs through Debian's azure.storage.filedatalake against a lazuli
started with --hierarchicalNamespace and --oauth basic over HTTPS
(LAZULI_BLOB_URL; REQUESTS_CA_BUNDLE trusts its certificate): the Shared
Key caller sets and reads ACLs, Set Access Control Recursive changes a
tree, and an OAuth caller (a TokenCredential of our own minting tokens
lazuli accepts) owns what it creates and is refused where the ACLs say
no.

Run with /usr/bin/python3 (Debian's modules load there):
    REQUESTS_CA_BUNDLE=cert.pem LAZULI_BLOB_URL=https://127.0.0.1:10000/devstoreaccount1 /usr/bin/python3 acl.py
"""
import base64
import json
import os
import time

from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.storage.filedatalake import DataLakeServiceClient

URL = os.environ.get("LAZULI_BLOB_URL", "https://127.0.0.1:10000/devstoreaccount1")
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
ALICE = "a11ce000-0000-0000-0000-000000000001"
BOB = "b0b00000-0000-0000-0000-000000000002"


class Token:
    """A TokenCredential minting unsigned Entra ID shaped access tokens
    for oid (lazuli checks issuer, audience and lifetime, not the
    signature)."""

    def __init__(self, oid, **claims):
        self.oid, self.claims = oid, claims

    def get_token(self, *scopes, **kwargs):
        enc = lambda v: base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()
        now = int(time.time())
        claims = {"iss": "https://sts.windows.net/%s/" % TENANT, "aud": "https://storage.azure.com",
                  "oid": self.oid, "tid": TENANT, "nbf": now - 60, "exp": now + 3600, "iat": now - 60}
        claims.update(self.claims)
        jwt = enc({"alg": "RS256", "typ": "JWT"}) + "." + enc(claims) + "." + enc("not checked")
        return AccessToken(jwt, now + 3600)


def refused(fn):
    try:
        fn()
    except HttpResponseError as e:
        assert e.status_code == 403 and e.error_code == "AuthorizationPermissionMismatch", (e.status_code, e.error_code)
        return
    raise AssertionError("not refused")


admin = DataLakeServiceClient(URL, credential={"account_name": "devstoreaccount1", "account_key": KEY})
name = "pyacl%d" % int(time.time() * 1000)
fs = admin.get_file_system_client(name)
fs.create_file_system()

# Set and read back: the ACL as set, the permissions it implies.
root = fs.get_directory_client("/")
root.set_access_control(acl="user::rwx,user:%s:--x,group::r-x,mask::r-x,other::---" % ALICE)
data = fs.create_directory("data")
data.set_access_control(acl="user::rwx,user:%s:rwx,group::r-x,mask::rwx,other::---" % ALICE)
got = data.get_access_control()
assert got["acl"] == "user::rwx,user:%s:rwx,group::r-x,mask::rwx,other::---" % ALICE, got
assert got["permissions"] == "rwxrwx---+", got
fs.create_file("data/report.csv")
fs.create_directory("data/sub")
fs.create_file("data/sub/deep.csv")

# Set Access Control Recursive: every path under data takes bob's entry.
res = data.update_access_control_recursive(acl="user:%s:r-x" % BOB)
assert res.counters.directories_successful == 2 and res.counters.files_successful == 2, res.counters
assert res.counters.failure_count == 0, res.counters
deep = fs.get_file_client("data/sub/deep.csv").get_access_control()
assert "user:%s:r-x" % BOB in deep["acl"].split(","), deep

# An OAuth caller: alice creates in data and owns it; she may not create
# at the root (execute only) nor read the superuser's report.
alice = DataLakeServiceClient(URL, credential=Token(ALICE, unique_name="alice@contoso.com")).get_file_system_client(name)
mine = alice.create_file("data/mine.txt")
# upn=True: the names lazuli learned from the tokens it accepted (here
# unique_name, as a guest's token carries it).
assert fs.get_file_client("data/mine.txt").get_access_control(upn=True)["owner"] == "alice@contoso.com"
assert fs.get_file_client("data/mine.txt").get_access_control()["owner"] == ALICE
assert {p.name: p.owner for p in fs.get_paths("data", upn=True)}["data/mine.txt"] == "alice@contoso.com"
mine.append_data(b"hers", 0, 4)
mine.flush_data(4)
assert mine.get_access_control()["owner"] == ALICE
refused(lambda: alice.create_file("top.txt"))
refused(lambda: alice.get_file_client("data/report.csv").download_file().readall())
# Only the owner changes access control.
refused(lambda: alice.get_file_client("data/report.csv").set_access_control(permissions="rwxrwxrwx"))
mine.set_access_control(permissions="rw-r-----")

# Revoking alice's entry on data shuts her out of what is under it.
data.remove_access_control_recursive(acl="user:%s" % ALICE)
refused(lambda: alice.get_file_client("data/mine.txt").download_file().readall())

fs.delete_file_system()
print("dfs python acl: ok")
