// POSIX ACL enforcement through @azure/storage-file-datalake with a token
// credential, against a lazuli started with --hierarchicalNamespace and
// --oauth basic over HTTPS (LAZULI_BLOB_URL; NODE_EXTRA_CA_CERTS trusts its
// certificate). The Shared Key caller is the superuser; a token's oid is
// held to the ACLs and owns what it creates.
import assert from "node:assert/strict";
import { DataLakeServiceClient } from "@azure/storage-file-datalake";
import { cred, rejects, url } from "./common.mjs";

const alice = "a11ce000-0000-0000-0000-000000000001";

// token mints an unsigned Entra ID shaped access token for oid (lazuli
// checks issuer, audience and lifetime, not the signature).
function token(oid, claims = {}) {
  const enc = (v) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const jwt = enc({ alg: "RS256", typ: "JWT" }) + "." + enc({
    iss: "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/", aud: "https://storage.azure.com",
    oid, tid: "72f988bf-86f1-41af-91ab-2d7cd011db47", nbf: now - 60, exp: now + 3600, iat: now - 60, ...claims,
  }) + "." + Buffer.from("not checked").toString("base64url");
  return { getToken: async () => ({ token: jwt, expiresOnTimestamp: (now + 3600) * 1000 }) };
}

const admin = new DataLakeServiceClient(url, cred);
const name = "acl" + Date.now();
const fs = admin.getFileSystemClient(name);
await fs.create();
// The root lets alice through; data is hers to write in.
await fs.getDirectoryClient("").setPermissions({
  owner: { read: true, write: true, execute: true }, group: { read: true, write: false, execute: true },
  other: { read: false, write: false, execute: true }, stickyBit: false, extendedAcls: false,
});
await fs.getDirectoryClient("data").create();
await fs.getDirectoryClient("data").setAccessControl([
  { accessControlType: "user", entityId: "", defaultScope: false, permissions: { read: true, write: true, execute: true } },
  { accessControlType: "user", entityId: alice, defaultScope: false, permissions: { read: true, write: true, execute: true } },
  { accessControlType: "group", entityId: "", defaultScope: false, permissions: { read: true, write: false, execute: true } },
  { accessControlType: "mask", entityId: "", defaultScope: false, permissions: { read: true, write: true, execute: true } },
  { accessControlType: "other", entityId: "", defaultScope: false, permissions: { read: false, write: false, execute: false } },
]);
await fs.getFileClient("data/report.csv").create();

const asAlice = new DataLakeServiceClient(url, token(alice, { upn: "alice@contoso.com" })).getFileSystemClient(name);
await asAlice.getFileClient("data/a.txt").create();
assert.equal((await asAlice.getFileClient("data/a.txt").getAccessControl()).owner, alice);
// upn=true: the user ids lazuli has learned from accepted tokens come
// back as the names the tokens carried; group entries and ids it has not
// learned as stored.
assert.equal((await fs.getFileClient("data/a.txt").getAccessControl({ userPrincipalName: true })).owner, "alice@contoso.com");
const named = await fs.getDirectoryClient("data").getAccessControl({ userPrincipalName: true });
assert.ok(named.acl.some((e) => e.accessControlType === "user" && e.entityId === "alice@contoso.com"), JSON.stringify(named.acl));
assert.ok(!named.acl.some((e) => e.entityId === alice));
const listed = new Map();
for await (const p of fs.listPaths({ path: "data", userPrincipalName: true })) listed.set(p.name, p.owner);
assert.equal(listed.get("data/a.txt"), "alice@contoso.com");
assert.equal(listed.get("data/report.csv"), "$superuser");
for await (const p of fs.listPaths({ path: "data" })) if (p.name === "data/a.txt") assert.equal(p.owner, alice);
await rejects(asAlice.getFileClient("top.txt").create(), 403, "AuthorizationPermissionMismatch");
await rejects(asAlice.getFileClient("data/report.csv").read(), 403, "AuthorizationPermissionMismatch");
// Only the owner changes permissions.
await rejects(asAlice.getFileClient("data/report.csv").setPermissions({
  owner: { read: true, write: true, execute: false }, group: { read: true, write: true, execute: false },
  other: { read: true, write: true, execute: false }, stickyBit: false, extendedAcls: false,
}), 403, "AuthorizationPermissionMismatch");

// A recursive change fails on what alice does not own (data and
// report.csv), and goes on past them with continueOnFailure.
const rec = await asAlice.getDirectoryClient("data").setAccessControlRecursive([
  { accessControlType: "user", entityId: "", defaultScope: false, permissions: { read: true, write: true, execute: true } },
  { accessControlType: "group", entityId: "", defaultScope: false, permissions: { read: true, write: false, execute: false } },
  { accessControlType: "other", entityId: "", defaultScope: false, permissions: { read: false, write: false, execute: false } },
], { continueOnFailure: true });
assert.deepEqual(rec.counters, { changedDirectoriesCount: 0, changedFilesCount: 1, failedChangesCount: 2 });

await fs.delete();
console.log("dfs acl js: ok");
