package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

// TestNoSequentialScans pins preferIndexScans: on a table of a few rows,
// where PostgreSQL's planner would otherwise scan the whole table (and,
// under SERIALIZABLE, lock all of it against every concurrent writer),
// each read and checked write lazuli runs on its connections goes through
// an index.
func TestNoSequentialScans(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{URL: pgtest.NewDatabase(t), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.pool.Exec(ctx, "INSERT INTO lazuli_kv SELECT i, int8send(i), 'v' FROM generate_series(1, 20) i"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE lazuli_kv"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql  string
		args []any
	}{
		{sqlGet, []any{int64(3)}},
		{sqlGetMany, []any{[]int64{3, 4, 5}}},
		{sqlUpdate, []any{int64(3), []byte{0, 0, 0, 0, 0, 0, 0, 3}, []byte("w")}},
		{sqlDelete, []any{[]int64{3}, [][]byte{{0, 0, 0, 0, 0, 0, 0, 3}}}},
		{sqlCheck, []any{int64(3), []byte{0, 0, 0, 0, 0, 0, 0, 3}, []byte("v")}},
		{sqlCheckMany, []any{[]int64{3, 4}, [][]byte{{0, 0, 0, 0, 0, 0, 0, 3}, {0, 0, 0, 0, 0, 0, 0, 4}}, [][]byte{[]byte("v"), nil}, 2}},
		{sqlCheckValues[2], []any{int64(3), []byte{0, 0, 0, 0, 0, 0, 0, 3}, []byte("v"), int64(4), []byte{0, 0, 0, 0, 0, 0, 0, 4}, nil}},
		{sqlScanUp, []any{[]byte{0}, []byte{1}, 32}},
		{sqlScanDown, []any{[]byte{0}, []byte(reservedKeys), 32}},
	} {
		if p := explain(t, s, c.sql, c.args); strings.Contains(p, "Seq Scan") {
			t.Errorf("%s\nplans a sequential scan:\n%s", c.sql, p)
		}
	}
}

// TestPointWritesUsePrimaryKey: a rewrite or delete of known keys finds
// its rows through the primary key, as point reads do, even where the
// planner would rather use lazuli_kv_k (a large table with current
// statistics): through that index, under SERIALIZABLE, it would lock the
// key-ordered page of its row's neighbours (a queue's count shards, say)
// against every concurrent writer of them.
func TestPointWritesUsePrimaryKey(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{URL: pgtest.NewDatabase(t), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.pool.Exec(ctx, "INSERT INTO lazuli_kv SELECT i, int8send(i), 'v' FROM generate_series(1, 20000) i"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE lazuli_kv"); err != nil {
		t.Fatal(err)
	}
	k := []byte{0, 0, 0, 0, 0, 0, 0, 3}
	for _, c := range []struct {
		sql  string
		args []any
	}{
		{sqlUpdate, []any{int64(3), k, []byte("w")}},
		{sqlUpdateMany, []any{[]int64{3, 3}, [][]byte{k, k}, [][]byte{k, k}, 2}},
		{sqlDelete, []any{[]int64{3, 3}, [][]byte{k, k}}},
		{sqlCheck, []any{int64(3), k, []byte("v")}},
		{sqlCheckMany, []any{[]int64{3, 4}, [][]byte{k, k}, [][]byte{[]byte("v"), nil}, 2}},
		{sqlCheckValues[2], []any{int64(3), k, []byte("v"), int64(4), k, nil}},
	} {
		p := explain(t, s, c.sql, c.args)
		if strings.Contains(p, "lazuli_kv_k") || !strings.Contains(p, "lazuli_kv_pkey") {
			t.Errorf("%s\ndoes not go through the primary key:\n%s", c.sql, p)
		}
	}
}

func explain(t *testing.T, s *Store, sql string, args []any) string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", sql, err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
