package main

import (
	"fmt"
	"strings"
)

// workloads returns every workload, in the order they run by default.
func workloads() []*workload {
	return []*workload{
		{name: "blob-put-1k", desc: "Put Blob of 1 KiB, a new blob each time", prepare: blobPut1k},
		{name: "blob-get-1k", desc: "Get Blob of 1 KiB, round robin over 64 blobs", prepare: blobGet1k},
		{name: "blob-put-ifmatch", desc: "Put Blob with If-Match of the current ETag, each client on its own blob", prepare: blobPutIfMatch},
		{name: "blob-cas-hot", desc: "all clients race one blob: Get Blob Properties + Put Blob If-Match until it wins (one op = one win; only when named)",
			prepare: blobCASHot, named: true},
		{name: "blob-lease", desc: "Lease Blob acquire + release (one op = both), each client on its own blob", prepare: blobLease},
		{name: "disk-write-64m", desc: "no server: write 64 MiB to a new file in --disk-dir and fdatasync it, as dd conv=fdatasync (the disk's durable rate; only when named)",
			prepare: diskWrite64m, named: true, local: true},
		{name: "blob-upload-64m", desc: "64 MiB block blob: 16 Put Block of 4 MiB + Put Block List (one op = one blob)", prepare: blobUpload64m},
		{name: "blob-upload-64m-md5", desc: "as blob-upload-64m, each Put Block with its Content-MD5 (the server hashes every byte, as for Put Range)",
			prepare: blobUpload64mMD5},
		{name: "blob-put-setmeta-1k", desc: "Put Blob of 1 KiB + Set Blob Metadata on it (one op = both), a new blob each time", prepare: blobPutSetMeta1k},
		{name: "file-put-1k", desc: "Create File of 1 KiB + Put Range of 1 KiB (one op = both), a new file each time", prepare: filePut1k},
		{name: "file-get-1k", desc: "Get File of 1 KiB, round robin over 64 files", prepare: fileGet1k},
		{name: "file-upload-64m", desc: "64 MiB file: Create File + 16 Put Range of 4 MiB (one op = one file)", prepare: fileUpload64m},
		{name: "table-insert", desc: "Insert Entity (no echo), ~200 bytes of JSON", prepare: tableInsert},
		{name: "table-replace-ifmatch", desc: "Update Entity (replace) with If-Match, each client on its own entity", prepare: tableReplaceIfMatch},
		{name: "table-query-partition", desc: "Query Entities returning 500 of a 1,000-entity partition", prepare: tableQueryPartition},
		{name: "queue-put", desc: "Put Message of ~100 bytes", prepare: queuePut},
		{name: "queue-receive-delete", desc: "Get Messages (1) + Delete Message (one op = both) from a preloaded queue", prepare: queueReceiveDelete},
		{name: "trivial", desc: "Get Blob Service Properties: per-request overhead (auth, routing, response)", prepare: trivial},
	}
}

// selectWorkloads returns the workloads named in the comma-separated list
// spec ("all" or empty for every one), in the order given.
func selectWorkloads(spec string) ([]*workload, error) {
	all := workloads()
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "all" {
		var out []*workload
		for _, w := range all {
			if !w.named {
				out = append(out, w)
			}
		}
		return out, nil
	}
	byName := make(map[string]*workload, len(all))
	for _, w := range all {
		byName[w.name] = w
	}
	var out []*workload
	seen := map[string]bool{}
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		w, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (see --list)", n)
		}
		seen[n] = true
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workload selected")
	}
	return out, nil
}
