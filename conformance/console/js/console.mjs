// Drives lazuli's web console in headless Chromium and checks it against
// the JavaScript SDKs: the pages load and show what the SDKs wrote, and
// what is done in the console (containers, blobs, metadata, tags, leases,
// snapshots, messages, entities, directories, files, forced handle
// closes) is what the SDKs then see. Exits non-zero on any mismatch.
//
// Environment: LAZULI_CONSOLE_URL (the admin listener, e.g.
// http://127.0.0.1:10010/), LAZULI_BLOB_URL, LAZULI_QUEUE_URL,
// LAZULI_TABLE_URL, LAZULI_FILE_URL (service URLs with the account),
// LAZULI_SMB_PORT (for the handle smbclient holds open), CHROMIUM (default
// /usr/bin/chromium), LAZULI_SCREENSHOTS (a directory to save the pages in).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { QueueServiceClient, StorageSharedKeyCredential as QueueKey } from "@azure/storage-queue";
import { TableClient, TableServiceClient, AzureNamedKeyCredential } from "@azure/data-tables";
import { ShareServiceClient, StorageSharedKeyCredential as FileKey } from "@azure/storage-file-share";

const env = (k, d) => process.env[k] ?? d;
const consoleURL = env("LAZULI_CONSOLE_URL", "http://127.0.0.1:10010/");
const account = env("LAZULI_ACCOUNT", "devstoreaccount1");
const key = env("LAZULI_KEY", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==");
const options = { retryOptions: { maxTries: 1 } };
const blobs = new BlobServiceClient(env("LAZULI_BLOB_URL", `http://127.0.0.1:10000/${account}`), new StorageSharedKeyCredential(account, key), options);
const queues = new QueueServiceClient(env("LAZULI_QUEUE_URL", `http://127.0.0.1:10001/${account}`), new QueueKey(account, key), options);
const tableURL = env("LAZULI_TABLE_URL", `http://127.0.0.1:10002/${account}`);
const tableKey = new AzureNamedKeyCredential(account, key);
const tables = new TableServiceClient(tableURL, tableKey, { allowInsecureConnection: true, ...options });
const shares = new ShareServiceClient(env("LAZULI_FILE_URL", `http://127.0.0.1:10003/${account}`), new FileKey(account, key), options);
const shots = process.env.LAZULI_SCREENSHOTS;

const failures = [];
function check(label, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) failures.push(`${label}: got ${g}, want ${w}`);
}

// step runs one part of the test; a failure is recorded and the next part
// still runs.
async function step(label, fn) {
  try {
    await fn();
    console.log(`ok   ${label}`);
  } catch (e) {
    failures.push(`${label}: ${e.stack || e}`);
    console.log(`FAIL ${label}`);
  }
}

async function streamText(s) {
  const parts = [];
  for await (const c of s) parts.push(c);
  return Buffer.concat(parts).toString("utf8");
}

// ---- what the SDKs write before the console looks ----
const container = blobs.getContainerClient("sdk-container");
await container.create();
await container.getBlockBlobClient("docs/readme.txt").upload("hello from the SDK", 18, {
  metadata: { Origin: "sdk" }, blobHTTPHeaders: { blobContentType: "text/plain" },
});
await container.getBlockBlobClient("top.bin").upload("xyz", 3);
// A name and metadata that would be markup if the page ever used them as
// such.
const hostile = "<img src=x onerror=alert(1)>.html";
await container.getBlockBlobClient(hostile).upload("<script>alert(2)</script>", 25, {
  metadata: { note: "<b>bold</b>" }, blobHTTPHeaders: { blobContentType: "text/html" },
});
// More blobs than one page holds.
const many = blobs.getContainerClient("many");
await many.create();
await Promise.all(Array.from({ length: 105 }, (_, i) => many.getBlockBlobClient(`b${String(i).padStart(3, "0")}`).upload("", 0)));
const queue = queues.getQueueClient("sdk-queue");
await queue.create();
await queue.sendMessage("hello queue");
await tables.createTable("sdktable");
const table = new TableClient(tableURL, "sdktable", tableKey, { allowInsecureConnection: true, ...options });
await table.createEntity({ partitionKey: "p1", rowKey: "r1", Name: "Ada", Age: 36 });
await table.createEntity({ partitionKey: "p2", rowKey: "r2", Name: "Grace", Age: 45 });
const share = shares.getShareClient("sdk-share");
await share.create();
const docs = share.getDirectoryClient("docs");
await docs.create();
await docs.getFileClient("note.txt").uploadData(Buffer.from("a note"));

// ---- the browser ----
const profile = mkdtempSync(join(tmpdir(), "lazuli-console-chromium-"));
// A fresh profile directory: nothing from an earlier run or the user's
// own browser plays a part.
const context = await chromium.launchPersistentContext(profile, {
  executablePath: env("CHROMIUM", "/usr/bin/chromium"),
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 900 },
  acceptDownloads: true,
});
let smb, smbHome;
try {
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  // An error status is an answer the page shows, not a page error.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of 4")) pageErrors.push(m.text());
  });
  // Confirmations are the console's own; an alert would be stored data run
  // as script.
  page.on("dialog", (d) => {
    if (d.type() !== "confirm") pageErrors.push(`${d.type()} dialog: ${d.message()}`);
    d.accept();
  });
  // Only the console's own origin may be reached: everything is embedded.
  const foreign = [];
  page.on("request", (r) => { if (!r.url().startsWith(new URL(consoleURL).origin) && !r.url().startsWith("blob:")) foreign.push(r.url()); });

  const open = async (hash) => {
    const target = new URL(hash, consoleURL).href;
    // Going to the page already shown changes nothing: load it again.
    if (page.url() === target) await page.reload();
    else await page.goto(target);
    await page.waitForFunction(() => document.getElementById("busy").hidden && !document.querySelector("#main p.muted:only-child"));
  };
  const shot = async (name) => { if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true }); };
  const texts = (sel) => page.locator(sel).allTextContents();
  // act clicks and waits for the page to settle and report success.
  const act = async (locator) => {
    await page.evaluate(() => { document.getElementById("notice").hidden = true; });
    await locator.click();
    await page.waitForFunction(() => !document.getElementById("notice").hidden && document.getElementById("busy").hidden);
    const cls = await page.locator("#notice").getAttribute("class");
    const msg = await page.locator("#notice").textContent();
    if (cls !== "ok") throw new Error(`console reported: ${msg}`);
    await page.waitForFunction(() => document.getElementById("busy").hidden);
    return msg;
  };

  await step("accounts page lists the account and its services", async () => {
    await open("/");
    check("title", await page.locator("h1").textContent(), "Storage accounts");
    check("blob link", await page.locator(`[data-test="open-blob-${account}"]`).count(), 1);
    check("file link", await page.locator(`[data-test="open-file-${account}"]`).count(), 1);
    await shot("accounts");
  });

  await step("containers and blobs the SDK wrote show", async () => {
    await open(`#/blob/${account}`);
    check("containers", await texts('[data-test="container"]'), ["many", "sdk-container"]);
    await page.locator('[data-test="container"]:text-is("sdk-container")').click();
    await page.waitForSelector('[data-test="blob-prefix"]');
    check("prefixes", await texts('[data-test="blob-prefix"]'), ["docs/"]);
    check("blobs", await texts('[data-test="blob"]'), [hostile, "top.bin"]);
    await shot("blobs");
    await page.locator('[data-test="blob-prefix"]').click();
    await page.waitForSelector('[data-test="blob"]:text("readme.txt")');
    await page.locator('[data-test="blob"]').click();
    await page.waitForSelector('[data-test="blob-content"]');
    check("content", await page.locator('[data-test="blob-content"]').textContent(), "hello from the SDK");
    // Metadata names keep their case both ways.
    check("metadata", await page.locator('[data-test="blob-meta-text"]').inputValue(), "Origin=sdk");
    await shot("blob");
  });

  const readme = container.getBlockBlobClient("docs/readme.txt");
  await step("stored names and values show as text, never as markup", async () => {
    await open(`#/blob/${account}/sdk-container/${encodeURIComponent(hostile)}`);
    await page.waitForSelector('[data-test="blob-content"]');
    check("heading", await page.locator("h1").textContent(), hostile);
    check("content", await page.locator('[data-test="blob-content"]').textContent(), "<script>alert(2)</script>");
    check("metadata", await page.locator('[data-test="blob-meta-text"]').inputValue(), "note=<b>bold</b>");
    check("elements made from data", await page.locator("main img, main script, main b").count(), 0);
  });

  await step("listings page by NextMarker", async () => {
    await open(`#/blob/${account}/many`);
    check("first page", (await texts('[data-test="blob"]')).length, 100);
    await page.locator('[data-test="next-page"]').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-test="blob"]').length === 5);
    check("second page", await texts('[data-test="blob"]'), ["b100", "b101", "b102", "b103", "b104"]);
  });

  await step("metadata and tags set in the console reach the SDK", async () => {
    await open(`#/blob/${account}/sdk-container/${encodeURIComponent("docs/readme.txt")}`);
    await page.waitForSelector('[data-test="blob-meta-text"]');
    await page.locator('[data-test="blob-meta-text"]').fill("Origin=console\nMixedCase=blue");
    await act(page.locator('[data-test="blob-meta-save"]'));
    // The listing keeps the names' case (Node.js lowercases response
    // header names, so getProperties cannot show it).
    let meta;
    for await (const b of container.listBlobsFlat({ prefix: "docs/readme.txt", includeMetadata: true })) meta = b.metadata;
    check("metadata", Object.keys(meta).sort().map((k) => `${k}=${meta[k]}`), ["MixedCase=blue", "Origin=console"]);
    await page.waitForSelector('[data-test="blob-tags-text"]');
    await page.locator('[data-test="blob-tags-text"]').fill("env=test");
    await act(page.locator('[data-test="blob-tags-save"]'));
    check("tags", (await readme.getTags()).tags, { env: "test" });
  });

  await step("content headers set in the console reach the SDK, the MD5 kept", async () => {
    const before = await readme.getProperties();
    await page.locator("details summary").click();
    await page.locator('[data-test="prop-content-type"]').fill("text/markdown");
    await page.locator('[data-test="prop-cache-control"]').fill("max-age=60");
    await act(page.locator('[data-test="save-props"]'));
    const p = await readme.getProperties();
    check("headers", [p.contentType, p.cacheControl], ["text/markdown", "max-age=60"]);
    check("md5 kept", Buffer.from(p.contentMD5 || []).toString("base64"), Buffer.from(before.contentMD5 || []).toString("base64"));
  });

  await step("lease acquire and break in the console reach the SDK", async () => {
    await page.locator('[data-test="lease-duration"]').selectOption("-1");
    await act(page.locator('[data-test="lease-acquire"]'));
    const p = await readme.getProperties();
    check("leased", [p.leaseState, p.leaseDuration], ["leased", "infinite"]);
    await act(page.locator('[data-test="lease-break"]'));
    check("broken", (await readme.getProperties()).leaseState, "broken");
  });

  await step("a snapshot made in the console is listed by the SDK and the console", async () => {
    await act(page.locator('[data-test="create-snapshot"]'));
    const snaps = [];
    for await (const b of container.listBlobsFlat({ prefix: "docs/readme.txt", includeSnapshots: true })) if (b.snapshot) snaps.push(b.snapshot);
    check("snapshots", snaps.length, 1);
    await page.waitForSelector('[data-test="snapshot"]');
    check("console snapshots", await texts('[data-test="snapshot"]'), snaps);
  });

  await step("a container created and a file uploaded in the console reach the SDK", async () => {
    await open(`#/blob/${account}`);
    // The service's error shows as it sent it.
    await page.locator('[data-test="new-container"]').fill("sdk-container");
    await page.locator('[data-test="create-container"]').click();
    await page.waitForFunction(() => document.getElementById("notice").className === "error");
    check("error", (await page.locator("#notice").textContent()).split(":")[0], "409 ContainerAlreadyExists");
    await page.locator('[data-test="new-container"]').fill("console-container");
    await act(page.locator('[data-test="create-container"]'));
    check("exists", await blobs.getContainerClient("console-container").exists(), true);
    await open(`#/blob/${account}/console-container`);
    await page.locator('[data-test="upload-blob"]').setInputFiles({ name: "upload.txt", mimeType: "text/plain", buffer: Buffer.from("uploaded in the console") });
    await page.waitForFunction(() => !document.getElementById("notice").hidden);
    check("notice", await page.locator("#notice").getAttribute("class"), "ok");
    const got = await blobs.getContainerClient("console-container").getBlobClient("upload.txt").download();
    check("uploaded", await streamText(got.readableStreamBody), "uploaded in the console");
    check("type", got.contentType, "text/plain");
    // Larger than one block: Put Block and Put Block List.
    const big = Buffer.alloc((9 << 20) + 5, 7);
    await page.locator('[data-test="upload-blob"]').setInputFiles({ name: "big.bin", mimeType: "application/octet-stream", buffer: big });
    await page.waitForSelector('[data-test="blob"]:text("big.bin")');
    const bp = await blobs.getContainerClient("console-container").getBlobClient("big.bin").getProperties();
    check("big size", bp.contentLength, big.length);
    check("big blocks", (await blobs.getContainerClient("console-container").getBlockBlobClient("big.bin").getBlockList("committed")).committedBlocks.length, 3);
    await shot("container");
  });

  await step("a download saves the blob's bytes", async () => {
    await open(`#/blob/${account}/sdk-container/${encodeURIComponent("docs/readme.txt")}`);
    const [dl] = await Promise.all([page.waitForEvent("download"), page.locator('[data-test="download"]').click()]);
    check("name", dl.suggestedFilename(), "readme.txt");
    check("bytes", await streamText(await dl.createReadStream()), "hello from the SDK");
  });

  await step("queue messages the SDK put show; put and clear in the console reach the SDK", async () => {
    await open(`#/queue/${account}`);
    check("queues", await texts('[data-test="queue"]'), ["sdk-queue"]);
    await open(`#/queue/${account}/sdk-queue`);
    check("messages", await texts('[data-test="message-text"]'), ["hello queue"]);
    await page.locator('[data-test="message-input"]').fill("from the <console> & co");
    await act(page.locator('[data-test="put-message"]'));
    const peeked = (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText);
    check("peeked", peeked, ["hello queue", "from the <console> & co"]);
    check("console shows both", await texts('[data-test="message-text"]'), peeked);
    await shot("queue");
    // Receive and delete one, as a consumer would.
    await page.locator('[data-test="receive-message"]').click();
    await page.waitForSelector('[data-test="received-text"]');
    check("received", await page.locator('[data-test="received-text"]').textContent(), "hello queue");
    await act(page.locator('[data-test="delete-message"]'));
    const left = (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText);
    check("after delete", left, ["from the <console> & co"]);
    await act(page.locator('[data-test="clear-queue"]'));
    check("cleared", (await queue.peekMessages()).peekedMessageItems.length, 0);
    await open(`#/queue/${account}`);
    await page.locator('[data-test="new-queue"]').fill("console-queue");
    await act(page.locator('[data-test="create-queue"]'));
    check("queue exists", await queues.getQueueClient("console-queue").exists(), true);
  });

  await step("entities the SDK wrote show, $filter queries, and console edits reach the SDK", async () => {
    await open(`#/table/${account}`);
    check("tables", await texts('[data-test="table"]'), ["sdktable"]);
    await open(`#/table/${account}/sdktable`);
    check("rows", await texts('[data-test="entity-rowkey"]'), ["r1", "r2"]);
    await page.locator('[data-test="filter"]').fill("Age gt 40");
    await page.locator('[data-test="run-query"]').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-test="entity-rowkey"]').length === 1);
    check("filtered", await texts('[data-test="entity-rowkey"]'), ["r2"]);
    await open(`#/table/${account}/sdktable`);
    await page.locator('[data-test="add-entity"]').click();
    await page.locator('[data-test="entity-json"]').fill(JSON.stringify({ PartitionKey: "p3", RowKey: "r3", Name: "Console", Big: "12345678901234", "Big@odata.type": "Edm.Int64" }));
    await act(page.locator('[data-test="entity-save"]'));
    const added = await table.getEntity("p3", "r3", { disableTypeConversion: true });
    check("added", [added.Name.value, added.Big], ["Console", { value: "12345678901234", type: "Int64" }]);
    await page.locator('tr:has([data-test="entity-rowkey"]:text-is("r1")) [data-test="entity-edit"]').click();
    const json = JSON.parse(await page.locator('[data-test="entity-json"]').inputValue());
    check("editor", [json.Name, json.Age], ["Ada", 36]);
    json.Age = 37;
    await page.locator('[data-test="entity-json"]').fill(JSON.stringify(json));
    await act(page.locator('[data-test="entity-save"]'));
    check("edited", (await table.getEntity("p1", "r1")).Age, 37);
    await shot("table");
    await open(`#/table/${account}`);
    await page.locator('[data-test="new-table"]').fill("consoletable");
    await act(page.locator('[data-test="create-table"]'));
    const names = [];
    for await (const t of tables.listTables()) names.push(t.name);
    check("tables after", names.sort(), ["consoletable", "sdktable"]);
  });

  await step("shares, directories and files the SDK wrote show; console changes reach the SDK", async () => {
    await open(`#/file/${account}`);
    check("shares", await texts('[data-test="share"]'), ["sdk-share"]);
    await page.locator('[data-test="share"]').click();
    await page.waitForSelector('[data-test="directory"]');
    check("dirs", await texts('[data-test="directory"]'), ["docs/"]);
    await page.locator('[data-test="directory"]').click();
    await page.waitForSelector('[data-test="file"]');
    check("files", await texts('[data-test="file"]'), ["note.txt"]);
    await page.locator('[data-test="file-properties"]').click();
    await page.waitForSelector('[data-test="file-props"]');
    const props = await page.locator('[data-test="file-props"]').textContent();
    if (!props.includes("content-length6") || !props.includes("x-ms-file-attributes")) failures.push(`file properties: ${props}`);
    await page.locator('[data-test="new-directory"]').fill("made-in-console");
    await act(page.locator('[data-test="create-directory"]'));
    check("dir exists", await docs.getDirectoryClient("made-in-console").exists(), true);
    await page.locator('[data-test="upload-file"]').setInputFiles({ name: "up.txt", mimeType: "text/plain", buffer: Buffer.from("file from the console") });
    await page.waitForSelector('[data-test="file"]:text("up.txt")');
    const got = await docs.getFileClient("up.txt").download();
    check("uploaded file", await streamText(got.readableStreamBody), "file from the console");
  });

  await step("an SMB handle shows and a forced close in the console closes it", async () => {
    const port = process.env.LAZULI_SMB_PORT;
    if (!port) throw new Error("LAZULI_SMB_PORT is not set");
    smbHome = mkdtempSync(join(tmpdir(), "lazuli-console-smb-"));
    const home = smbHome;
    smb = spawn("smbclient", ["//127.0.0.1/sdk-share", "-p", port, "-U", `${account}%${key}`, "--configfile=/dev/null"],
      { env: { ...process.env, HOME: home }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    smb.stdout.on("data", (d) => { out += d; });
    smb.stderr.on("data", (d) => { out += d; });
    smb.stdin.write("open docs\\note.txt\n");
    const deadline = Date.now() + 15000;
    let handles = [];
    while (Date.now() < deadline) {
      handles = [];
      for await (const h of share.rootDirectoryClient.listHandles({ recursive: true })) handles.push(h);
      if (handles.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (!handles.length) throw new Error(`smbclient opened no handle: ${out}`);
    await open(`#/file/${account}/sdk-share/docs`);
    await page.waitForSelector('[data-test="handle-path"]');
    check("console handles", await texts('[data-test="handle-path"]'), ["docs/note.txt"]);
    await shot("share");
    await act(page.locator('[data-test="close-handle"]'));
    const left = [];
    for await (const h of share.rootDirectoryClient.listHandles({ recursive: true })) left.push(h);
    check("handles after close", left.length, 0);
    check("console after close", await page.locator('[data-test="handle-path"]').count(), 0);
  });

  check("requests to other origins", foreign, []);
  check("page errors", pageErrors, []);
} finally {
  if (smb) smb.kill();
  if (smbHome) rmSync(smbHome, { recursive: true, force: true });
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}

// Beyond loopback: the admin listener asks for an account and a key, and
// the console then shows and acts as that account alone.
const authURL = process.env.LAZULI_CONSOLE_AUTH_URL;
if (authURL) {
  const [user, userKey] = env("LAZULI_CONSOLE_AUTH_ACCOUNT", "").split(/:(.*)/s);
  await step("beyond loopback the console asks for an account and acts as it alone", async () => {
    check("without credentials", (await fetch(authURL)).status, 401);
    const profile2 = mkdtempSync(join(tmpdir(), "lazuli-console-chromium-"));
    const ctx = await chromium.launchPersistentContext(profile2, {
      executablePath: env("CHROMIUM", "/usr/bin/chromium"),
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"],
      httpCredentials: { username: user, password: userKey },
    });
    try {
      const page = await ctx.newPage();
      page.on("dialog", (d) => d.accept());
      await page.goto(authURL);
      await page.waitForSelector('[data-test="accounts"] .card');
      check("accounts shown", await page.locator('[data-test="accounts"] h2').allTextContents(), [user]);
      await page.goto(new URL(`#/blob/${user}`, authURL).href);
      await page.locator('[data-test="new-container"]').fill("made-signed-in");
      await page.locator('[data-test="create-container"]').click();
      await page.waitForSelector('[data-test="container"]:text-is("made-signed-in")');
      const other = new BlobServiceClient(env("LAZULI_AUTH_BLOB_URL", "") + "/" + user, new StorageSharedKeyCredential(user, userKey), options);
      check("made as the account", await other.getContainerClient("made-signed-in").exists(), true);
      // Another account is out of reach, even by address.
      const denied = await page.evaluate(async (a) => (await fetch(`api/blob/${a}/?comp=list`, { headers: { "X-Lazuli-Console": "1" } })).status, account);
      check("other account", denied, 403);
    } finally {
      await ctx.close();
      rmSync(profile2, { recursive: true, force: true });
    }
  });
}

if (failures.length) {
  console.error(`${failures.length} failure(s):\n` + failures.join("\n"));
  process.exit(1);
}
console.log("console: all checks passed");
