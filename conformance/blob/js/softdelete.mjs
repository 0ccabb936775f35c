// Drives blob soft delete through @azure/storage-blob: the
// DeleteRetentionPolicy service property, listing with includeDeleted,
// Undelete Blob and the soft-deleted snapshot an overwrite keeps (the
// SDK's delete does not send deletetype=permanent). Soft delete is an account-wide setting: the
// script turns it off again before it ends. Exits non-zero on any mismatch.
//
// Environment: LAZULI_BLOB_URL (default http://127.0.0.1:10000/devstoreaccount1),
// LAZULI_ACCOUNT / LAZULI_KEY (default: the development account).
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";

const url = process.env.LAZULI_BLOB_URL ?? "http://127.0.0.1:10000/devstoreaccount1";
const account = process.env.LAZULI_ACCOUNT ?? "devstoreaccount1";
const key =
  process.env.LAZULI_KEY ??
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const service = new BlobServiceClient(url, new StorageSharedKeyCredential(account, key), { retryOptions: { maxTries: 1 } });
const container = service.getContainerClient("jssoft" + Date.now().toString(36));

const failures = [];
function check(label, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) failures.push(`${label}: got ${g}, want ${w}`);
}
async function expectError(label, code, fn) {
  try {
    await fn();
    failures.push(`${label}: succeeded, want ${code}`);
  } catch (err) {
    check(`${label} error code`, err?.details?.errorCode ?? err?.code, code);
  }
}
async function text(body) {
  const chunks = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks).toString();
}
async function list(opts) {
  const out = [];
  for await (const b of container.listBlobsFlat(opts)) out.push(b);
  return out;
}

try {
  await service.setProperties({ deleteRetentionPolicy: { enabled: true, days: 3, allowPermanentDelete: true } });
  const props = await service.getProperties();
  check("policy", [props.deleteRetentionPolicy?.enabled, props.deleteRetentionPolicy?.days], [true, 3]);
  await container.create();
  const bb = container.getBlockBlobClient("b");
  await bb.upload("first", 5, { metadata: { kept: "yes" } });
  const snap = (await bb.createSnapshot()).snapshot;
  await bb.upload("second", 6, { metadata: { kept: "yes" } });
  await expectError("delete with snapshots", "SnapshotsPresent", () => bb.delete());
  await bb.delete({ deleteSnapshots: "include" });
  await expectError("get after delete", "BlobNotFound", () => bb.getProperties());
  check("live listing", (await list({ includeSnapshots: true })).length, 0);
  const deleted = await list({ includeSnapshots: true, includeDeleted: true, includeMetadata: true });
  check("deleted listing", deleted.map((b) => [b.deleted, b.properties.remainingRetentionDays, b.metadata?.kept]), [
    [true, 3, "yes"],
    [true, 3, "yes"],
    [true, 3, "yes"],
  ]);
  check("deleted snapshot", deleted[0].snapshot, snap);
  check("deleted time", deleted.every((b) => b.properties.deletedOn instanceof Date), true);
  await bb.undelete();
  check("restored blob", await text((await bb.download()).readableStreamBody), "second");
  check("restored snapshot", await text((await bb.withSnapshot(snap).download()).readableStreamBody), "first");
  // The state the second upload overwrote comes back as a snapshot.
  const overwritten = deleted[1].snapshot;
  check("restored overwritten state", await text((await bb.withSnapshot(overwritten).download()).readableStreamBody), "first");
  check("after undelete", (await list({ includeSnapshots: true, includeDeleted: true })).map((b) => b.deleted ?? false), [
    false,
    false,
    false,
  ]);
} catch (err) {
  failures.push(`unexpected error: ${err?.stack ?? err}`);
} finally {
  try {
    await service.setProperties({ deleteRetentionPolicy: { enabled: false } });
    await container.delete();
  } catch {
    // ignore
  }
}

if (failures.length > 0) {
  console.error(`FAIL (${failures.length} mismatches)`);
  for (const f of failures) console.error("  " + f);
  process.exit(1);
}
console.log("ok: blob soft delete through @azure/storage-blob");
