// What the Blob scripts share: the endpoint and credential from the
// environment (LAZULI_BLOB_URL, LAZULI_ACCOUNT, LAZULI_KEY; the development
// account by default), a service client that never retries, and the list
// of mismatches with the checks that fill it.
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";

export const url = process.env.LAZULI_BLOB_URL ?? "http://127.0.0.1:10000/devstoreaccount1";
export const account = process.env.LAZULI_ACCOUNT ?? "devstoreaccount1";
export const key =
  process.env.LAZULI_KEY ??
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
export const cred = new StorageSharedKeyCredential(account, key);
export const service = new BlobServiceClient(url, cred, { retryOptions: { maxTries: 1 } });

export const failures = [];

// check records a mismatch when got and want differ as JSON.
export function check(label, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) failures.push(`${label}: got ${g}, want ${w}`);
}

// expectError records a mismatch unless fn fails with the error code.
export async function expectError(label, code, fn) {
  try {
    await fn();
    failures.push(`${label}: succeeded, want ${code}`);
  } catch (err) {
    check(`${label} error code`, err?.details?.errorCode ?? err?.code, code);
  }
}

// text reads a download's body stream to the end.
export async function text(body) {
  const chunks = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks).toString();
}

// report ends the script: the mismatches and exit status 1 if there are
// any, the line ok otherwise.
export function report(ok) {
  if (failures.length > 0) {
    console.error(`FAIL (${failures.length} mismatches)`);
    for (const f of failures) console.error("  " + f);
    process.exit(1);
  }
  console.log(ok);
}
