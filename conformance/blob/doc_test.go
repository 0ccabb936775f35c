// Package blob_test drives lazuli's Blob service with the official Azure
// SDK for Go (azblob) on every harness target, and with raw HTTP requests
// for what the SDK hides (exact status codes, x-ms-error-code, HEAD bodies,
// batch framing).
package blob_test
