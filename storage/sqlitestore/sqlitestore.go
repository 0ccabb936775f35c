// Package sqlitestore is the default, durable storage engine: SQLite
// through modernc.org/sqlite (pure Go) with group commit.
package sqlitestore

import (
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/memstore"
)

// Options configures the engine.
type Options struct {
	// Dir is the data directory.
	Dir string
	// Sync makes every commit and chunk fsync before it is acknowledged.
	Sync bool
}

// Open opens (creating if needed) the engine in opts.Dir.
//
// TODO: placeholder until the SQLite engine lands.
func Open(opts Options) (storage.Engine, error) {
	return memstore.New(), nil
}
