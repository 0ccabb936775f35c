package blob

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgstoretest"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// writeCount counts the Update calls and key writes made through it.
type writeCount struct {
	storage.Engine
	updates, sets *atomic.Int64
}

func (e writeCount) Update(ctx context.Context, fn func(storage.Tx) error) error {
	e.updates.Add(1)
	return e.Engine.Update(ctx, func(tx storage.Tx) error { return fn(setCount{tx, e.sets}) })
}

type setCount struct {
	storage.Tx
	n *atomic.Int64
}

func (t setCount) Set(k, v []byte) error { t.n.Add(1); return t.Tx.Set(k, v) }

func upnKeys(t *testing.T, e storage.Engine, acct string) int {
	t.Helper()
	n := 0
	lo := keyenc.AppendString(keyenc.AppendString([]byte{kindUPN}, acct), "u")
	err := e.View(context.Background(), func(tx storage.Tx) error {
		n = 0
		it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A user's name is written when it is new or changed, and read by every
// service on the engine (another instance, or this one after a restart).
func TestLearnUPNWritesOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	e := memstore.New()
	var updates, sets atomic.Int64
	s := New(writeCount{e, &updates, &sets}, time.Now, func() string { return "id" })
	for range 100 {
		if err := s.LearnUPN(ctx, "acct", "oid-alice", "alice@contoso.com"); err != nil {
			t.Fatal(err)
		}
	}
	if updates.Load() != 1 || sets.Load() != 2 {
		t.Fatalf("100 requests by one user: %d updates, %d writes, want 1 and 2", updates.Load(), sets.Load())
	}
	if err := s.LearnUPN(ctx, "acct", "oid-alice", "alice@fabrikam.com"); err != nil {
		t.Fatal(err)
	}
	if updates.Load() != 2 || sets.Load() != 3 {
		t.Fatalf("a new name: %d updates, %d writes, want 2 and 3", updates.Load(), sets.Load())
	}
	other := New(writeCount{e, &updates, &sets}, time.Now, func() string { return "id" })
	names, err := other.UPNs(ctx, "acct", []string{"oid-alice", "oid-bob", "$superuser", "oid-alice"})
	if err != nil || len(names) != 1 || names["oid-alice"] != "alice@fabrikam.com" {
		t.Fatalf("other instance: %v %v", names, err)
	}
	if names, _ := other.UPNs(ctx, "acct2", []string{"oid-alice"}); len(names) != 0 {
		t.Fatalf("another account: %v", names)
	}
	// The other instance has not cached the pair: it reads, writes nothing.
	if err := other.LearnUPN(ctx, "acct", "oid-alice", "alice@fabrikam.com"); err != nil {
		t.Fatal(err)
	}
	if sets.Load() != 3 {
		t.Fatalf("known pair rewritten: %d writes", sets.Load())
	}
	// Special names, empty and oversized values are not recorded.
	for _, c := range [][2]string{{"$superuser", "root@contoso.com"}, {"", "x@contoso.com"}, {"oid-x", ""},
		{strings.Repeat("o", MaxUPNLength+1), "x@contoso.com"}, {"oid-x", strings.Repeat("x", MaxUPNLength+1)},
		{"oid-x", "a,user:evil:rwx"}, {"oid-x", "x@contoso.com\r\nSet-Cookie: a"}, {"oid-x", "bad name"},
		{"oid-x", "$superuser"}, {"oid-x", "jos\u00e9@contoso.com"}} {
		if err := s.LearnUPN(ctx, "acct", c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	if n := upnKeys(t, e, "acct"); n != 1 {
		t.Fatalf("%d names stored, want 1", n)
	}
}

// A flood of forged tokens, each with a new object id, stores at most
// MaxUPNs names per account and then costs no engine work; the cache
// never holds more than the engine.
func TestLearnUPNCapped(t *testing.T) {
	e := memstore.New()
	raceUPNCap(t, e, e, 0)
}

// Two instances race to the cap on every engine: serializable updates
// keep the count exact (a smaller cap on SQLite, whose every update
// reaches the disk).
func TestLearnUPNCapRace(t *testing.T) {
	e, err := sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	raceUPNCap(t, e, e, 300)
}

// raceUPNCap races two instances, on e1 and e2 (the same engine, or two
// on one database), to the cap.
func raceUPNCap(t *testing.T, e1, e2 storage.Engine, limit int) {
	ctx := context.Background()
	e := e1
	var updates, sets atomic.Int64
	a := New(writeCount{e1, &updates, &sets}, time.Now, func() string { return "id" })
	b := New(writeCount{e2, &updates, &sets}, time.Now, func() string { return "id" })
	a.upns.limit, b.upns.limit = limit, limit
	max := a.upns.max()
	var wg sync.WaitGroup
	each := max/2 + max/10
	for i, s := range []*Service{a, b} {
		wg.Go(func() {
			for j := range each {
				if err := s.LearnUPN(ctx, "acct", fmt.Sprintf("forged-%d-%d", i, j), fmt.Sprintf("u%d-%d@evil.example", i, j)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := upnKeys(t, e, "acct"); n != max {
		t.Fatalf("%d names stored, want the cap %d", n, max)
	}
	for i, s := range []*Service{a, b} {
		// An instance that has not met the cap yet learns it now.
		if err := s.LearnUPN(ctx, "acct", fmt.Sprintf("late-%d", i), "late@evil.example"); err != nil {
			t.Fatal(err)
		}
		s.upns.mu.Lock()
		n, full := len(s.upns.accts["acct"].known), s.upns.accts["acct"].full
		s.upns.mu.Unlock()
		if n > max || !full {
			t.Fatalf("cache of %d names, full %v", n, full)
		}
	}
	before := updates.Load()
	for j := range 1000 {
		if err := a.LearnUPN(ctx, "acct", fmt.Sprintf("more-%d", j), "x@evil.example"); err != nil {
			t.Fatal(err)
		}
	}
	if updates.Load() != before {
		t.Fatalf("a full account still costs %d updates", updates.Load()-before)
	}
	// A recorded user's new name is still taken.
	if err := a.LearnUPN(ctx, "acct", "forged-0-0", "renamed@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if names, _ := b.UPNs(ctx, "acct", []string{"forged-0-0"}); names["forged-0-0"] != "renamed@contoso.com" {
		t.Fatalf("renamed: %v", names)
	}
	if n := upnKeys(t, e, "acct"); n != max {
		t.Fatalf("%d names stored after more, want %d", n, max)
	}
}

// Two instances on PostgreSQL: a name learned through one is translated
// by the other at once, and their race to the cap stops exactly at it.
func TestLearnUPNPostgres(t *testing.T) {
	ctx := context.Background()
	e1, url := pgstoretest.MustOpen(t, 8)
	e2 := pgstoretest.MustOpenURL(t, url, 8)
	a := New(e1, time.Now, func() string { return "id" })
	b := New(e2, time.Now, func() string { return "id" })
	if err := a.LearnUPN(ctx, "acct0", "oid-alice", "alice@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if names, err := b.UPNs(ctx, "acct0", []string{"oid-alice"}); err != nil || names["oid-alice"] != "alice@contoso.com" {
		t.Fatalf("other instance: %v %v", names, err)
	}
	raceUPNCap(t, e1, e2, 200)
}
