package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// diskWrite64m measures the disk itself, no server: each client writes
// 64 MiB to a new file in 4 MiB writes and fdatasyncs it, as
// `dd bs=4M count=16 conv=fdatasync` does, so that with as many clients
// as the upload workloads it is the durable write rate those uploads
// cannot beat on this file system. Files stay until the end, as the
// uploads' blobs do.
func diskWrite64m(e *env) (*prepared, error) {
	if e.diskDir == "" {
		err := errors.New("no --disk-dir: the directory whose file system to measure")
		e.noteSetupFailure(err)
		return nil, err
	}
	dir, err := os.MkdirTemp(e.diskDir, "lazuli-bench-disk-"+e.prefix+"-")
	if err != nil {
		e.noteSetupFailure(err)
		return nil, err
	}
	block := pattern(uploadBlock)
	return &prepared{bytesPerOp: uploadBlock * uploadBlocks, cleanup: func() { os.RemoveAll(dir) },
		client: func(id int) (op, error) {
			prefix := filepath.Join(dir, "w"+strconv.Itoa(id)+"-")
			n := 0
			return func() error {
				n++
				return writeSynced(prefix+strconv.Itoa(n), block, uploadBlocks)
			}, nil
		}}, nil
}

// writeSynced creates path, writes block count times and fdatasyncs it.
func writeSynced(path string, block []byte, count int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	for range count {
		if _, err := f.Write(block); err != nil {
			f.Close()
			return err
		}
	}
	if err := datasync(f); err != nil {
		f.Close()
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	return f.Close()
}
