// Data Lake Storage Gen2 through @azure/storage-file-datalake, against a
// lazuli started with --hierarchicalNamespace. Every step asserts what
// Azure answers; the Blob SDK checks that both APIs share one namespace.
import assert from "node:assert/strict";
import { DataLakeDirectoryClient, DataLakeFileClient, DataLakeSASPermissions, DataLakeServiceClient } from "@azure/storage-file-datalake";
import { BlobServiceClient } from "@azure/storage-blob";
import { cred, rejects, url } from "./common.mjs";

const dfs = new DataLakeServiceClient(url, cred);
const blobs = new BlobServiceClient(url, cred);

const name = "fs" + Date.now();
const fs = dfs.getFileSystemClient(name);
await fs.create();

// Directories and files; missing parents are made.
const dir = fs.getDirectoryClient("top/sub");
await dir.create();
assert.equal(await fs.getDirectoryClient("top").exists(), true);
const file = fs.getFileClient("top/sub/data.txt");
await file.create();

// Appends land at their positions; a flush commits them.
const part1 = Buffer.from("hello, ");
const part2 = Buffer.from("data lake");
await file.append(part2, part1.length, part2.length);
await file.append(part1, 0, part1.length);
await rejects(file.flush(3), 400, "InvalidFlushPosition");
await file.flush(part1.length + part2.length);
const got = await file.readToBuffer();
assert.equal(got.toString(), "hello, data lake");

// Ranged read.
const r = await file.read(7, 4);
assert.equal((await streamToString(r.readableStreamBody)), "data");

// Properties: directory flag, metadata.
const props = await dir.getProperties();
assert.equal(props.metadata.hdi_isfolder, "true");
await file.setMetadata({ team: "lake" });
assert.equal((await file.getProperties()).metadata.team, "lake");

// Access control is stored and returned.
await file.setAccessControl([
  { accessControlType: "user", entityId: "", defaultScope: false, permissions: { read: true, write: true, execute: false } },
  { accessControlType: "group", entityId: "", defaultScope: false, permissions: { read: true, write: false, execute: false } },
  { accessControlType: "other", entityId: "", defaultScope: false, permissions: { read: false, write: false, execute: false } },
]);
const acl = await file.getAccessControl();
assert.equal(acl.owner, "$superuser");
assert.equal(acl.acl.length, 3);
await file.setPermissions({
  owner: { read: true, write: true, execute: true },
  group: { read: true, write: false, execute: true },
  other: { read: false, write: false, execute: false },
  stickyBit: false, extendedAcls: false,
});
const acl2 = await file.getAccessControl();
assert.equal(acl2.permissions.owner.execute, true);
assert.equal(acl2.permissions.group.write, false);

// Blob API sees the same namespace, with the directory records.
const cont = blobs.getContainerClient(name);
const names = [];
for await (const b of cont.listBlobsFlat({ includeMetadata: true })) names.push(b.name + (b.metadata?.hdi_isfolder ? "/" : ""));
assert.deepEqual(names, ["top/", "top/sub/", "top/sub/data.txt"]);
// And a blob written through Blob is a file to dfs.
await cont.getBlockBlobClient("top/sub/from-blob.txt").upload("xyz", 3);
assert.equal((await fs.getFileClient("top/sub/from-blob.txt").readToBuffer()).toString(), "xyz");

// Listing paths, recursive and not, with continuation.
const all = [];
for await (const p of fs.listPaths({ recursive: true })) all.push(p.name + (p.isDirectory ? "/" : ""));
assert.deepEqual(all.sort(), ["top/", "top/sub/", "top/sub/data.txt", "top/sub/from-blob.txt"]);
const top = [];
for await (const p of fs.listPaths({ recursive: false })) top.push(p.name);
assert.deepEqual(top, ["top"]);
const paged = [];
for await (const page of fs.listPaths({ recursive: true }).byPage({ maxPageSize: 1 })) {
  for (const p of page.pathItems ?? []) paged.push(p.name);
}
assert.deepEqual(paged.sort(), ["top", "top/sub", "top/sub/data.txt", "top/sub/from-blob.txt"]);

// Rename a directory: everything moves at once, the source is gone.
await fs.getDirectoryClient("dest").create();
await dir.move("dest/moved");
assert.equal(await fs.getDirectoryClient("top/sub").exists(), false);
assert.equal((await fs.getFileClient("dest/moved/data.txt").readToBuffer()).toString(), "hello, data lake");
assert.equal((await fs.getFileClient("dest/moved/from-blob.txt").readToBuffer()).toString(), "xyz");
await rejects(fs.getDirectoryClient("nowhere").move("dest/x"), 404, "SourcePathNotFound");
await rejects(fs.getDirectoryClient("dest/moved").move("missing/parent/x"), 404, "RenameDestinationParentPathNotFound");

// File rename with a destination condition.
const f2 = fs.getFileClient("dest/moved/data.txt");
await f2.move("dest/renamed.txt");
assert.equal((await fs.getFileClient("dest/renamed.txt").readToBuffer()).toString(), "hello, data lake");
await fs.getFileClient("dest/other.txt").create();
await rejects(fs.getFileClient("dest/other.txt").move("dest/renamed.txt", { destinationConditions: { ifNoneMatch: "*" } }), 409, "PathAlreadyExists");

// Set Access Control Recursive, in batches of two paths.
const rec = await fs.getDirectoryClient("dest").setAccessControlRecursive([
  { accessControlType: "user", entityId: "", defaultScope: false, permissions: { read: true, write: true, execute: true } },
  { accessControlType: "user", entityId: "oid-5", defaultScope: false, permissions: { read: true, write: false, execute: true } },
  { accessControlType: "group", entityId: "", defaultScope: false, permissions: { read: true, write: false, execute: true } },
  { accessControlType: "mask", entityId: "", defaultScope: false, permissions: { read: true, write: false, execute: true } },
  { accessControlType: "other", entityId: "", defaultScope: false, permissions: { read: false, write: false, execute: false } },
], { batchSize: 2 });
assert.deepEqual(rec.counters, { changedDirectoriesCount: 2, changedFilesCount: 3, failedChangesCount: 0 });
const named = (await fs.getFileClient("dest/other.txt").getAccessControl()).acl.find((e) => e.entityId === "oid-5");
assert.equal(named?.permissions.execute, true);
await fs.getDirectoryClient("dest").removeAccessControlRecursive([
  { accessControlType: "user", entityId: "oid-5", defaultScope: false },
]);
assert.equal((await fs.getFileClient("dest/other.txt").getAccessControl()).acl.length, 4);

// A directory SAS (sr=d, sdd) reaches the paths under its directory only.
const sasUrl = await fs.getDirectoryClient("dest").generateSasUrl({
  permissions: DataLakeSASPermissions.parse("rcw"),
  expiresOn: new Date(Date.now() + 3600_000),
});
assert.match(sasUrl, /sr=d&/);
assert.match(sasUrl, /sdd=1/);
const viaSas = new DataLakeDirectoryClient(sasUrl);
await viaSas.getFileClient("by-sas.txt").create();
const outside = new DataLakeFileClient(sasUrl.replace("/dest?", "/elsewhere.txt?"));
await rejects(outside.create(), 403, "AuthenticationFailed");
// The rename source is authorized too: the SAS of "dest" cannot move a
// path in from outside its directory.
await fs.getFileClient("outside-src.txt").create();
const outsideSrc = new DataLakeFileClient(sasUrl.replace("/dest?", "/outside-src.txt?"));
await rejects(outsideSrc.move("dest/moved-in.txt"), 403, "AuthenticationFailed");
assert.ok(await fs.getFileClient("outside-src.txt").exists());
assert.ok(!(await fs.getFileClient("dest/moved-in.txt").exists()));

// Leases guard paths.
const lc = fs.getFileClient("dest/renamed.txt").getDataLakeLeaseClient();
const lease = await lc.acquireLease(15);
assert.ok(lease.leaseId);
await rejects(fs.getFileClient("dest/renamed.txt").delete(), 412, "LeaseIdMissing");
await lc.releaseLease();

// Deleting a non-empty directory needs recursive.
await rejects(fs.getDirectoryClient("dest").delete(false), 409, "DirectoryNotEmpty");
await fs.getDirectoryClient("dest").delete(true);
assert.equal(await fs.getDirectoryClient("dest").exists(), false);

// An encryption context given at create comes back on getProperties,
// read and listPaths (files only) and survives appends and a flush; an
// upload makes the file anew with the context it is given.
const ecFile = fs.getFileClient("ec/data.bin");
await ecFile.create({ encryptionContext: "tenant-7/key-1" });
await ecFile.append(Buffer.from("payload"), 0, 7);
await ecFile.flush(7);
assert.equal((await ecFile.getProperties()).encryptionContext, "tenant-7/key-1");
await ecFile.upload(Buffer.from("payload"), { encryptionContext: "tenant-7/key-3" });
assert.equal((await ecFile.getProperties()).encryptionContext, "tenant-7/key-3");
const ecRead = await ecFile.read();
assert.equal(ecRead.encryptionContext, "tenant-7/key-3");
assert.equal(await streamToString(ecRead.readableStreamBody), "payload");
const ecListed = {};
for await (const p of fs.listPaths({ path: "ec", recursive: true })) ecListed[p.name] = p.encryptionContext;
assert.deepEqual(ecListed, { "ec/data.bin": "tenant-7/key-3" });
await fs.getDirectoryClient("ec").delete(true);

// Path - Create with an expiry (x-ms-expiry-option): a number of
// milliseconds is RelativeToNow, a Date Absolute; the Blob API reports it.
const soon = fs.getFileClient("expiring/soon.txt");
await soon.create({ expiresOn: 3_600_000 });
const soonAt = (await soon.getProperties()).expiresOn;
assert.ok(soonAt && Math.abs(soonAt.getTime() - Date.now() - 3_600_000) < 60_000, `expiresOn ${soonAt}`);
const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000);
const later = fs.getFileClient("expiring/later.txt");
await later.create({ expiresOn: at });
assert.equal((await later.getProperties()).expiresOn?.getTime(), at.getTime());
// A short one is gone once its time has come.
const brief = fs.getFileClient("expiring/brief.txt");
await brief.create({ expiresOn: 1500 });
assert.ok(await brief.exists());
await new Promise((r) => setTimeout(r, 2500));
assert.equal(await brief.exists(), false);
const left = [];
for await (const p of fs.listPaths({ path: "expiring" })) left.push(p.name);
assert.deepEqual(left.sort(), ["expiring/later.txt", "expiring/soon.txt"]);
await rejects(fs.getDirectoryClient("expiring/dir").create({ expiresOn: 60_000 }), 400, "InvalidHeaderValue");

await fs.delete();
console.log("dfs js: ok");

async function streamToString(s) {
  const chunks = [];
  for await (const c of s) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString();
}
