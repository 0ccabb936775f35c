package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/storage"
)

// TestPlaceholders: a new database holds the placeholder rows, once
// however often it is opened; no Scan shows them, whatever its bounds
// and direction, while keys of fewer 0xFF bytes stay ordinary keys; and
// no Update may write or delete a reserved key.
func TestPlaceholders(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	for range 2 {
		s, err := Open(ctx, Options{URL: url, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM lazuli_kv").Scan(&n); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if n != placeholders {
			t.Fatalf("%d rows in a new database, want %d placeholders", n, placeholders)
		}
	}
	s, err := Open(ctx, Options{URL: url, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	near := []byte("\xff\xff\xff\xff\xff\xff\xff")
	err = s.Update(ctx, func(tx storage.Tx) error {
		if err := tx.Set([]byte(reservedKeys+"x"), []byte("v")); !errors.Is(err, errReservedKey) {
			t.Errorf("Set of a reserved key: %v, want %v", err, errReservedKey)
		}
		if err := tx.Delete([]byte(reservedKeys)); !errors.Is(err, errReservedKey) {
			t.Errorf("Delete of a reserved key: %v, want %v", err, errReservedKey)
		}
		return tx.Set(near, []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx storage.Tx) error {
		for _, c := range []struct {
			lower, upper []byte
			want         int
		}{
			{nil, nil, 1},
			{near, nil, 1},
			{[]byte{0xff}, []byte(reservedKeys + "\xff\xff\xff\xff\xff"), 1},
			{[]byte(reservedKeys), nil, 0},
			{append([]byte(reservedKeys), 0, 0, 0, 1), nil, 0},
		} {
			for _, reverse := range []bool{false, true} {
				it := tx.Scan(c.lower, c.upper, reverse)
				n := 0
				for it.Next() {
					if string(it.Key()) != string(near) {
						t.Errorf("Scan(%x, %x, %v) shows %x", c.lower, c.upper, reverse, it.Key())
					}
					n++
				}
				if err := it.Err(); err != nil {
					return err
				}
				if n != c.want {
					t.Errorf("Scan(%x, %x, %v): %d keys, want %d", c.lower, c.upper, reverse, n, c.want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
