package main

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"strconv"
)

// Blob workload sizes.
const (
	smallBlobSize  = 1 << 10
	uploadBlock    = 4 << 20
	uploadBlocks   = 16 // 16 × 4 MiB = 64 MiB
	getBlobsPerRun = 64 // blobs the get workload reads from, round robin
)

// pattern returns n bytes of a fixed, non-repeating-looking pattern.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// createContainer creates a container named name and returns its cleanup.
func createContainer(e *env, name string) (func(), error) {
	_, err := e.t.do(&call{op: "Create Container", method: "PUT", base: e.t.acct.Blob,
		path: "/" + name, query: "restype=container", want: 201}, nil)
	if err != nil {
		e.noteSetupFailure(err)
		return nil, err
	}
	return func() {
		_, _ = e.t.do(&call{op: "Delete Container", method: "DELETE", base: e.t.acct.Blob,
			path: "/" + name, query: "restype=container", want: 202}, nil)
	}, nil
}

// putBlob is Put Blob of a block blob; it returns the new ETag.
func putBlob(t *target, path string, body []byte, ifMatch string) (string, error) {
	c := &call{op: "Put Blob", method: "PUT", base: t.acct.Blob, path: path, body: body, want: 201,
		hdr: []string{"X-Ms-Blob-Type", "BlockBlob", "Content-Type", "application/octet-stream"}}
	if ifMatch != "" {
		c.op = "Put Blob (If-Match)"
		c.hdr = append(c.hdr, "If-Match", ifMatch)
	}
	h, err := t.do(c, nil)
	if err != nil {
		return "", err
	}
	return h.Get("ETag"), nil
}

// blobWorkload prepares a workload that needs one container.
func blobWorkload(e *env, tag string, mk func(container string) func(id int) (op, error)) (*prepared, error) {
	name := e.uniqueName(tag)
	cleanup, err := createContainer(e, name)
	if err != nil {
		return nil, err
	}
	return &prepared{client: mk("/" + name), cleanup: cleanup}, nil
}

func blobPut1k(e *env) (*prepared, error) {
	body := pattern(smallBlobSize)
	p, err := blobWorkload(e, "put", func(c string) func(int) (op, error) {
		return func(id int) (op, error) {
			prefix := c + "/w" + strconv.Itoa(id) + "-"
			n := 0
			return func() error {
				n++
				_, err := putBlob(e.t, prefix+strconv.Itoa(n), body, "")
				return err
			}, nil
		}
	})
	if p != nil {
		p.bytesPerOp = smallBlobSize
	}
	return p, err
}

// blobPutSetMeta1k is Put Blob then Set Blob Metadata on it: two
// dependent writes per operation, the Blob counterpart of file-put-1k's
// Create File + Put Range.
func blobPutSetMeta1k(e *env) (*prepared, error) {
	body := pattern(smallBlobSize)
	p, err := blobWorkload(e, "setmeta", func(c string) func(int) (op, error) {
		return func(id int) (op, error) {
			prefix := c + "/w" + strconv.Itoa(id) + "-"
			n := 0
			return func() error {
				n++
				path := prefix + strconv.Itoa(n)
				if _, err := putBlob(e.t, path, body, ""); err != nil {
					return err
				}
				_, err := e.t.do(&call{op: "Set Blob Metadata", method: "PUT", base: e.t.acct.Blob, path: path,
					query: "comp=metadata", want: 200, hdr: []string{"X-Ms-Meta-Bench", "lazuli"}}, nil)
				return err
			}, nil
		}
	})
	if p != nil {
		p.bytesPerOp = smallBlobSize
	}
	return p, err
}

func blobGet1k(e *env) (*prepared, error) {
	name := e.uniqueName("get")
	cleanup, err := createContainer(e, name)
	if err != nil {
		return nil, err
	}
	c := "/" + name
	body := pattern(smallBlobSize)
	paths := make([]string, getBlobsPerRun)
	for i := range paths {
		paths[i] = c + "/b" + strconv.Itoa(i)
	}
	err = e.parallel(len(paths), func(i int) error {
		_, err := putBlob(e.t, paths[i], body, "")
		return err
	})
	if err != nil {
		return &prepared{cleanup: cleanup}, err
	}
	// Check once, outside the measured loop, that the data reads back.
	var buf bytes.Buffer
	if _, err := e.t.do(&call{op: "Get Blob", method: "GET", base: e.t.acct.Blob, path: paths[0], want: 200}, &buf); err != nil {
		e.noteSetupFailure(err)
		return &prepared{cleanup: cleanup}, err
	}
	if !bytes.Equal(buf.Bytes(), body) {
		err := fmt.Errorf("Get Blob returned %d bytes that differ from the %d written", buf.Len(), len(body))
		e.noteSetupFailure(err)
		return &prepared{cleanup: cleanup}, err
	}
	return &prepared{bytesPerOp: smallBlobSize, cleanup: cleanup, client: func(id int) (op, error) {
		n := id
		return func() error {
			n++
			_, err := e.t.do(&call{op: "Get Blob", method: "GET", base: e.t.acct.Blob,
				path: paths[n%len(paths)], want: 200}, nil)
			return err
		}, nil
	}}, nil
}

func blobPutIfMatch(e *env) (*prepared, error) {
	body := pattern(smallBlobSize)
	return blobWorkload(e, "ifmatch", func(c string) func(int) (op, error) {
		return func(id int) (op, error) {
			path := c + "/w" + strconv.Itoa(id)
			etag, err := putBlob(e.t, path, body, "")
			if err != nil {
				return nil, err
			}
			if etag == "" {
				return nil, fmt.Errorf("no ETag from Put Blob (%s)", path)
			}
			return func() error {
				next, err := putBlob(e.t, path, body, etag)
				if err != nil {
					return err
				}
				if next == "" || next == etag {
					return fmt.Errorf("the ETag from Put Blob (If-Match) stayed %q after %q: it must change", next, etag)
				}
				etag = next
				return nil
			}, nil
		}
	})
}

func blobLease(e *env) (*prepared, error) {
	body := pattern(smallBlobSize)
	return blobWorkload(e, "lease", func(c string) func(int) (op, error) {
		return func(id int) (op, error) {
			path := c + "/w" + strconv.Itoa(id)
			if _, err := putBlob(e.t, path, body, ""); err != nil {
				return nil, err
			}
			leaseID := fmt.Sprintf("00000000-0000-4000-8000-%012d", id)
			acquire := &call{op: "Lease Blob (acquire)", method: "PUT", base: e.t.acct.Blob, path: path,
				query: "comp=lease", want: 201, hdr: []string{"X-Ms-Lease-Action", "acquire",
					"X-Ms-Lease-Duration", "60", "X-Ms-Proposed-Lease-Id", leaseID}}
			release := &call{op: "Lease Blob (release)", method: "PUT", base: e.t.acct.Blob, path: path,
				query: "comp=lease", want: 200, hdr: []string{"X-Ms-Lease-Action", "release",
					"X-Ms-Lease-Id", leaseID}}
			return func() error {
				if _, err := e.t.do(acquire, nil); err != nil {
					return err
				}
				_, err := e.t.do(release, nil)
				return err
			}, nil
		}
	})
}

func blobUpload64m(e *env) (*prepared, error) { return blobUpload(e, "upload", false) }

// blobUpload64mMD5 asks for a Content-MD5 check on every block, so the
// server hashes every byte as a File Put Range must: Files and Blob doing
// equal work.
func blobUpload64mMD5(e *env) (*prepared, error) { return blobUpload(e, "upmd5", true) }

// blobUpload uploads 64 MiB block blobs, each block sent with its
// Content-MD5 when withMD5 is set.
func blobUpload(e *env, tag string, withMD5 bool) (*prepared, error) {
	block := pattern(uploadBlock)
	var hdr []string
	if withMD5 {
		sum := md5.Sum(block)
		hdr = []string{"Content-MD5", base64.StdEncoding.EncodeToString(sum[:])}
	}
	ids := make([]string, uploadBlocks)
	var list bytes.Buffer
	list.WriteString(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	for i := range ids {
		ids[i] = base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%06d", i))
		list.WriteString("<Latest>" + ids[i] + "</Latest>")
	}
	list.WriteString("</BlockList>")
	blockList := list.Bytes()
	queries := make([]string, len(ids))
	for i, id := range ids {
		queries[i] = "comp=block&blockid=" + escapeQuery(id)
	}
	p, err := blobWorkload(e, tag, func(c string) func(int) (op, error) {
		return func(id int) (op, error) {
			prefix := c + "/w" + strconv.Itoa(id) + "-"
			n := 0
			return func() error {
				n++
				path := prefix + strconv.Itoa(n)
				for _, q := range queries {
					if _, err := e.t.do(&call{op: "Put Block", method: "PUT", base: e.t.acct.Blob, path: path,
						query: q, body: block, want: 201, hdr: hdr}, nil); err != nil {
						return err
					}
				}
				_, err := e.t.do(&call{op: "Put Block List", method: "PUT", base: e.t.acct.Blob, path: path,
					query: "comp=blocklist", body: blockList, want: 201,
					hdr: []string{"Content-Type", "application/xml"}}, nil)
				return err
			}, nil
		}
	})
	if p != nil {
		p.bytesPerOp = uploadBlock * uploadBlocks
	}
	return p, err
}

// trivial is Get Blob Service Properties: authenticated, no storage work
// beyond reading the service settings.
func trivial(e *env) (*prepared, error) {
	c := &call{op: "Get Blob Service Properties", method: "GET", base: e.t.acct.Blob, path: "/",
		query: "restype=service&comp=properties", want: 200}
	return &prepared{client: func(int) (op, error) {
		return func() error {
			_, err := e.t.do(c, nil)
			return err
		}, nil
	}}, nil
}
