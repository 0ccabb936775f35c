// Inserts an entity holding every Edm type through @azure/data-tables,
// reads it back (with and without the SDK's type conversion) and through a
// query, and exits non-zero on any mismatch.
//
// Environment: LAZULI_TABLE_URL (default http://127.0.0.1:10002/devstoreaccount1),
// LAZULI_ACCOUNT / LAZULI_KEY (default: the development account).
import { AzureNamedKeyCredential, TableClient, odata } from "@azure/data-tables";

const url = process.env.LAZULI_TABLE_URL ?? "http://127.0.0.1:10002/devstoreaccount1";
const account = process.env.LAZULI_ACCOUNT ?? "devstoreaccount1";
const key =
  process.env.LAZULI_KEY ??
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const tableName = "jsround" + Date.now().toString(36);
const client = new TableClient(url, tableName, new AzureNamedKeyCredential(account, key), {
  allowInsecureConnection: true,
  retryOptions: { maxRetries: 0 },
});

const failures = [];
function check(label, got, want) {
  const g = typeof got === "bigint" ? got.toString() + "n" : JSON.stringify(got);
  const w = typeof want === "bigint" ? want.toString() + "n" : JSON.stringify(want);
  if (g !== w || (Number.isNaN(want) && !Number.isNaN(got))) {
    failures.push(`${label}: got ${g}, want ${w}`);
  }
}

const when = new Date("2021-10-15T16:13:06.016Z");
const bytes = new Uint8Array([0, 1, 2, 127, 128, 255]);
const entity = {
  partitionKey: "p'k",
  rowKey: "r k",
  str: "héllo \"wörld\" ☃ 𝄞",
  emptyStr: "",
  int32: 2147483647,
  int32Neg: { value: -2147483648, type: "Int32" },
  int64: { value: "9223372036854775807", type: "Int64" },
  int64Neg: { value: "-9223372036854775808", type: "Int64" },
  dbl: 1.5,
  dblWhole: { value: 2, type: "Double" },
  dblTiny: 1e-300,
  dblNaN: { value: "NaN", type: "Double" },
  dblInf: { value: "Infinity", type: "Double" },
  dblNegInf: { value: "-Infinity", type: "Double" },
  boolT: true,
  boolF: false,
  date: when,
  datePrecise: { value: "2021-10-15T16:13:06.0167921Z", type: "DateTime" },
  guid: { value: "4185404a-5818-48c3-b9be-f217df0dba6f", type: "Guid" },
  bin: bytes,
  binEmpty: new Uint8Array([]),
};

function verifyConverted(label, e) {
  check(`${label} partitionKey`, e.partitionKey, "p'k");
  check(`${label} rowKey`, e.rowKey, "r k");
  check(`${label} str`, e.str, entity.str);
  check(`${label} emptyStr`, e.emptyStr, "");
  check(`${label} int32`, e.int32, 2147483647);
  check(`${label} int32Neg`, e.int32Neg, -2147483648);
  check(`${label} int64`, e.int64, 9223372036854775807n);
  check(`${label} int64Neg`, e.int64Neg, -9223372036854775808n);
  check(`${label} dbl`, e.dbl, 1.5);
  check(`${label} dblWhole`, e.dblWhole, 2);
  check(`${label} dblTiny`, e.dblTiny, 1e-300);
  // The SDK hands special doubles back as their spellings ("NaN", ...).
  check(`${label} dblNaN is NaN`, Number.isNaN(Number(e.dblNaN)), true);
  check(`${label} dblInf`, Number(e.dblInf) === Infinity, true);
  check(`${label} dblNegInf`, Number(e.dblNegInf) === -Infinity, true);
  check(`${label} boolT`, e.boolT, true);
  check(`${label} boolF`, e.boolF, false);
  check(`${label} date`, e.date instanceof Date && e.date.getTime(), when.getTime());
  check(`${label} guid`, e.guid, { value: "4185404a-5818-48c3-b9be-f217df0dba6f", type: "Guid" });
  check(`${label} bin`, Array.from(e.bin ?? []), Array.from(bytes));
  check(`${label} binEmpty`, Array.from(e.binEmpty ?? [0]), []);
  check(`${label} etag`, typeof e.etag === "string" && e.etag.startsWith('W/"datetime'), true);
  check(`${label} timestamp`, typeof e.timestamp === "string" && !Number.isNaN(Date.parse(e.timestamp)), true);
}

try {
  await client.createTable();
  await client.createEntity(entity);

  verifyConverted("get", await client.getEntity("p'k", "r k"));

  // Without conversion the SDK reports the Edm type of every annotated
  // property exactly.
  const raw = await client.getEntity("p'k", "r k", { disableTypeConversion: true });
  check("raw int64", raw.int64, { value: "9223372036854775807", type: "Int64" });
  check("raw int32Neg", raw.int32Neg, { value: "-2147483648", type: "Int32" });
  check("raw dblNaN", raw.dblNaN, { value: "NaN", type: "Double" });
  check("raw dblInf", raw.dblInf, { value: "Infinity", type: "Double" });
  check("raw dbl", raw.dbl, { value: "1.5", type: "Double" });
  check("raw boolT", raw.boolT, { value: "true", type: "Boolean" });
  check("raw str", raw.str, { value: entity.str, type: "String" });
  check("raw datePrecise", raw.datePrecise, { value: "2021-10-15T16:13:06.0167921Z", type: "DateTime" });
  check("raw date", raw.date?.type, "DateTime");
  check("raw guid", raw.guid, { value: "4185404a-5818-48c3-b9be-f217df0dba6f", type: "Guid" });
  check("raw bin", raw.bin, { value: Buffer.from(bytes).toString("base64"), type: "Binary" });

  // The same entity through a query with a typed filter.
  const found = [];
  for await (const e of client.listEntities({
    queryOptions: { filter: `int64 eq 9223372036854775807L and boolT eq true and ${odata`str eq ${entity.str}`}` },
  })) {
    found.push(e);
  }
  check("query count", found.length, 1);
  if (found.length === 1) verifyConverted("query", found[0]);

  // Upsert (merge) keeps every type; the ETag changes.
  const before = await client.getEntity("p'k", "r k");
  await client.upsertEntity({ partitionKey: "p'k", rowKey: "r k", extra: "x" }, "Merge");
  const after = await client.getEntity("p'k", "r k");
  verifyConverted("after merge", after);
  check("merge etag changed", after.etag !== before.etag, true);
  check("merge extra", after.extra, "x");

  // A transaction round-trips too.
  await client.submitTransaction([
    ["create", { partitionKey: "batch", rowKey: "1", int64: { value: "-5", type: "Int64" }, date: when }],
    ["create", { partitionKey: "batch", rowKey: "2", bin: bytes }],
  ]);
  const b1 = await client.getEntity("batch", "1");
  check("batch int64", b1.int64, -5n);
  check("batch date", b1.date?.getTime(), when.getTime());
  const b2 = await client.getEntity("batch", "2");
  check("batch bin", Array.from(b2.bin ?? []), Array.from(bytes));

  // Typed values as strings: an entity read without type conversion holds
  // { value: "true", type: "Boolean" } and { value: "5", type: "Int32" },
  // which the SDK sends back as JSON strings with their annotations.
  await client.createEntity({
    partitionKey: "str",
    rowKey: "1",
    flag: { value: "true", type: "Boolean" },
    off: { value: "false", type: "Boolean" },
    count: { value: "5", type: "Int32" },
    ratio: { value: "2.5", type: "Double" },
  });
  const untyped = await client.getEntity("str", "1", { disableTypeConversion: true });
  check("string bool", untyped.flag, { value: "true", type: "Boolean" });
  check("string int32", untyped.count, { value: "5", type: "Int32" });
  await client.updateEntity({ ...untyped, count: { value: "6", type: "Int32" } }, "Replace");
  const typed = await client.getEntity("str", "1");
  check("round-tripped bool", typed.flag, true);
  check("round-tripped false", typed.off, false);
  check("round-tripped int32", typed.count, 6);
  check("round-tripped double", typed.ratio, 2.5);
  // $filter: an integer literal against a Double, booleans in any case.
  const hits = [];
  for await (const e of client.listEntities({ queryOptions: { filter: "ratio gt 2 and flag eq True" } })) hits.push(e.rowKey);
  check("numeric and boolean literals", hits, ["1"]);
  // Values that do not parse as their type are refused.
  for (const [label, value] of [
    ["invalid DateTime", { value: "2021-13-45T00:00:00Z", type: "DateTime" }],
    ["Double out of range", { value: "1e400", type: "Double" }],
    ["invalid Boolean", { value: "maybe", type: "Boolean" }],
  ]) {
    try {
      await client.createEntity({ partitionKey: "str", rowKey: label.replace(/ /g, "-"), v: value });
      failures.push(`${label}: accepted`);
    } catch (err) {
      check(`${label} status`, err?.statusCode, 400);
    }
  }
  // A malformed If-Match is 400, a stale one 412.
  for (const [etag, status] of [["not-an-etag", 400], [`W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`, 412]]) {
    try {
      await client.deleteEntity("str", "1", { etag });
      failures.push(`delete with If-Match ${etag}: accepted`);
    } catch (err) {
      check(`If-Match ${etag}`, err?.statusCode, status);
    }
  }
} catch (err) {
  failures.push(`unexpected error: ${err?.stack ?? err}`);
} finally {
  try {
    await client.deleteTable();
  } catch {
    // ignore
  }
}

if (failures.length > 0) {
  console.error(`FAIL (${failures.length} mismatches)`);
  for (const f of failures) console.error("  " + f);
  process.exit(1);
}
console.log("ok: every Edm type round-tripped through @azure/data-tables, typed values sent as strings too");
