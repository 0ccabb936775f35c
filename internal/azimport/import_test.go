package azimport

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/internal/tablehttp"
)

// writeLoki writes a LokiJS database file with the given collections, in
// the shape the reference emulator 3.35 writes (other top-level members
// and per-document "meta" and "$loki" members included, which the reader
// ignores).
func writeLoki(t *testing.T, path string, cols map[string][]any) {
	t.Helper()
	var list []map[string]any
	for name, docs := range cols {
		for i, d := range docs {
			d.(map[string]any)["$loki"] = i + 1
			d.(map[string]any)["meta"] = map[string]any{"revision": 0, "created": 1795794141317, "version": 0}
		}
		list = append(list, map[string]any{"name": name, "data": docs, "idIndex": nil, "binaryIndices": map[string]any{}})
	}
	b, err := json.Marshal(map[string]any{"filename": path, "collections": list, "databaseVersion": 1.5, "engineVersion": 1.5,
		"autosave": true, "persistenceMethod": "fs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type obj = map[string]any

// fixture writes a small reference emulator directory: a container with
// metadata, public access and an access policy; a block blob with a
// snapshot; a blob of two blocks; an append blob; a page blob; a deleted
// blob and an uncommitted one (not imported); a queue with messages (one
// received, one invisible, one expired); a table with typed entities.
func fixture(t *testing.T, now time.Time) string {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, BlobExtents), 0o755)
	os.Mkdir(filepath.Join(dir, QueueExtents), 0o755)
	extent := "9665052b-2a2e-48e8-b516-1335662c9860"
	content := []byte("hello azuritehello againAAAAABBBBBline1\nline2\n")
	page := make([]byte, 512)
	for i := range page {
		page[i] = 9
	}
	content = append(content, page...)
	os.WriteFile(filepath.Join(dir, BlobExtents, extent), content, 0o644)
	at := func(off, n int) obj { return obj{"id": extent, "offset": off, "count": n} }
	props := func(typ string, n int, extra obj) obj {
		p := obj{"blobType": typ, "contentLength": n, "contentType": "application/octet-stream", "etag": `"0x1D29F633CE0ECB0"`,
			"creationTime": "2026-11-27T15:42:21.550Z", "lastModified": "2026-11-27T15:42:21.550Z", "accessTier": "Hot", "accessTierInferred": true}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	blob := func(name, snapshot string, p obj, extra obj) obj {
		b := obj{"accountName": "devstoreaccount1", "containerName": "cont1", "name": name, "snapshot": snapshot, "deleted": false,
			"isCommitted": true, "properties": p}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	md5 := []any{124, 209, 230, 116, 91, 59, 254, 138, 133, 166, 160, 40, 220, 99, 59, 76}
	writeLoki(t, filepath.Join(dir, BlobDB), map[string][]any{
		"$SERVICES_COLLECTION$": {},
		"$CONTAINERS_COLLECTION$": {
			obj{"accountName": "devstoreaccount1", "name": "cont1", "metadata": obj{"owner": "ann"},
				"properties":   obj{"publicAccess": "container", "lastModified": "2026-11-27T15:42:21.392Z", "leaseState": "available"},
				"containerAcl": []any{obj{"id": "p1", "accessPolicy": obj{"start": "2026-01-01T00:00:00.0000000Z", "expiry": "2030-01-01T00:00:00.0000000Z", "permission": "rl"}}}},
		},
		"$BLOBS_COLLECTION$": {
			// The current blob first: the reader orders snapshots before it.
			blob("hello.txt", "", props("BlockBlob", 11, obj{"contentType": "text/plain", "lastModified": "2026-11-27T15:42:22.000Z"}),
				obj{"persistency": at(13, 11), "metadata": obj{"k": "v2"}}),
			blob("hello.txt", "2026-11-27T15:42:21.6300000Z", props("BlockBlob", 13, obj{"contentMD5": obj{"type": "Buffer", "data": md5},
				"cacheControl": "no-cache", "contentLanguage": "en"}),
				obj{"persistency": at(0, 13), "metadata": obj{"k": "v"}, "blobTags": obj{"blobTagSet": []any{obj{"key": "t1", "value": "x"}}}}),
			blob("blocks.bin", "", props("BlockBlob", 10, nil), obj{"committedBlocksInOrder": []any{
				obj{"name": "YmxvY2stMA==", "size": 5, "persistency": at(24, 5)}, obj{"name": "YmxvY2stMQ==", "size": 5, "persistency": at(29, 5)}}}),
			blob("log.txt", "", props("AppendBlob", 12, nil), obj{"committedBlocksInOrder": []any{
				obj{"name": "", "size": 6, "persistency": at(34, 6)}, obj{"name": "", "size": 6, "persistency": at(40, 6)}}}),
			blob("disk.vhd", "", props("PageBlob", 4096, obj{"blobSequenceNumber": 3}), obj{"pageRangesInOrder": []any{
				obj{"start": 512, "end": 1023, "persistency": at(46, 512)}}}),
			blob("gone.txt", "", props("BlockBlob", 0, nil), obj{"deleted": true}),
			blob("staged.txt", "", props("BlockBlob", 0, nil), obj{"isCommitted": false}),
		},
		"$BLOCKS_COLLECTION$": {},
	})
	writeLoki(t, filepath.Join(dir, BlobExtentDB), map[string][]any{
		"$EXTENTS_COLLECTION$": {obj{"id": extent, "locationId": "Default", "path": extent, "size": len(content)}},
	})
	qextent := "60c5c0f2-7cd4-4831-b945-4e9fa3835826"
	os.WriteFile(filepath.Join(dir, QueueExtents, qextent), []byte("firstsecondlaterold"), 0o644)
	iso := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	msg := func(id string, off, n int, inserted, expires, visible time.Time, dequeued int) obj {
		return obj{"accountName": "devstoreaccount1", "queueName": "jobs", "messageId": id, "popReceipt": "MjdOb3Y=",
			"timeNextVisible": visible.UnixMilli(), "persistency": obj{"id": qextent, "offset": off, "count": n},
			"insertionTime": iso(inserted), "expirationTime": iso(expires), "dequeueCount": dequeued}
	}
	t0 := now.Add(-time.Minute).Truncate(time.Millisecond)
	writeLoki(t, filepath.Join(dir, QueueDB), map[string][]any{
		"$SERVICES_COLLECTION$": {},
		"$QUEUES_COLLECTION$": {obj{"accountName": "devstoreaccount1", "name": "jobs", "metadata": obj{"m": "1"},
			"queueAcl": []any{obj{"id": "qp", "accessPolicy": obj{"start": "2026-01-01T00:00:00.0000000Z", "expiry": "2030-01-01T00:00:00.0000000Z", "permission": "rp"}}}}},
		"$MESSAGES_COLLECTION$": {
			msg("m2", 5, 6, t0.Add(time.Second), t0.Add(time.Hour), t0.Add(time.Second), 0),
			msg("m1", 0, 5, t0, t0.Add(7*24*time.Hour), t0.Add(2*time.Second), 1),
			msg("m3", 11, 5, t0.Add(2*time.Second), t0.Add(7*24*time.Hour), now.Add(10*time.Minute), 0),
			msg("m4", 16, 3, t0.Add(-2*time.Hour), t0.Add(-time.Hour), t0.Add(-2*time.Hour), 0),
		},
	})
	writeLoki(t, filepath.Join(dir, QueueExtentDB), map[string][]any{
		"$EXTENTS_COLLECTION$": {obj{"id": qextent, "locationId": "Default", "path": qextent, "size": 19}},
	})
	writeLoki(t, filepath.Join(dir, TableDB), map[string][]any{
		"$TABLES_COLLECTION$": {obj{"account": "devstoreaccount1", "table": "people",
			"tableAcl": []any{obj{"id": "tp", "accessPolicy": obj{"start": "2026-01-01T00:00:00Z", "expiry": "2030-01-01T00:00:00Z", "permission": "r"}}}}},
		"$SERVICES_COLLECTION$": {},
		"devstoreaccount1$people": {
			obj{"PartitionKey": "p1", "RowKey": "r1", "lastModifiedTime": "2026-11-27T15:42:22.6501912Z",
				"eTag": `W/"datetime'2026-11-27T15%3A42%3A22.6501912Z'"`,
				"properties": obj{"PartitionKey": "p1", "RowKey": "r1", "name": "Ann", "age": 42,
					"big": "9007199254740993", "big@odata.type": "Edm.Int64",
					"when": "2020-01-02T03:04:05.678Z", "when@odata.type": "Edm.DateTime",
					"ok": true, "ratio": 0.5, "ratio@odata.type": "Edm.Double",
					"bin": "AQID", "bin@odata.type": "Edm.Binary",
					"id": "YzlkYTY0NTUtMjEzZC00MmM5LTlhNzktM2U5MTQ5YTU3ODMz", "id@odata.type": "Edm.Guid",
					"Timestamp": "2026-11-27T15:42:22.6501912Z", "Timestamp@odata.type": "Edm.DateTime"}},
		},
	})
	return dir
}

func TestImportFixture(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	src, err := Read(fixture(t, now))
	if err != nil {
		t.Fatal(err)
	}
	eng := memstore.New()
	clock := &Clock{}
	s := Services{Blob: blob.New(eng, clock.Now, guid.NewString), Queue: queue.New(eng, clock.Now),
		Table: table.New(eng, table.Options{Now: clock.Now}), Clock: clock, DecodeEntity: tablehttp.DecodeEntity}
	rep, err := Import(ctx, src, s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Containers != 1 || rep.Blobs != 4 || rep.Snapshots != 1 || rep.Queues != 1 || rep.Messages != 3 ||
		rep.Tables != 1 || rep.Entities != 1 || rep.Received != 1 || len(rep.Skipped) != 1 {
		t.Errorf("report %+v", rep)
	}

	// Reads go through services on the real clock.
	bs := blob.New(eng, time.Now, guid.NewString)
	c, err := bs.GetContainer(ctx, "devstoreaccount1", "cont1", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Public != "container" || len(c.Meta) != 1 || c.Meta[0] != (blob.KV{"owner", "ann"}) || len(c.ACL) != 1 ||
		c.ACL[0].Permission != "rl" || c.ACL[0].Start != "2026-01-01T00:00:00.0000000Z" {
		t.Errorf("container %+v", c)
	}
	read := func(name, snapshot string) (*blob.Blob, string) {
		t.Helper()
		b, err := bs.GetBlob(ctx, blob.Ref{Account: "devstoreaccount1", Container: "cont1", Name: name, Snapshot: snapshot}, blob.Cond{}, "")
		if err != nil {
			t.Fatalf("%s@%s: %v", name, snapshot, err)
		}
		r := bs.Open(ctx, b, 0, b.Size)
		defer r.Close()
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b, string(data)
	}
	if b, data := read("hello.txt", ""); data != "hello again" || b.Props.ContentType != "text/plain" ||
		!b.Modified.Equal(time.Date(2026, 11, 27, 15, 42, 22, 0, time.UTC)) || b.Meta[0][1] != "v2" {
		t.Errorf("hello.txt: %q %+v %v", data, b.Props, b.Modified)
	}
	if b, data := read("hello.txt", "2026-11-27T15:42:21.6300000Z"); data != "hello azurite" || b.Props.CacheControl != "no-cache" ||
		b.Props.ContentLanguage != "en" || len(b.Props.ContentMD5) != 16 || b.Meta[0][1] != "v" || len(b.Tags) != 1 {
		t.Errorf("snapshot: %q %+v %v", data, b.Props, b.Tags)
	}
	if b, data := read("blocks.bin", ""); data != "AAAAABBBBB" || len(b.Blocks) != 2 {
		t.Errorf("blocks.bin: %q, %d blocks", data, len(b.Blocks))
	}
	if b, data := read("log.txt", ""); data != "line1\nline2\n" || b.Type != "AppendBlob" || b.AppendCount != 2 {
		t.Errorf("log.txt: %q %s %d", data, b.Type, b.AppendCount)
	}
	if b, data := read("disk.vhd", ""); b.Size != 4096 || b.Seq != 3 || data[512] != 9 || data[511] != 0 || data[1024] != 0 {
		t.Errorf("disk.vhd: %d %d", b.Size, b.Seq)
	}
	for _, name := range []string{"gone.txt", "staged.txt"} {
		if _, err := bs.GetBlob(ctx, blob.Ref{Account: "devstoreaccount1", Container: "cont1", Name: name}, blob.Cond{}, ""); err == nil {
			t.Errorf("%s was imported", name)
		}
	}

	qs := queue.New(eng, time.Now)
	msgs, err := qs.PeekMessages(ctx, "devstoreaccount1", "jobs", 32)
	if err != nil {
		t.Fatal(err)
	}
	// m1 (received, visible again) and m2; m3 is invisible, m4 expired.
	// In the order they become visible: m1 was received and became
	// visible again after m2 was put.
	if len(msgs) != 2 || msgs[0].Text != "second" || msgs[1].Text != "first" {
		t.Fatalf("messages %+v", msgs)
	}
	t0 := now.Add(-time.Minute).Truncate(time.Millisecond)
	if m := msgs[0]; !m.InsertionTime.Equal(t0.Add(time.Second)) || !m.ExpirationTime.Equal(t0.Add(time.Hour)) {
		t.Errorf("second: inserted %v expires %v, want %v %v", m.InsertionTime, m.ExpirationTime, t0.Add(time.Second), t0.Add(time.Hour))
	}
	if m := msgs[1]; !m.InsertionTime.Equal(t0) || !m.ExpirationTime.Equal(t0.Add(7*24*time.Hour)) {
		t.Errorf("first: inserted %v expires %v", m.InsertionTime, m.ExpirationTime)
	}

	if acl, err := qs.GetQueueACL(ctx, "devstoreaccount1", "jobs"); err != nil || len(acl) != 1 || acl[0].ID != "qp" ||
		acl[0].Permission != "rp" || !acl[0].Expiry.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("queue access policy %+v %v", acl, err)
	}

	ts := table.New(eng, table.Options{})
	if acl, err := ts.GetACL(ctx, "devstoreaccount1", "people"); err != nil || len(acl) != 1 || acl[0].ID != "tp" ||
		acl[0].Permission != "r" || !acl[0].Start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !acl[0].HasExpiry {
		t.Errorf("table access policy %+v %v", acl, err)
	}
	e, err := ts.GetEntity(ctx, "devstoreaccount1", "people", "p1", "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]odata.Value{
		"name": {Type: odata.String, Str: "Ann"}, "age": {Type: odata.Int32, Int: 42}, "big": {Type: odata.Int64, Int: 9007199254740993},
		"ok": {Type: odata.Boolean, Bool: true}, "ratio": {Type: odata.Double, Float: 0.5},
		"id": {Type: odata.Guid, Str: "c9da6455-213d-42c9-9a79-3e9149a57833"},
	}
	for _, p := range e.Props {
		if w, ok := want[p.Name]; ok && (w.Type != p.Value.Type || w.Str != p.Value.Str || w.Int != p.Value.Int || w.Bool != p.Value.Bool || w.Float != p.Value.Float) {
			t.Errorf("%s = %+v, want %+v", p.Name, p.Value, w)
		}
		if p.Name == "when" && (p.Value.Type != odata.DateTime || odata.FormatDateTime(p.Value.Int) != "2020-01-02T03:04:05.678Z") {
			t.Errorf("when = %+v (%s)", p.Value, odata.FormatDateTime(p.Value.Int))
		}
		if p.Name == "bin" && string(p.Value.Bytes) != "\x01\x02\x03" {
			t.Errorf("bin = %+v", p.Value)
		}
	}
	var order []string
	for _, p := range e.Props {
		order = append(order, p.Name)
	}
	// The stored order (the fixture's JSON is written with sorted keys).
	if strings.Join(order, ",") != "age,big,bin,id,name,ok,ratio,when" {
		t.Errorf("%d properties: %+v", len(e.Props), e.Props)
	}
	if got := odata.FormatDateTime(e.Timestamp); got != "2026-11-27T15:42:22.6501912Z" {
		t.Errorf("Timestamp %s", got)
	}

	// A second import into the same target stops at the first object
	// that already exists, naming it.
	if _, err := Import(ctx, src, s); err == nil {
		t.Error("a second import succeeded")
	}
}

func TestReadRefusesOtherDirectories(t *testing.T) {
	if _, err := Read(t.TempDir()); err == nil {
		t.Error("an empty directory read as the reference emulator's")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, BlobDB), []byte("{not json"), 0o644)
	if _, err := Read(dir); err == nil {
		t.Error("a broken database read")
	}
}
