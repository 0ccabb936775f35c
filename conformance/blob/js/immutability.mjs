// Drives version-level immutability through @azure/storage-blob: a
// container created with x-ms-immutable-storage-with-versioning-enabled
// (the SDK has no option for it: a pipeline policy adds the header), Set
// and Delete Blob Immutability Policy, Set Blob Legal Hold, the policy and
// hold on upload, their listing, and the codes of the writes they refuse.
// Needs an account that keeps blob versions. Exits non-zero on any
// mismatch.
//
// Environment: LAZULI_BLOB_URL (the account's endpoint, e.g.
// http://127.0.0.1:10000/jsworm), LAZULI_ACCOUNT / LAZULI_KEY.
import { BlobServiceClient, newPipeline } from "@azure/storage-blob";
import { check, cred, expectError, failures, report, service, url } from "./common.mjs";

const name = "jsworm" + Date.now().toString(36);
const container = service.getContainerClient(name);

// A container client whose requests carry the immutability header, set
// before the Shared Key policy signs them.
const wormPipeline = newPipeline(cred, { retryOptions: { maxTries: 1 } });
wormPipeline.factories.unshift({
  create: (next) => ({
    sendRequest: (req) => {
      req.headers.set("x-ms-immutable-storage-with-versioning-enabled", "true");
      return next.sendRequest(req);
    },
  }),
});

try {
  await new BlobServiceClient(url, wormPipeline).getContainerClient(name).create();
  const cp = await container.getProperties();
  check("container setting", cp.isImmutableStorageWithVersioningEnabled, true);

  const bb = container.getBlockBlobClient("b");
  await bb.upload("one", 3);
  const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 86400000);
  const set = await bb.setImmutabilityPolicy({ expiriesOn: until, policyMode: "Unlocked" });
  check("set policy", [set.immutabilityPolicyExpiry?.toISOString(), set.immutabilityPolicyMode], [until.toISOString(), "unlocked"]);
  let p = await bb.getProperties();
  check("policy properties", [p.immutabilityPolicyExpiresOn?.toISOString(), p.immutabilityPolicyMode], [until.toISOString(), "unlocked"]);
  await expectError("delete under policy", "BlobImmutableDueToPolicy", () => bb.delete());
  await expectError("metadata under policy", "BlobImmutableDueToPolicy", () => bb.setMetadata({ m: "x" }));
  await bb.deleteImmutabilityPolicy();
  p = await bb.getProperties();
  check("policy deleted", p.immutabilityPolicyMode ?? null, null);

  const hold = await bb.setLegalHold(true);
  check("set legal hold", hold.legalHold, true);
  await expectError("delete under hold", "BlobImmutableDueToLegalHold", () => bb.delete());
  const listed = [];
  for await (const b of container.listBlobsFlat({ includeLegalHold: true, includeImmutabilityPolicy: true })) listed.push(b);
  check("listed hold", listed.map((b) => [b.name, b.properties.legalHold]), [["b", true]]);
  await bb.setLegalHold(false);
  await bb.delete();

  // Policy and hold given on upload.
  const up = container.getBlockBlobClient("up");
  await up.upload("two", 3, { legalHold: true, immutabilityPolicy: { expiriesOn: until, policyMode: "Unlocked" } });
  p = await up.getProperties();
  check("upload protection", [p.legalHold, p.immutabilityPolicyExpiresOn?.toISOString()], [true, until.toISOString()]);
  await expectError("container delete", "ContainerImmutableStorageWithVersioningEnabled", () => container.delete());
} catch (err) {
  failures.push(`unexpected error: ${err?.stack ?? err}`);
}

report("blob immutability (JavaScript SDK): ok");
