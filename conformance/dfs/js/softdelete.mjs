// Data Lake path soft delete through @azure/storage-file-datalake:
// listDeletedPaths (List Blobs showonly=deleted) and undeletePath (Undelete
// Blob with x-ms-undelete-source), plus the wire shape the SDK hides.
// Turns the account's DeleteRetentionPolicy on and off again at the end.
import assert from "node:assert/strict";
import { DataLakeServiceClient } from "@azure/storage-file-datalake";
import { BlobServiceClient } from "@azure/storage-blob";
import { cred, rejects, url } from "./common.mjs";

const dfs = new DataLakeServiceClient(url, cred);
const blobs = new BlobServiceClient(url, cred);

async function deleted(fs, options) {
  const out = [];
  for await (const p of fs.listDeletedPaths(options)) out.push(p);
  return out;
}

await blobs.setProperties({ deleteRetentionPolicy: { enabled: true, days: 2 } });
try {
  const fs = dfs.getFileSystemClient("sd" + Date.now());
  await fs.create();

  // A directory deleted recursively is one entry; its tree comes back.
  await fs.getFileClient("top/d/a.txt").upload(Buffer.from("alpha"));
  await fs.getFileClient("top/d/e/b.txt").upload(Buffer.from("beta"));
  const del = await fs.getDirectoryClient("top/d").delete(true);
  assert.match(del.deletionId, /^\d+$/);
  let list = await deleted(fs);
  assert.equal(list.length, 1);
  assert.equal(list[0].name, "top/d");
  assert.equal(list[0].deletionId, del.deletionId);
  assert.equal(list[0].remainingRetentionDays, 2);
  assert.ok(list[0].deletedOn instanceof Date);
  assert.equal(await fs.getFileClient("top/d/a.txt").exists(), false);
  const back = await fs.undeletePath("top/d", del.deletionId);
  assert.equal(back.resourceType, "directory");
  assert.equal((await fs.getFileClient("top/d/e/b.txt").readToBuffer()).toString(), "beta");
  assert.equal((await deleted(fs)).length, 0);

  // The same file deleted twice: two entries, two ids.
  const f = fs.getFileClient("top/f.txt");
  await f.upload(Buffer.from("first"));
  await f.delete();
  await f.upload(Buffer.from("second"));
  await f.delete();
  list = await deleted(fs, { prefix: "top/f" });
  assert.equal(list.length, 2);
  assert.notEqual(list[0].deletionId, list[1].deletionId);
  const first = list.find((p) => p.deletionId === list[0].deletionId);
  // Pages of one entry.
  const pages = fs.listDeletedPaths().byPage({ maxPageSize: 1 });
  const p1 = (await pages.next()).value;
  assert.equal(p1.pathItems.length, 1);
  assert.ok(p1.continuation);

  const r = await fs.undeletePath("top/f.txt", first.deletionId);
  assert.equal(r.resourceType, "file");
  // Onto a live path: 409 PathAlreadyExists; an unknown id: 404 BlobNotFound.
  await rejects(fs.undeletePath("top/f.txt", list[1].deletionId), 409, "PathAlreadyExists");
  await rejects(fs.undeletePath("top/g.txt", "132000000000000000"), 404, "BlobNotFound");
  // Into a parent that is gone: 404 ParentNotFound.
  await fs.getDirectoryClient("top").delete(true);
  await rejects(fs.undeletePath("top/f.txt", list[1].deletionId), 404, "ParentNotFound");

  // Wire shape: the XML entry carries Deleted, DeletionId, DeletedTime and
  // RemainingRetentionDays; a bad undelete source is 400.
  const c = blobs.getContainerClient(fs.name);
  const sas = await c.generateSasUrl({ permissions: "racwdl", expiresOn: new Date(Date.now() + 3600e3) });
  const [base, q] = sas.split("?");
  const res = await fetch(`${base}?${q}&restype=container&comp=list&showonly=deleted&prefix=top`);
  assert.equal(res.status, 200);
  const xml = await res.text();
  assert.match(xml, /<Blob><Name>top<\/Name><Deleted>true<\/Deleted><DeletionId>\d+<\/DeletionId><Properties>.*<DeletedTime>[^<]+<\/DeletedTime><RemainingRetentionDays>2<\/RemainingRetentionDays>/);
  const bad = await fetch(`${base}/top?${q}&comp=undelete`, { method: "PUT", headers: { "x-ms-undelete-source": "?deletionid=" } });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get("x-ms-error-code"), "InvalidHeaderValue");
  await fs.delete();
} finally {
  await blobs.setProperties({ deleteRetentionPolicy: { enabled: false } });
}
console.log("dfs soft delete: ok");
