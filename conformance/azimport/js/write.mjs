// Writes blobs, queues and tables into a running reference emulator, and
// records the times and ETags it reported in the file given as argument.
import { writeFileSync } from "node:fs";
import { BlobServiceClient } from "@azure/storage-blob";
import { QueueServiceClient } from "@azure/storage-queue";
import { TableClient, TableServiceClient } from "@azure/data-tables";
import * as c from "./common.mjs";

const [blobAddr, queueAddr, tableAddr, out] = process.argv.slice(2);
const seen = {};
const blob = new BlobServiceClient(c.url(blobAddr), c.blobCred);
const cont = blob.getContainerClient("imported");
await cont.create({ metadata: { owner: "ann" }, access: "blob" });
await cont.setAccessPolicy("blob", [{ id: "policy1", accessPolicy: { permissions: "r",
  startsOn: new Date("2026-01-01T00:00:00Z"), expiresOn: new Date("2030-01-01T00:00:00Z") } }]);
const hello = cont.getBlockBlobClient("dir/hello.txt");
await hello.upload("hello azurite", 13, { metadata: { k: "v" }, tags: { t1: "x" },
  blobHTTPHeaders: { blobContentType: "text/plain", blobCacheControl: "no-cache", blobContentLanguage: "en" } });
seen.snapshot = (await hello.createSnapshot()).snapshot;
const again = await hello.upload("hello again", 11, { metadata: { k: "v2" }, blobHTTPHeaders: { blobContentType: "text/plain" } });
seen.helloModified = again.lastModified.toISOString();
const bigBlob = cont.getBlockBlobClient("big.bin");
await bigBlob.stageBlock(c.blockIds[0], c.big.subarray(0, 150000), 150000);
await bigBlob.stageBlock(c.blockIds[1], c.big.subarray(150000), 150000);
await bigBlob.commitBlockList(c.blockIds);
const app = cont.getAppendBlobClient("log.txt");
await app.create();
await app.appendBlock("line1\n", 6);
await app.appendBlock("line2\n", 6);
const pageBlob = cont.getPageBlobClient("disk.vhd");
await pageBlob.create(4096, { blobSequenceNumber: 3 });
await pageBlob.uploadPages(c.page, 512, 512);
await blob.getContainerClient("private").create();

const queues = new QueueServiceClient(c.url(queueAddr), c.blobCred);
const q = queues.getQueueClient("jobs");
await q.create({ metadata: { m: "1" } });
await q.setAccessPolicy([{ id: "qp", accessPolicy: { permissions: "rp",
  startsOn: new Date("2026-01-01T00:00:00Z"), expiresOn: new Date("2030-01-01T00:00:00Z") } }]);
await q.sendMessage("first");
const second = await q.sendMessage("second", { messageTimeToLive: 3600 });
seen.secondExpires = second.expiresOn.toISOString();
seen.secondInserted = second.insertedOn.toISOString();
await q.sendMessage("later", { visibilityTimeout: 600 });
await q.sendMessage("received");
const got = await q.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 1 }); // "first"
c.check(got.receivedMessageItems[0].messageText === "first", "the reference emulator handed out the first message");
seen.firstVisible = got.receivedMessageItems[0].nextVisibleOn.toISOString();

const tables = new TableServiceClient(c.url(tableAddr), c.tableCred, { allowInsecureConnection: true });
await tables.createTable("people");
const t = new TableClient(c.url(tableAddr), "people", c.tableCred, { allowInsecureConnection: true });
await t.setAccessPolicy([{ id: "tp", accessPolicy: { permission: "r",
  start: new Date("2026-01-01T00:00:00Z"), expiry: new Date("2030-01-01T00:00:00Z") } }]);
await t.createEntity(c.entity);
await t.createEntity({ partitionKey: "p1", rowKey: "r2", name: "Bob" });
const ann = await t.getEntity("p1", "r1");
seen.annTimestamp = ann.timestamp;
writeFileSync(out, JSON.stringify(seen));
console.log("written:", JSON.stringify(seen));
