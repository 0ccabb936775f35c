package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// ChunkStore keeps chunks in memory.
type ChunkStore struct {
	mu   sync.RWMutex
	seq  atomic.Uint64
	data map[storage.ChunkRef]memChunk
	// closed is the owning Store's flag; nil for a standalone store.
	closed *atomic.Bool
}

type memChunk struct {
	b       []byte
	written time.Time
}

// NewChunkStore returns an empty in-memory chunk store.
func NewChunkStore() *ChunkStore {
	return &ChunkStore{data: make(map[storage.ChunkRef]memChunk)}
}

func (c *ChunkStore) isClosed() bool { return c.closed != nil && c.closed.Load() }

// Put implements storage.ChunkStore.
func (c *ChunkStore) Put(ctx context.Context, r io.Reader) (storage.ChunkRef, int64, error) {
	if c.isClosed() {
		return "", 0, storage.ErrClosed
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, r)
	if err != nil {
		return "", 0, err
	}
	ref := storage.ChunkRef(fmt.Sprintf("m%016x", c.seq.Add(1)))
	c.mu.Lock()
	c.data[ref] = memChunk{b: buf.Bytes(), written: time.Now()}
	c.mu.Unlock()
	return ref, n, nil
}

// Open implements storage.ChunkStore.
func (c *ChunkStore) Open(ctx context.Context, ref storage.ChunkRef, off, n int64) (io.ReadCloser, error) {
	if c.isClosed() {
		return nil, storage.ErrClosed
	}
	if off < 0 {
		return nil, fmt.Errorf("memstore: negative chunk offset %d", off)
	}
	c.mu.RLock()
	ch, ok := c.data[ref]
	c.mu.RUnlock()
	if !ok {
		return nil, storage.ErrNotFound
	}
	b := ch.b
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	b = b[off:]
	if n >= 0 && n < int64(len(b)) {
		b = b[:n]
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// Delete implements storage.ChunkStore.
func (c *ChunkStore) Delete(ctx context.Context, refs []storage.ChunkRef) error {
	if c.isClosed() {
		return storage.ErrClosed
	}
	c.mu.Lock()
	for _, r := range refs {
		delete(c.data, r)
	}
	c.mu.Unlock()
	return nil
}

// Walk implements storage.ChunkStore.
func (c *ChunkStore) Walk(ctx context.Context, fn func(storage.ChunkRef, time.Time) error) error {
	if c.isClosed() {
		return storage.ErrClosed
	}
	c.mu.RLock()
	type e struct {
		r storage.ChunkRef
		t time.Time
	}
	all := make([]e, 0, len(c.data))
	for r, ch := range c.data {
		all = append(all, e{r, ch.written})
	}
	c.mu.RUnlock()
	for _, x := range all {
		if err := fn(x.r, x.t); err != nil {
			return err
		}
	}
	return nil
}
