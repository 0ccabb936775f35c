package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// createShare creates a share named name and returns its cleanup.
func createShare(e *env, name string) (func(), error) {
	if e.t.acct.File == nil {
		err := errors.New("the connection string names no FileEndpoint")
		e.noteSetupFailure(err)
		return nil, err
	}
	_, err := e.t.do(&call{op: "Create Share", method: "PUT", base: e.t.acct.File,
		path: "/" + name, query: "restype=share", want: 201}, nil)
	if err != nil {
		e.noteSetupFailure(err)
		return nil, err
	}
	return func() {
		_, _ = e.t.do(&call{op: "Delete Share", method: "DELETE", base: e.t.acct.File,
			path: "/" + name, query: "restype=share", want: 202}, nil)
	}, nil
}

// createFile is Create File of size bytes.
func createFile(t *target, path string, size int) error {
	_, err := t.do(&call{op: "Create File", method: "PUT", base: t.acct.File, path: path, want: 201,
		hdr: []string{"X-Ms-Type", "file", "X-Ms-Content-Length", strconv.Itoa(size)}}, nil)
	return err
}

// putRange is Put Range of body at off.
func putRange(t *target, path string, off int, body []byte) error {
	_, err := t.do(&call{op: "Put Range", method: "PUT", base: t.acct.File, path: path, query: "comp=range", body: body, want: 201,
		hdr: []string{"X-Ms-Range", "bytes=" + strconv.Itoa(off) + "-" + strconv.Itoa(off+len(body)-1), "X-Ms-Write", "update"}}, nil)
	return err
}

// fileWorkload prepares a workload that needs one share.
func fileWorkload(e *env, tag string, mk func(share string) func(id int) (op, error)) (*prepared, error) {
	name := e.uniqueName(tag)
	cleanup, err := createShare(e, name)
	if err != nil {
		return nil, err
	}
	return &prepared{client: mk("/" + name), cleanup: cleanup}, nil
}

func filePut1k(e *env) (*prepared, error) {
	body := pattern(smallBlobSize)
	p, err := fileWorkload(e, "fput", func(s string) func(int) (op, error) {
		return func(id int) (op, error) {
			prefix := s + "/w" + strconv.Itoa(id) + "-"
			n := 0
			return func() error {
				n++
				path := prefix + strconv.Itoa(n)
				if err := createFile(e.t, path, len(body)); err != nil {
					return err
				}
				return putRange(e.t, path, 0, body)
			}, nil
		}
	})
	if p != nil {
		p.bytesPerOp = smallBlobSize
	}
	return p, err
}

func fileGet1k(e *env) (*prepared, error) {
	name := e.uniqueName("fget")
	cleanup, err := createShare(e, name)
	if err != nil {
		return nil, err
	}
	s := "/" + name
	body := pattern(smallBlobSize)
	paths := make([]string, getBlobsPerRun)
	for i := range paths {
		paths[i] = s + "/f" + strconv.Itoa(i)
	}
	err = e.parallel(len(paths), func(i int) error {
		if err := createFile(e.t, paths[i], len(body)); err != nil {
			return err
		}
		return putRange(e.t, paths[i], 0, body)
	})
	if err != nil {
		return &prepared{cleanup: cleanup}, err
	}
	// Check once, outside the measured loop, that the data reads back.
	var buf bytes.Buffer
	if _, err := e.t.do(&call{op: "Get File", method: "GET", base: e.t.acct.File, path: paths[0], want: 200}, &buf); err != nil {
		e.noteSetupFailure(err)
		return &prepared{cleanup: cleanup}, err
	}
	if !bytes.Equal(buf.Bytes(), body) {
		err := fmt.Errorf("Get File returned %d bytes that differ from the %d written", buf.Len(), len(body))
		e.noteSetupFailure(err)
		return &prepared{cleanup: cleanup}, err
	}
	return &prepared{bytesPerOp: smallBlobSize, cleanup: cleanup, client: func(id int) (op, error) {
		n := id
		return func() error {
			n++
			_, err := e.t.do(&call{op: "Get File", method: "GET", base: e.t.acct.File,
				path: paths[n%len(paths)], want: 200}, nil)
			return err
		}, nil
	}}, nil
}

func fileUpload64m(e *env) (*prepared, error) {
	block := pattern(uploadBlock)
	p, err := fileWorkload(e, "fupload", func(s string) func(int) (op, error) {
		return func(id int) (op, error) {
			prefix := s + "/w" + strconv.Itoa(id) + "-"
			n := 0
			return func() error {
				n++
				path := prefix + strconv.Itoa(n)
				if err := createFile(e.t, path, uploadBlock*uploadBlocks); err != nil {
					return err
				}
				for i := 0; i < uploadBlocks; i++ {
					if err := putRange(e.t, path, i*uploadBlock, block); err != nil {
						return err
					}
				}
				return nil
			}, nil
		}
	})
	if p != nil {
		p.bytesPerOp = uploadBlock * uploadBlocks
	}
	return p, err
}
