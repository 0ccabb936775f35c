// What every script here shares: the account, its Shared Key credential,
// the URL of the lazuli under test (LAZULI_BLOB_URL) and rejects, which
// asserts that a promise fails with an HTTP status and error code.
import assert from "node:assert/strict";
import { StorageSharedKeyCredential } from "@azure/storage-file-datalake";

export const url = process.env.LAZULI_BLOB_URL ?? "http://127.0.0.1:10000/devstoreaccount1";
export const account = "devstoreaccount1";
export const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
export const cred = new StorageSharedKeyCredential(account, key);

// rejects awaits p and asserts that it failed with status and, when code
// is given, that error code.
export async function rejects(p, status, code) {
  try {
    await p;
  } catch (e) {
    assert.equal(e.statusCode, status, `${code}: status ${e.statusCode} ${e.message}`);
    if (code) assert.equal(e.details?.errorCode ?? e.code, code);
    return;
  }
  assert.fail(`expected ${status} ${code}`);
}
