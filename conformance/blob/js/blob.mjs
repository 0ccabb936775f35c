// Drives the Blob service through @azure/storage-blob: ordinary round
// trips, Blob Batch (the SDK's own multipart framing) at account and
// container scope, append-blob Seal, and CRC-64 uploads (checksums the SDK
// computes itself, sent as x-ms-content-crc64 and as structured message
// bodies). Exits non-zero on any mismatch.
//
// Environment: LAZULI_BLOB_URL (default http://127.0.0.1:10000/devstoreaccount1),
// LAZULI_ACCOUNT / LAZULI_KEY (default: the development account), and
// LAZULI_LENIENT_ACCOUNT ("name:key", optional): an AZURITE_ACCOUNTS
// account whose key is not strict base64.
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { StorageCRC64Calculator } from "@azure/storage-common";
import { check, expectError, failures, report, service, text, url } from "./common.mjs";

const containerName = "jsblob" + Date.now().toString(36);
const container = service.getContainerClient(containerName);

async function crc64(bytes) {
  await StorageCRC64Calculator.init();
  return new StorageCRC64Calculator().final(bytes, bytes.length);
}

try {
  await container.create();

  // Round trips: upload, download, properties, metadata, listing.
  const bb = container.getBlockBlobClient("dir/hello.txt");
  await bb.upload("hello, lazuli", 13, {
    blobHTTPHeaders: { blobContentType: "text/plain" },
    metadata: { Greeting: "hi" },
  });
  check("download", await text((await bb.download()).readableStreamBody), "hello, lazuli");
  const props = await bb.getProperties();
  check("content type", props.contentType, "text/plain");
  check("metadata", props.metadata, { greeting: "hi" });
  check("ranged download", await text((await bb.download(7, 6)).readableStreamBody), "lazuli");
  const names = [];
  for await (const b of container.listBlobsFlat()) names.push(b.name);
  check("listing", names, ["dir/hello.txt"]);

  // Blob Batch through BlobBatchClient: deletes at account scope, tiers at
  // container scope, and a failing sub-request reported in place.
  const batchNames = ["b0", "b1", "b2"];
  for (const n of batchNames) await container.getBlockBlobClient(n).upload("x", 1);
  const tierRes = await container
    .getBlobBatchClient()
    .setBlobsAccessTier(batchNames.map((n) => container.getBlobClient(n)), "Cool");
  check("tier batch", [tierRes.subResponsesSucceededCount, tierRes.subResponsesFailedCount], [3, 0]);
  check("tier applied", (await container.getBlobClient("b1").getProperties()).accessTier, "Cool");
  const delRes = await service
    .getBlobBatchClient()
    .deleteBlobs([...batchNames, "missing"].map((n) => container.getBlobClient(n)));
  check("delete batch", [delRes.subResponsesSucceededCount, delRes.subResponsesFailedCount], [3, 1]);
  check("delete batch failure", delRes.subResponses[3]?.errorCode, "BlobNotFound");
  check("deleted", await container.getBlobClient("b0").exists(), false);

  // A batch addressed to a container reaches no blob of another
  // container: that sub-request is refused in its part, the blob stays.
  const other = service.getContainerClient(containerName + "x");
  await other.create();
  try {
    await other.getBlockBlobClient("keep").upload("x", 1);
    await container.getBlockBlobClient("b1").upload("x", 1);
    const scoped = await container
      .getBlobBatchClient()
      .deleteBlobs([container.getBlobClient("b1"), other.getBlobClient("keep")]);
    check("scoped batch", [scoped.subResponsesSucceededCount, scoped.subResponsesFailedCount], [1, 1]);
    check("scoped batch refusal", [scoped.subResponses[1]?.status, scoped.subResponses[1]?.errorCode], [400, "InvalidInput"]);
    check("other container's blob kept", await other.getBlobClient("keep").exists(), true);
  } finally {
    await other.delete();
  }

  // Append blob seal.
  const ab = container.getAppendBlobClient("log");
  await ab.create();
  await ab.appendBlock("line 1\n", 7);
  const sealed = await ab.seal();
  check("seal response", sealed.isSealed, true);
  check("sealed property", (await ab.getProperties()).isSealed, true);
  await expectError("append after seal", "BlobIsSealed", () => ab.appendBlock("line 2\n", 7));
  for await (const b of container.listBlobsFlat({ prefix: "log" })) check("listing sealed", b.properties.isSealed, true);

  // CRC-64 the SDK computes: as x-ms-content-crc64, and as structured
  // message bodies (contentChecksumAlgorithm StorageCrc64).
  const data = new TextEncoder().encode("The quick brown fox jumps over the lazy dog");
  const crc = await crc64(data);
  const blocks = container.getBlockBlobClient("blocks");
  const id = Buffer.from("block-01").toString("base64");
  const staged = await blocks.stageBlock(id, data, data.length, { transactionalContentCrc64: crc });
  check("stage block crc64", Buffer.from(staged.xMsContentCrc64 ?? staged.contentCrc64 ?? []).toString("base64"), Buffer.from(crc).toString("base64"));
  const wrong = Uint8Array.from(crc);
  wrong[0] ^= 1;
  await expectError("stage block bad crc64", "Crc64Mismatch", () =>
    blocks.stageBlock(id, data, data.length, { transactionalContentCrc64: wrong }),
  );
  await blocks.stageBlock(Buffer.from("block-02").toString("base64"), data, data.length, {
    contentChecksumAlgorithm: "StorageCrc64",
  });
  await blocks.commitBlockList([id, Buffer.from("block-02").toString("base64")]);
  check("committed", await text((await blocks.download()).readableStreamBody), new TextDecoder().decode(data).repeat(2));
  const ab2 = container.getAppendBlobClient("crc-append");
  await ab2.create();
  const appended = await ab2.appendBlock(data, data.length, { transactionalContentCrc64: crc });
  check("append crc64", Buffer.from(appended.xMsContentCrc64 ?? appended.contentCrc64 ?? []).toString("base64"), Buffer.from(crc).toString("base64"));
  await ab2.appendBlock(data, data.length, { contentChecksumAlgorithm: "StorageCrc64" });
  check("append length", (await ab2.getProperties()).contentLength, 2 * data.length);
  const pb = container.getPageBlobClient("crc-pages");
  await pb.create(1024);
  const page = new Uint8Array(512);
  page.set(data);
  await pb.uploadPages(page, 0, 512, { transactionalContentCrc64: await crc64(page) });
  await pb.uploadPages(page, 512, 512, { contentChecksumAlgorithm: "StorageCrc64" });
  const whole = container.getBlockBlobClient("crc-whole");
  await whole.uploadData(data, { contentChecksumAlgorithm: "StorageCrc64" });
  check("structured upload", await text((await whole.download()).readableStreamBody), new TextDecoder().decode(data));
  const checked = await whole.download(0, undefined, { contentChecksumAlgorithm: "StorageCrc64" });
  check("structured download", await text(checked.readableStreamBody), new TextDecoder().decode(data));
  const ranged = await whole.download(0, 1, { rangeGetContentCrc64: true });
  check("range crc64", Buffer.from(ranged.contentCrc64 ?? []).toString("base64"), Buffer.from(await crc64(data.slice(0, 1))).toString("base64"));

  // An account whose key is not strict base64 (AZURITE_ACCOUNTS
  // "name:key"): the SDK decodes such keys as Node.js does, and so must
  // the server.
  const lenient = process.env.LAZULI_LENIENT_ACCOUNT;
  if (lenient) {
    const [name, lkey] = lenient.split(":");
    const lsvc = new BlobServiceClient(url.replace(/[^/]+\/?$/, name), new StorageSharedKeyCredential(name, lkey), {
      retryOptions: { maxTries: 1 },
    });
    const lc = lsvc.getContainerClient("lenient" + Date.now().toString(36));
    await lc.create();
    await lc.getBlockBlobClient("b").upload("lenient key", 11);
    check("lenient key account", await text((await lc.getBlobClient("b").download()).readableStreamBody), "lenient key");
    await lc.delete();
  }
} catch (err) {
  failures.push(`unexpected error: ${err?.stack ?? err}`);
} finally {
  try {
    await container.delete();
  } catch {
    // ignore
  }
}

report("ok: blob round trips, batch, seal and CRC-64 through @azure/storage-blob");
