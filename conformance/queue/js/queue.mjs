// Drives the Queue service through @azure/storage-queue: queue create,
// metadata and listing, messages sent, peeked, received, updated and
// deleted, clear, and an account SAS that may use the queue but not its
// access policy. Exits non-zero on any mismatch.
//
// Environment: LAZULI_QUEUE_URL (default http://127.0.0.1:10001/devstoreaccount1),
// LAZULI_ACCOUNT / LAZULI_KEY (default: the development account).
import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  QueueServiceClient,
  StorageSharedKeyCredential,
  generateAccountSASQueryParameters,
} from "@azure/storage-queue";

const url = process.env.LAZULI_QUEUE_URL ?? "http://127.0.0.1:10001/devstoreaccount1";
const account = process.env.LAZULI_ACCOUNT ?? "devstoreaccount1";
const key =
  process.env.LAZULI_KEY ??
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const cred = new StorageSharedKeyCredential(account, key);
const service = new QueueServiceClient(url, cred, { retryOptions: { maxTries: 1 } });
const queueName = "jsqueue" + Date.now().toString(36);
const queue = service.getQueueClient(queueName);

const failures = [];
function check(label, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) failures.push(`${label}: got ${g}, want ${w}`);
}

try {
  await queue.create({ metadata: { owner: "js" } });
  check("metadata", (await queue.getProperties()).metadata, { owner: "js" });
  const listed = [];
  for await (const q of service.listQueues({ prefix: queueName })) listed.push(q.name);
  check("listing", listed, [queueName]);

  const sent = await queue.sendMessage("héllo ☃");
  await queue.sendMessage("second");
  check("approximate count", (await queue.getProperties()).approximateMessagesCount, 2);
  const peeked = await queue.peekMessages({ numberOfMessages: 2 });
  check("peek", peeked.peekedMessageItems.map((m) => m.messageText), ["héllo ☃", "second"]);
  const got = await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 30 });
  check("receive", got.receivedMessageItems.map((m) => [m.messageId, m.messageText, m.dequeueCount]), [[sent.messageId, "héllo ☃", 1]]);
  const m = got.receivedMessageItems[0];
  const upd = await queue.updateMessage(m.messageId, m.popReceipt, "updated", 0);
  await queue.deleteMessage(m.messageId, upd.popReceipt);
  const rest = await queue.receiveMessages({ numberOfMessages: 5 });
  check("after delete", rest.receivedMessageItems.map((x) => x.messageText), ["second"]);
  try {
    await queue.deleteMessage(m.messageId, upd.popReceipt);
    failures.push("second delete succeeded");
  } catch (err) {
    check("second delete", err?.statusCode, 404);
  }
  await queue.clearMessages();
  check("cleared", (await queue.peekMessages()).peekedMessageItems.length, 0);

  // An account SAS with every permission uses the queue but cannot touch
  // its access policy (the account owner's).
  const sas = generateAccountSASQueryParameters(
    {
      expiresOn: new Date(Date.now() + 3600_000),
      permissions: AccountSASPermissions.parse("rwdlacup"),
      resourceTypes: AccountSASResourceTypes.parse("sco").toString(),
      services: AccountSASServices.parse("q").toString(),
    },
    cred,
  ).toString();
  const viaSAS = new QueueServiceClient(`${url}?${sas}`, undefined, { retryOptions: { maxTries: 1 } }).getQueueClient(queueName);
  await viaSAS.sendMessage("via sas");
  check("sas peek", (await viaSAS.peekMessages()).peekedMessageItems.map((x) => x.messageText), ["via sas"]);
  for (const [label, fn] of [
    ["get access policy", () => viaSAS.getAccessPolicy()],
    ["set access policy", () => viaSAS.setAccessPolicy([])],
  ]) {
    try {
      await fn();
      failures.push(`${label} with an account SAS succeeded`);
    } catch (err) {
      check(`${label} with an account SAS`, [err?.statusCode, err?.details?.errorCode ?? err?.code], [403, "AuthorizationFailure"]);
    }
  }
  await queue.setAccessPolicy([{ id: "p1", accessPolicy: { permissions: "r", expiresOn: new Date(Date.now() + 3600_000) } }]);
  check("access policy", (await queue.getAccessPolicy()).signedIdentifiers.map((s) => s.id), ["p1"]);
} catch (err) {
  failures.push(`unexpected error: ${err?.stack ?? err}`);
} finally {
  try {
    await queue.delete();
  } catch {
    // ignore
  }
}

if (failures.length > 0) {
  console.error(`FAIL (${failures.length} mismatches)`);
  for (const f of failures) console.error("  " + f);
  process.exit(1);
}
console.log("ok: queue round trips and account SAS rules through @azure/storage-queue");
