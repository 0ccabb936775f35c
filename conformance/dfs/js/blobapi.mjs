// The Blob API (@azure/storage-blob) on an account with a hierarchical
// namespace, against a lazuli started with --hierarchicalNamespace: the
// Blob operations HNS forbids answer as Azure does.
import assert from "node:assert/strict";
import { DataLakeServiceClient } from "@azure/storage-file-datalake";
import { BlobServiceClient } from "@azure/storage-blob";
import { cred, rejects, url } from "./common.mjs";

const dfs = new DataLakeServiceClient(url, cred);
const blobs = new BlobServiceClient(url, cred, { retryOptions: { maxTries: 1 } });

const name = "hnsblob" + Date.now();
const fs = dfs.getFileSystemClient(name);
await fs.create();
const cont = blobs.getContainerClient(name);
await fs.getFileClient("dir/f.txt").create();
await cont.getBlockBlobClient("file.txt").upload("file", 4);

// A file over a directory, or under a file, is 409 PathConflict.
await rejects(cont.getBlockBlobClient("dir").upload("x", 1), 409, "PathConflict");
await rejects(cont.getAppendBlobClient("dir").create(), 409, "PathConflict");
const staged = cont.getBlockBlobClient("dir");
await staged.stageBlock("QUFBQQ==", "abcd", 4);
await rejects(staged.commitBlockList(["QUFBQQ=="]), 409, "PathConflict");
await rejects(cont.getBlockBlobClient("file.txt/under").upload("x", 1), 409, "PathConflict");
assert.equal((await fs.getDirectoryClient("dir").getProperties()).metadata.hdi_isfolder, "true");
assert.equal((await cont.getBlobClient("file.txt").downloadToBuffer()).toString(), "file");

// A file Path - Create made takes no blocks until Put Blob replaces it.
const made = cont.getBlockBlobClient("dir/f.txt");
await rejects(made.stageBlock("QUFBQQ==", "abcd", 4), 409, "BlobOperationNotSupported");
await rejects(made.commitBlockList([]), 409, "BlobOperationNotSupported");
await made.upload("blob", 4);
await made.stageBlock("QUFBQQ==", "abcd", 4);
await made.commitBlockList(["QUFBQQ=="]);
assert.equal((await fs.getFileClient("dir/f.txt").readToBuffer()).toString(), "abcd");

// Set Blob Metadata leaves a directory a directory.
await cont.getBlobClient("dir").setMetadata({ team: "lake" });
const md = (await cont.getBlobClient("dir").getProperties()).metadata;
assert.equal(md.team, "lake");
assert.equal(md.hdi_isfolder, "true");

// Delete Blob removes a directory only when it is empty.
await rejects(cont.getBlobClient("dir").delete(), 409, "DirectoryNotEmpty");

// Page blobs are not offered; append blobs are.
await rejects(cont.getPageBlobClient("disk.vhd").create(512), 409, "BlobOperationNotSupported");
await rejects(cont.getPageBlobClient("file.txt").uploadPages(Buffer.alloc(512), 0, 512), 409, "BlobOperationNotSupported");
await rejects(cont.getPageBlobClient("file.txt").getPageRanges(), 409, "BlobOperationNotSupported");
const log = cont.getAppendBlobClient("logs/app.log");
await log.create();
await log.appendBlock("line\n", 5);
assert.equal((await fs.getFileClient("logs/app.log").readToBuffer()).toString(), "line\n");

await fs.delete();
console.log("dfs blob api js: ok");
