// A new user's round trip through @azure/storage-file-share: a share with
// metadata and quota, directories, a file written in ranges and read back,
// range listing, a lease that guards writes, a share snapshot, a stored
// access policy and SAS URLs, listing, and cleanup. Exits non-zero on any
// mismatch.
//
// Environment: LAZULI_FILE_URL (default http://127.0.0.1:10003/devstoreaccount1),
// LAZULI_ACCOUNT / LAZULI_KEY (default: the development account).
import {
  ShareServiceClient,
  StorageSharedKeyCredential,
  ShareFileClient,
  ShareDirectoryClient,
  generateFileSASQueryParameters,
  FileSASPermissions,
} from "@azure/storage-file-share";

const url = process.env.LAZULI_FILE_URL ?? "http://127.0.0.1:10003/devstoreaccount1";
const account = process.env.LAZULI_ACCOUNT ?? "devstoreaccount1";
const key =
  process.env.LAZULI_KEY ??
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const cred = new StorageSharedKeyCredential(account, key);
const options = { retryOptions: { maxTries: 1 } };
const service = new ShareServiceClient(url, cred, options);

const failures = [];
function check(label, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) failures.push(`${label}: got ${g}, want ${w}`);
}
async function expectError(label, promise, status, code) {
  try {
    await promise;
    failures.push(`${label}: succeeded, want ${status} ${code}`);
  } catch (e) {
    if (e.statusCode !== status || e.code !== code) failures.push(`${label}: got ${e.statusCode} ${e.code}, want ${status} ${code}`);
  }
}
async function text(resp) {
  const chunks = [];
  for await (const c of resp.readableStreamBody) chunks.push(c);
  return Buffer.concat(chunks).toString();
}

const shareName = "jsshare" + Date.now().toString(36);
const share = service.getShareClient(shareName);
await share.create({ quota: 5, metadata: { owner: "js" } });
const props = await share.getProperties();
check("quota", props.quota, 5);
check("share metadata", props.metadata, { owner: "js" });

// Directories and a file written in two unaligned ranges.
const dir = share.getDirectoryClient("Reports");
await dir.create();
const sub = dir.getDirectoryClient("2024");
await sub.create({ metadata: { kind: "year" } });
const file = sub.getFileClient("Summary.txt");
const content = "hello from the javascript sdk, ranges and all";
await file.create(content.length, { fileHttpHeaders: { fileContentType: "text/plain" } });
await file.uploadRange(content.slice(0, 7), 0, 7);
await file.uploadRange(content.slice(7), 7, content.length - 7);
check("download", await text(await file.download()), content);
check("range download", await text(await file.download(6, 4)), content.slice(6, 10));
const fp = await file.getProperties();
check("content length", fp.contentLength, content.length);
check("content type", fp.contentType, "text/plain");
// Case-insensitive names.
const same = share.getDirectoryClient("reports/2024").getFileClient("summary.TXT");
check("case-insensitive read", await text(await same.download()), content);
const ranges = await file.getRangeList();
check("ranges", ranges.rangeList.map((r) => [r.start, r.end]), [[0, content.length - 1]]);

// uploadData / downloadToBuffer helpers.
const big = Buffer.alloc(5 * 1024 * 1024 + 17, 7);
const bigFile = dir.getFileClient("big.bin");
await bigFile.uploadData(big, { rangeSize: 4 * 1024 * 1024 });
const back = await bigFile.downloadToBuffer();
check("big round trip", Buffer.compare(back, big), 0);

// A lease guards writes.
const leaseClient = file.getShareLeaseClient();
const { leaseId } = await leaseClient.acquireLease();
await expectError("write without lease id", file.uploadRange("x", 0, 1), 412, "LeaseIdMissing");
await file.uploadRange("H", 0, 1, { leaseAccessConditions: { leaseId } });
await leaseClient.releaseLease();
await file.uploadRange("h", 0, 1);

// A snapshot keeps the old bytes.
const snap = await share.createSnapshot();
await file.uploadRange("J", 0, 1);
const snapFile = share.withSnapshot(snap.snapshot).getDirectoryClient("Reports/2024").getFileClient("Summary.txt");
check("snapshot content", await text(await snapFile.download()), content);

// A stored access policy and SAS URLs.
const now = new Date();
const expiry = new Date(now.getTime() + 3600 * 1000);
await share.setAccessPolicy([{ id: "readonly", accessPolicy: { permissions: "rl", startsOn: new Date(now.getTime() - 60000), expiresOn: expiry } }]);
const policies = await share.getAccessPolicy();
check("policy", policies.signedIdentifiers.map((s) => [s.id, s.accessPolicy.permissions]), [["readonly", "rl"]]);
const sasFile = generateFileSASQueryParameters(
  { shareName, filePath: "Reports/2024/Summary.txt", permissions: FileSASPermissions.parse("r"), expiresOn: expiry },
  cred,
).toString();
const viaSas = new ShareFileClient(`${file.url}?${sasFile}`, undefined, options);
check("sas download", (await text(await viaSas.download())).slice(1), content.slice(1));
await expectError("sas write", viaSas.uploadRange("x", 0, 1), 403, "AuthorizationPermissionMismatch");
const sasPolicy = generateFileSASQueryParameters({ shareName, identifier: "readonly" }, cred).toString();
const dirViaPolicy = new ShareDirectoryClient(`${dir.url}?${sasPolicy}`, undefined, options);
const names = [];
for await (const item of dirViaPolicy.listFilesAndDirectories()) names.push(`${item.kind}:${item.name}`);
check("listing via policy", names.sort(), ["directory:2024", "file:big.bin"]);

// Listing shares shows the share and its snapshot.
const listed = [];
for await (const s of service.listShares({ prefix: shareName, includeSnapshots: true, includeMetadata: true })) listed.push(s.snapshot ? "snapshot" : s.name);
check("list shares", listed, [shareName, "snapshot"]);

// Cleanup.
await expectError("delete non-empty dir", dir.delete(), 409, "DirectoryNotEmpty");
await expectError("delete share with snapshots", share.delete(), 409, "ShareHasSnapshots");
await share.delete({ deleteSnapshots: "include" });
await expectError("share gone", share.getProperties(), 404, "ShareNotFound");

if (failures.length > 0) {
  console.error("FAIL\n" + failures.join("\n"));
  process.exit(1);
}
console.log("file round trip: ok");
