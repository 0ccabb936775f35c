package server

import (
	"context"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/storage"
)

// Recovered is what a data directory held when the server opened it.
type Recovered struct {
	// Accounts is the number of configured accounts holding at least one
	// container, queue or table.
	Accounts                           int
	Containers, Queues, Tables, Shares int
	// Bytes is the size of the files in the data directory (zero for an
	// engine without one).
	Bytes int64
	// Took is how long opening the engine (its recovery) took.
	Took time.Duration
}

// countRecovered counts what the engine holds for the configured
// accounts and the bytes under dir.
func countRecovered(ctx context.Context, eng storage.Engine, accounts []string, dir string) (Recovered, error) {
	var r Recovered
	err := eng.View(ctx, func(tx storage.Tx) error {
		r = Recovered{}
		for _, acct := range accounts {
			c, err := countKeys(tx, blob.ContainersKeyPrefix(acct), nil)
			if err != nil {
				return err
			}
			q, err := countKeys(tx, queue.QueuesKeyPrefix(acct), nil)
			if err != nil {
				return err
			}
			t, err := countKeys(tx, table.TablesKeyPrefix(acct), nil)
			if err != nil {
				return err
			}
			sh, err := countKeys(tx, file.SharesKeyPrefix(acct), file.IsShareKey)
			if err != nil {
				return err
			}
			r.Containers, r.Queues, r.Tables, r.Shares = r.Containers+c, r.Queues+q, r.Tables+t, r.Shares+sh
			if c+q+t+sh > 0 {
				r.Accounts++
			}
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	if dir == "" {
		return r, nil
	}
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				r.Bytes += info.Size()
			}
		}
		return nil
	})
	return r, nil
}

// countKeys counts the keys under prefix that keep accepts (all of them
// when keep is nil).
func countKeys(tx storage.Tx, prefix []byte, keep func([]byte) bool) (int, error) {
	it := tx.Scan(prefix, keyenc.PrefixEnd(prefix), false)
	defer it.Close()
	n := 0
	for it.Next() {
		if keep == nil || keep(it.Key()) {
			n++
		}
	}
	return n, it.Err()
}

// logRecovered logs what the data directory dir (or, with dir "", the
// database) held once the engine was open, and how long opening it took.
func (s *Server) logRecovered(ctx context.Context, dir string, took time.Duration) {
	names := []string{auth.DevAccount}
	for _, a := range s.cfg.Accounts {
		if a.Name != auth.DevAccount {
			names = append(names, a.Name)
		}
	}
	r, err := countRecovered(ctx, s.engine, names, dir)
	if err != nil {
		s.cfg.Log.Warn("could not count the recovered data", "err", err)
		return
	}
	r.Took = took
	s.recovered = r
	where := dir
	if where == "" {
		where = "database"
	}
	s.cfg.Log.Info("data directory opened", "location", where, "accounts", len(names), "accounts_with_data", r.Accounts,
		"containers", r.Containers, "queues", r.Queues, "tables", r.Tables, "shares", r.Shares,
		"bytes_on_disk", r.Bytes, "took", r.Took.Round(time.Millisecond).String())
}
