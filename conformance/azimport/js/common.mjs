// What write.mjs stores in the reference emulator and check.mjs expects in
// lazuli after the import.
import { StorageSharedKeyCredential } from "@azure/storage-blob";
import { AzureNamedKeyCredential } from "@azure/data-tables";

export const account = "devstoreaccount1";
export const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
export const blobCred = new StorageSharedKeyCredential(account, key);
export const tableCred = new AzureNamedKeyCredential(account, key);
export const url = (hostport) => `http://${hostport}/${account}`;

export const blockIds = ["block-0", "block-1"].map((s) => Buffer.from(s).toString("base64"));
export const big = Buffer.alloc(300000);
for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
export const page = Buffer.alloc(512, 9);
export const entity = {
  partitionKey: "p1", rowKey: "r1", name: "Ann", age: 42,
  big: { value: "9007199254740993", type: "Int64" },
  when: new Date("2020-01-02T03:04:05.678Z"), ok: true, ratio: 0.5,
  bin: new Uint8Array([1, 2, 3]),
  id: { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" },
};

export function check(cond, what) {
  if (!cond) {
    console.error("FAIL: " + what);
    process.exitCode = 1;
  }
}
