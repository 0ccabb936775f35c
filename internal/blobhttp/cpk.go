package blobhttp

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// Customer-provided keys (x-ms-encryption-key, x-ms-encryption-key-sha256,
// x-ms-encryption-algorithm). lazuli keeps no encryption of its own to
// apply them to: it keeps the key's SHA-256 with the blob, as Azure does,
// so that every later read or write of the content or metadata must
// present the same key, and echoes the hash as Azure echoes it.

// cpkOps are the operations that take a customer-provided key. The key
// is checked against the blob's by all but the creating ones (Put Blob,
// Put Block List, which set it); the others ignore the headers.
var cpkOps = map[string]bool{
	"PutBlob": true, "PutBlockList": true, "PutBlock": true, "PutBlobFromURL": true, "PutBlockFromURL": true,
	"GetBlob": true, "GetBlobProperties": true, "GetBlobMetadata": true, "SetBlobMetadata": true,
	"SnapshotBlob": true, "AppendBlock": true, "AppendBlockFromURL": true, "PutPage": true, "PutPageFromURL": true,
}

// cpkHeaders are the names of a customer-provided key's headers: the
// request's own (x-ms-encryption-...) and a From-URL operation's source's
// (x-ms-source-encryption-...).
type cpkHeaders struct{ key, sum, alg string }

// The names in the spelling the HTTP servers give header keys, so that
// looking them up costs no canonicalization (an allocation each for the
// lowercase names, on every read and write of a blob).
var (
	ownKeyHeaders    = cpkHeaders{"X-Ms-Encryption-Key", "X-Ms-Encryption-Key-Sha256", "X-Ms-Encryption-Algorithm"}
	sourceKeyHeaders = cpkHeaders{"X-Ms-Source-Encryption-Key", "X-Ms-Source-Encryption-Key-Sha256", "X-Ms-Source-Encryption-Algorithm"}
)

// cpk validates the customer-provided key headers named by n and returns
// the key's SHA-256 (base64), "" without a key. A key that is not 32
// bytes of base64, a hash that is not the key's, or an algorithm other
// than AES256 is 400 InvalidHeaderValue; a key without its hash (or the
// reverse) is 400 MissingRequiredHeader. Errors name the headers in
// lowercase, as Azure does.
func (rq *req) cpk(n cpkHeaders) (string, error) {
	hd := rq.r.Header
	key, sum, alg := hd.Get(n.key), hd.Get(n.sum), hd.Get(n.alg)
	if key == "" && sum == "" && alg == "" {
		return "", nil
	}
	if key == "" {
		return "", azerr.MissingHeader(strings.ToLower(n.key))
	}
	if sum == "" {
		return "", azerr.MissingHeader(strings.ToLower(n.sum))
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		return "", azerr.InvalidHeader(strings.ToLower(n.key), key)
	}
	h := sha256.Sum256(raw)
	if got, err := base64.StdEncoding.DecodeString(sum); err != nil || string(got) != string(h[:]) {
		return "", azerr.InvalidHeader(strings.ToLower(n.sum), sum)
	}
	if alg != "" && !strings.EqualFold(alg, "AES256") {
		return "", azerr.InvalidHeader(strings.ToLower(n.alg), alg)
	}
	return base64.StdEncoding.EncodeToString(h[:]), nil
}

// keyCond adds the customer-provided key of the request to cond when the
// operation takes one, and remembers it for the answer
// (x-ms-encryption-key-sha256, set by status).
func (rq *req) keyCond(cond *blob.Cond) error {
	if !cpkOps[rq.info.Operation] {
		return nil
	}
	sum, err := rq.cpk(ownKeyHeaders)
	if err != nil {
		return err
	}
	cond.KeySHA256, cond.KeyCheck, rq.keySHA = sum, true, sum
	return nil
}

// sourceKeyCond adds the source's customer-provided key
// (x-ms-source-encryption-key...) to the source conditions of a From-URL
// operation, which reads its source as Get Blob would.
func (rq *req) sourceKeyCond(cond *blob.Cond) error {
	if !strings.HasSuffix(rq.info.Operation, "FromURL") {
		return nil
	}
	sum, err := rq.cpk(sourceKeyHeaders)
	if err != nil {
		return err
	}
	cond.KeySHA256, cond.KeyCheck = sum, true
	return nil
}
