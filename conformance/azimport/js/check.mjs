// Reads from lazuli, after lazuli import-azurite, what write.mjs stored in
// the reference emulator.
import { readFileSync } from "node:fs";
import { BlobServiceClient } from "@azure/storage-blob";
import { QueueServiceClient } from "@azure/storage-queue";
import { TableClient } from "@azure/data-tables";
import * as c from "./common.mjs";

const [blobAddr, queueAddr, tableAddr, seenFile] = process.argv.slice(2);
const seen = JSON.parse(readFileSync(seenFile, "utf8"));
const text = async (client, opts) => (await client.downloadToBuffer(0, undefined, opts)).toString();

const blob = new BlobServiceClient(c.url(blobAddr), c.blobCred);
const cont = blob.getContainerClient("imported");
const cprops = await cont.getProperties();
c.check(cprops.metadata.owner === "ann", "container metadata");
c.check(cprops.blobPublicAccess === "blob", "container public access: " + cprops.blobPublicAccess);
const acl = await cont.getAccessPolicy();
c.check(acl.signedIdentifiers.length === 1 && acl.signedIdentifiers[0].id === "policy1" &&
  acl.signedIdentifiers[0].accessPolicy.permissions === "r", "container access policy");
const names = [];
for await (const b of cont.listBlobsFlat({ includeSnapshots: true, includeTags: true })) names.push(b.name + (b.snapshot ? "@" + b.snapshot : ""));
// A blob's snapshots are listed before it, as Azure lists them.
c.check(JSON.stringify(names) === JSON.stringify(["big.bin", "dir/hello.txt@" + seen.snapshot, "dir/hello.txt", "disk.vhd", "log.txt"]),
  "blobs and snapshots: " + JSON.stringify(names));

const hello = cont.getBlockBlobClient("dir/hello.txt");
c.check(await text(hello) === "hello again", "current blob content");
const hp = await hello.getProperties();
c.check(hp.contentType === "text/plain" && hp.metadata.k === "v2", "current blob properties and metadata");
c.check(hp.lastModified.toISOString() === seen.helloModified, `Last-Modified kept: ${hp.lastModified.toISOString()} vs ${seen.helloModified}`);
const snap = hello.withSnapshot(seen.snapshot);
c.check(await text(snap) === "hello azurite", "snapshot content");
const sp = await snap.getProperties();
c.check(sp.metadata.k === "v" && sp.cacheControl === "no-cache" && sp.contentLanguage === "en", "snapshot properties and metadata");
c.check(Buffer.from(sp.contentMD5).toString("hex") === "7cd1e6745b3bfe8a85a6a028dc633b4c", "snapshot Content-MD5");
const tags = await cont.getBlockBlobClient("dir/hello.txt").withSnapshot(seen.snapshot).getTags().catch(() => ({ tags: {} }));
c.check(tags.tags.t1 === "x", "tags of the snapshot: " + JSON.stringify(tags.tags));

const bigBlob = cont.getBlockBlobClient("big.bin");
c.check((await bigBlob.downloadToBuffer()).equals(c.big), "block blob of two blocks");
const list = await bigBlob.getBlockList("committed");
c.check(JSON.stringify(list.committedBlocks.map((b) => b.name)) === JSON.stringify(c.blockIds), "block list");
c.check(await text(cont.getAppendBlobClient("log.txt")) === "line1\nline2\n", "append blob");
const pageBlob = cont.getPageBlobClient("disk.vhd");
const pp = await pageBlob.getProperties();
c.check(pp.contentLength === 4096 && pp.blobSequenceNumber === 3 && pp.blobType === "PageBlob", "page blob properties");
const ranges = await pageBlob.getPageRanges();
// The SDK gives a range as {start, end} or, in newer versions, {offset, count: end - start}.
const spans = (ranges.pageRange || []).map((r) => r.start !== undefined ? [r.start, r.end] : [r.offset, r.offset + r.count]);
c.check(JSON.stringify(spans) === JSON.stringify([[512, 1023]]), "page ranges: " + JSON.stringify(ranges.pageRange));
const pages = await pageBlob.downloadToBuffer();
c.check(pages.subarray(512, 1024).equals(c.page) && pages.subarray(0, 512).every((b) => b === 0), "page content");
c.check((await blob.getContainerClient("private").exists()), "second container");

const q = new QueueServiceClient(c.url(queueAddr), c.blobCred).getQueueClient("jobs");
c.check((await q.getProperties()).metadata.m === "1", "queue metadata");
const qacl = await q.getAccessPolicy();
c.check(qacl.signedIdentifiers.length === 1 && qacl.signedIdentifiers[0].id === "qp" &&
  qacl.signedIdentifiers[0].accessPolicy.permissions === "rp", "queue access policy: " + JSON.stringify(qacl.signedIdentifiers));
// "first" was handed out for a second; wait until that second is over.
const wait = new Date(seen.firstVisible).getTime() + 1000 - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const peek = await q.peekMessages({ numberOfMessages: 32 });
const texts = peek.peekedMessageItems.map((m) => m.messageText);
// "later" is invisible for ten minutes; "first" was handed out for a
// second and is visible again.
c.check(JSON.stringify(texts.slice().sort()) === JSON.stringify(["first", "received", "second"]), "visible messages: " + JSON.stringify(texts));
const second = peek.peekedMessageItems.find((m) => m.messageText === "second");
c.check(second && second.expiresOn.toISOString() === seen.secondExpires && second.insertedOn.toISOString() === seen.secondInserted,
  `message times kept: ${second && second.insertedOn.toISOString()} ${second && second.expiresOn.toISOString()} vs ${JSON.stringify(seen)}`);

const t = new TableClient(c.url(tableAddr), "people", c.tableCred, { allowInsecureConnection: true });
const ann = await t.getEntity("p1", "r1", { disableTypeConversion: true });
c.check(ann.name.value === "Ann" && ann.age.value === "42" && ann.age.type === "Int32", "Int32 and string: " + JSON.stringify(ann.age));
c.check(ann.big.value === "9007199254740993" && ann.big.type === "Int64", "Int64");
c.check(ann.when.type === "DateTime" && ann.when.value.startsWith("2020-01-02T03:04:05.678"), "DateTime: " + JSON.stringify(ann.when));
c.check(ann.ok.value === "true" || ann.ok.value === true, "Boolean");
c.check(ann.ratio.type === "Double", "Double");
c.check(ann.bin.type === "Binary" && ann.bin.value === "AQID", "Binary");
c.check(ann.id.type === "Guid" && ann.id.value === c.entity.id.value, "Guid: " + JSON.stringify(ann.id));
const annTyped = await t.getEntity("p1", "r1");
c.check(annTyped.timestamp === seen.annTimestamp, `Timestamp kept: ${annTyped.timestamp} vs ${seen.annTimestamp}`);
const tacl = await t.getAccessPolicy();
c.check(tacl.length === 1 && tacl[0].id === "tp" && tacl[0].accessPolicy.permission === "r", "table access policy: " + JSON.stringify(tacl));
let n = 0;
for await (const _ of t.listEntities()) n++;
c.check(n === 2, "two entities");
if (!process.exitCode) console.log("import checked: blobs, snapshots, blocks, pages, queues, messages, tables, entities");
