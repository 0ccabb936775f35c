// Drives static websites through @azure/storage-blob: the StaticWebsite
// service property round trip, then the $web container read anonymously
// from lazuli's web endpoint (index documents, Content-Type, the custom
// 404 page). The setting is account-wide: the script turns the site off
// again before it ends. Exits non-zero on any mismatch.
//
// Environment: LAZULI_BLOB_URL (default http://127.0.0.1:10000/devstoreaccount1),
// LAZULI_WEB_URL (the account on the web endpoint, e.g.
// http://127.0.0.1:10004/devstoreaccount1), LAZULI_ACCOUNT / LAZULI_KEY
// (default: the development account).
import { check, failures, report, service } from "./common.mjs";

const web = process.env.LAZULI_WEB_URL;
if (!web) {
  console.error("LAZULI_WEB_URL is required");
  process.exit(2);
}

async function get(path) {
  const r = await fetch(web + path);
  return [r.status, r.headers.get("content-type"), r.headers.get("x-ms-error-code"), await r.text()];
}

try {
  const [st, , code] = await get("/index.html");
  check("disabled", [st, code], [404, "WebsiteDisabled"]);
  await service.setProperties({
    staticWebsite: { enabled: true, indexDocument: "index.html", errorDocument404Path: "404.html" },
  });
  const props = await service.getProperties();
  check("property", [props.staticWebsite?.enabled, props.staticWebsite?.indexDocument, props.staticWebsite?.errorDocument404Path],
    [true, "index.html", "404.html"]);
  const site = service.getContainerClient("$web");
  await site.createIfNotExists();
  const files = { "index.html": ["text/html", "home"], "guide/index.html": ["text/html", "guide"], "style.css": ["text/css", "css"], "404.html": ["text/html", "lost"] };
  for (const [name, [type, body]] of Object.entries(files)) {
    await site.getBlockBlobClient(name).uploadData(Buffer.from(body), { blobHTTPHeaders: { blobContentType: type } });
  }
  check("root", await get("/"), [200, "text/html", null, "home"]);
  check("directory", await get("/guide/"), [200, "text/html", null, "guide"]);
  check("directory without slash", await get("/guide"), [200, "text/html", null, "guide"]);
  check("file", await get("/style.css"), [200, "text/css", null, "css"]);
  check("missing", await get("/nope"), [404, "text/html", null, "lost"]);
} finally {
  await service.setProperties({ staticWebsite: { enabled: false } });
}
report("static website: ok");
