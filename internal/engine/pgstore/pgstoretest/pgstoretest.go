// Package pgstoretest opens the postgres engine for tests of the packages
// built on it, on a database of pgtest's server. It is apart from pgtest,
// which the engine's own tests import, so that it may import the engine.
package pgstoretest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

// MustOpen opens an engine on a new empty database, closed when tb ends,
// and returns it with the database's URL (for more instances on it).
// maxConns bounds its pool (0: the engine's default).
func MustOpen(tb testing.TB, maxConns int32) (*pgstore.Store, string) {
	tb.Helper()
	url := pgtest.NewDatabase(tb)
	return MustOpenURL(tb, url, maxConns), url
}

// MustOpenURL opens an engine on the database at url, closed when tb
// ends: another instance on a database tests share.
func MustOpenURL(tb testing.TB, url string, maxConns int32) *pgstore.Store {
	tb.Helper()
	e, err := pgstore.Open(context.Background(), pgstore.Options{URL: url, MaxConns: maxConns})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// MustAnalyze brings the planner's statistics of the database at url up
// to date, as autovacuum keeps them in a database in use: which index
// PostgreSQL reads (and so which pages its SERIALIZABLE locks cover)
// depends on them, and tests that count retries need a realistic choice.
func MustAnalyze(tb testing.TB, url string) {
	tb.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "ANALYZE"); err != nil {
		tb.Fatal(err)
	}
}
