// The README's JavaScript recipe. AZURE_STORAGE_CONNECTION_STRING names
// the endpoints ("UseDevelopmentStorage=true" for the default ports).
import { BlobServiceClient } from "@azure/storage-blob";
import { QueueServiceClient } from "@azure/storage-queue";
import { TableServiceClient, TableClient } from "@azure/data-tables";
import assert from "node:assert/strict";

const cs = process.env.AZURE_STORAGE_CONNECTION_STRING;

const blobs = BlobServiceClient.fromConnectionString(cs);
const container = blobs.getContainerClient("jsrecipe");
await container.create();
await container.getBlockBlobClient("hello.txt").upload("hello from js", 13);
const body = await container.getBlobClient("hello.txt").downloadToBuffer();
assert.equal(body.toString(), "hello from js");

const queues = QueueServiceClient.fromConnectionString(cs);
const queue = queues.getQueueClient("jsrecipe");
await queue.create();
await queue.sendMessage("hello");
const got = await queue.receiveMessages();
assert.equal(got.receivedMessageItems[0].messageText, "hello");

const tables = TableServiceClient.fromConnectionString(cs, { allowInsecureConnection: true });
await tables.createTable("jsrecipe");
const table = TableClient.fromConnectionString(cs, "jsrecipe", { allowInsecureConnection: true });
await table.createEntity({ partitionKey: "p", rowKey: "r", value: 7 });
assert.equal((await table.getEntity("p", "r")).value, 7);
console.log("javascript recipe ok");
