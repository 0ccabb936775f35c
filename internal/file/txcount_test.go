package file

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// costs counts what one request asks of the engine.
type costs struct {
	updates, views, chunkPuts int
	gets, scans, writes       int
}

// costEngine counts the transactions, reads, writes and chunk puts made
// through it.
type costEngine struct {
	storage.Engine
	c *costs
}

func (e costEngine) Update(ctx context.Context, fn func(storage.Tx) error) error {
	e.c.updates++
	return e.Engine.Update(ctx, func(tx storage.Tx) error { return fn(costTx{tx, e.c}) })
}

func (e costEngine) View(ctx context.Context, fn func(storage.Tx) error) error {
	e.c.views++
	return e.Engine.View(ctx, func(tx storage.Tx) error { return fn(costTx{tx, e.c}) })
}

func (e costEngine) Chunks() storage.ChunkStore { return costChunks{e.Engine.Chunks(), e.c} }

type costChunks struct {
	storage.ChunkStore
	c *costs
}

func (s costChunks) Put(ctx context.Context, r io.Reader) (storage.ChunkRef, int64, error) {
	s.c.chunkPuts++
	return s.ChunkStore.Put(ctx, r)
}

type costTx struct {
	storage.Tx
	c *costs
}

func (t costTx) Get(k []byte) ([]byte, error) { t.c.gets++; return t.Tx.Get(k) }
func (t costTx) Set(k, v []byte) error        { t.c.writes++; return t.Tx.Set(k, v) }
func (t costTx) Delete(k []byte) error        { t.c.writes++; return t.Tx.Delete(k) }
func (t costTx) Scan(lo, hi []byte, rev bool) storage.Iterator {
	t.c.scans++
	return t.Tx.Scan(lo, hi, rev)
}

// TestSmallWriteCosts pins what lazuli-bench's file-put-1k asks of the
// engine, the work its Blob counterpart (Put Blob + Set Blob Metadata)
// does: Create File and a 1 KiB Put Range are one Update each (one
// durable commit, one fsync shared with other requests), no View, no
// Scan, no chunk (the bytes stay in the node record), and only the reads
// their checks need: the share, the name, its parent (for the inherited
// permission) and the share's usage for Create File; the share and each
// component of the path for Put Range.
func TestSmallWriteCosts(t *testing.T) {
	var c costs
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	svc, ctx := New(costEngine{eng, &c}, time.Now, newIDString), context.Background()
	_, err := svc.CreateShare(ctx, CreateShareRequest{Ref: ShareRef{Account: "a", Name: "s"}})
	mustNil(t, err)
	_, err = svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "d"}, Dir: true})
	mustNil(t, err)
	body := bytes.Repeat([]byte{1}, 1024)
	check := func(what string, want, maxGets costs, got costs) {
		t.Helper()
		gets := got.gets
		got.gets, want.gets = 0, 0
		if got != want || gets > maxGets.gets {
			t.Errorf("%s: %+v with %d reads, want %+v with at most %d", what, got, gets, want, maxGets.gets)
		}
	}
	for _, tc := range []struct {
		path                string
		createGets, putGets int
	}{{"f", 4, 2}, {"d/f", 4, 3}} {
		path := tc.path
		ref := Ref{Account: "a", Share: "s", Path: path}
		c = costs{}
		_, err := svc.Create(ctx, CreateRequest{Ref: ref, Size: 1024})
		mustNil(t, err)
		check("Create File "+path, costs{updates: 1, writes: 2}, costs{gets: tc.createGets}, c)

		c = costs{}
		data, err := svc.Ingest(ctx, bytes.NewReader(body), int64(len(body)), nil)
		mustNil(t, err)
		_, err = svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 1023, Data: data})
		mustNil(t, err)
		check("Put Range of 1 KiB at "+path, costs{updates: 1, writes: 1}, costs{gets: tc.putGets}, c)
	}
}
