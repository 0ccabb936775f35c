// Drives blob soft delete through @azure/storage-blob: the
// DeleteRetentionPolicy service property, listing with includeDeleted,
// Undelete Blob and the soft-deleted snapshot an overwrite keeps (the
// SDK's delete does not send deletetype=permanent). Soft delete is an account-wide setting: the
// script turns it off again before it ends. Exits non-zero on any mismatch.
//
// Environment: LAZULI_BLOB_URL (default http://127.0.0.1:10000/devstoreaccount1),
// LAZULI_ACCOUNT / LAZULI_KEY (default: the development account).
import { check, expectError, failures, report, service, text } from "./common.mjs";

const container = service.getContainerClient("jssoft" + Date.now().toString(36));

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

report("ok: blob soft delete through @azure/storage-blob");
