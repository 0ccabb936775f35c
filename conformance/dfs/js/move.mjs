// A directory moved to another filesystem of the account through
// @azure/storage-file-datalake (move(destinationFileSystem, path)),
// against a lazuli started with --hierarchicalNamespace: the tree reads
// and lists under its new name, is gone from the source, survives the
// deletion of the source filesystem, and the conditions and leases of
// both ends are checked.
import assert from "node:assert/strict";
import { DataLakeServiceClient } from "@azure/storage-file-datalake";
import { cred, rejects, url } from "./common.mjs";

const dfs = new DataLakeServiceClient(url, cred);

async function write(fs, name, text) {
  const f = fs.getFileClient(name);
  await f.create();
  await f.append(text, 0, text.length);
  await f.flush(text.length);
}

async function read(fs, name) {
  return (await fs.getFileClient(name).readToBuffer()).toString();
}

async function list(fs) {
  const out = [];
  for await (const p of fs.listPaths({ recursive: true })) out.push(p.name + (p.isDirectory ? "/" : ""));
  return out.sort();
}

const stamp = Date.now();
const src = dfs.getFileSystemClient("movesrc" + stamp);
const dst = dfs.getFileSystemClient("movedst" + stamp);
await src.create();
await dst.create();

await write(src, "tree/a/one.txt", "one");
await write(src, "tree/a/deep/two.txt", "two");
await write(src, "tree/b/three.txt", "three");
await src.getDirectoryClient("tree/empty").create();
await write(src, "stays.txt", "stays");
await dst.getDirectoryClient("into").create();

// Source conditions: a stale ETag is 412 SourceConditionNotMet and
// moves nothing.
const tree = src.getDirectoryClient("tree");
await rejects(tree.move(dst.name, "into/tree", { conditions: { ifMatch: '"0x1"' } }), 412, "SourceConditionNotMet");
// The destination's parent must exist in the destination filesystem.
await rejects(tree.move(dst.name, "missing/tree"), 404, "RenameDestinationParentPathNotFound");
// A missing destination filesystem is 404.
await rejects(tree.move("nosuchfs" + stamp, "tree"), 404, "FilesystemNotFound");
// Destination conditions: If-None-Match * over an existing path.
await rejects(tree.move(dst.name, "into", { destinationConditions: { ifNoneMatch: "*" } }), 409, "PathAlreadyExists");
assert.deepEqual(await list(dst), ["into/"]);

// The move itself, with a matching source ETag.
const etag = (await tree.getProperties()).etag;
await tree.move(dst.name, "into/tree", { conditions: { ifMatch: etag } });
assert.equal(await tree.exists(), false);
assert.deepEqual(await list(src), ["stays.txt"]);
const moved = ["into/", "into/tree/", "into/tree/a/", "into/tree/a/deep/", "into/tree/a/deep/two.txt", "into/tree/a/one.txt", "into/tree/b/", "into/tree/b/three.txt", "into/tree/empty/"];
assert.deepEqual(await list(dst), moved);
assert.equal(await read(dst, "into/tree/a/one.txt"), "one");
assert.equal(await read(dst, "into/tree/a/deep/two.txt"), "two");
assert.equal(await read(dst, "into/tree/b/three.txt"), "three");
// Paths made under the moved tree land in the destination filesystem.
await write(dst, "into/tree/a/deep/four.txt", "four");
assert.equal(await src.getFileClient("tree/a/deep/four.txt").exists(), false);

// Leases: a leased source file moves only with its lease id, a leased
// destination file is replaced only with its lease id.
await write(src, "leased.txt", "leased");
const srcLease = src.getFileClient("leased.txt").getDataLakeLeaseClient();
await srcLease.acquireLease(-1);
await rejects(src.getFileClient("leased.txt").move(dst.name, "into/leased.txt", { conditions: { leaseId: "00000000-0000-0000-0000-000000000000" } }), 412);
assert.equal(await dst.getFileClient("into/leased.txt").exists(), false);
await write(dst, "into/held.txt", "held");
const dstLease = dst.getFileClient("into/held.txt").getDataLakeLeaseClient();
await dstLease.acquireLease(-1);
await rejects(src.getFileClient("leased.txt").move(dst.name, "into/held.txt", { conditions: { leaseId: srcLease.leaseId } }), 412, "LeaseIdMissing");
assert.equal(await read(dst, "into/held.txt"), "held");
await src.getFileClient("leased.txt").move(dst.name, "into/held.txt", { conditions: { leaseId: srcLease.leaseId }, destinationConditions: { leaseId: dstLease.leaseId } });
assert.equal(await read(dst, "into/held.txt"), "leased");
assert.equal(await src.getFileClient("leased.txt").exists(), false);

// And back again: the tree moves to the source filesystem and returns.
await dst.getDirectoryClient("into/tree").move(src.name, "back");
assert.deepEqual(await list(src), ["back/", "back/a/", "back/a/deep/", "back/a/deep/four.txt", "back/a/deep/two.txt", "back/a/one.txt", "back/b/", "back/b/three.txt", "back/empty/", "stays.txt"]);
await src.getDirectoryClient("back").move(dst.name, "into/tree");

// Deleting the source filesystem leaves the moved tree whole.
await src.delete();
assert.equal(await src.exists(), false);
assert.deepEqual(await list(dst), [...moved, "into/held.txt", "into/tree/a/deep/four.txt"].sort());
assert.equal(await read(dst, "into/tree/a/deep/four.txt"), "four");
assert.equal(await read(dst, "into/tree/b/three.txt"), "three");

await dst.delete();
console.log("dfs js move: ok");
