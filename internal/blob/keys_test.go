package blob

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// TestFlatAccountKeysNameFullPaths pins the key layout of an account
// without a hierarchical namespace: every record of a blob (record and
// snapshot, staging and staged blocks, append blocks, pages, long block
// list, tag index, soft-deleted copy and its expiry entry) is keyed by the
// blob's full name, whatever the key names of hierarchical namespaces do.
func TestFlatAccountKeysNameFullPaths(t *testing.T) {
	s, clk := softService(t)
	ctx := context.Background()
	ref := func(name string) Ref { return Ref{Account: "acct", Container: "cont", Name: name, Snapshot: ""} }
	in := func(data string) Ingested {
		in, err := s.Ingest(ctx, bytes.NewReader([]byte(data)), true, nil)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	var list []BlockListItem
	for i := 0; i <= ExtBlocksMin; i++ {
		if err := s.PutBlock(ctx, ref("d/e/block"), bid(i), in("x"), Cond{}); err != nil {
			t.Fatal(err)
		}
		list = append(list, BlockListItem{ID: bid(i), Kind: "Latest"})
	}
	if _, err := s.PutBlockList(ctx, PutBlockListRequest{Ref: ref("d/e/block"), Blocks: list, Tags: []KV{{"k", "v"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SnapshotBlob(ctx, ref("d/e/block"), nil, Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlock(ctx, ref("d/staged"), bid(0), in("s"), Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref("d/log"), Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AppendBlock(ctx, ref("d/log"), AppendRequest{Data: in("line\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref("d/disk"), Type: PageBlob, PageSize: 1024}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, ref("d/disk"), PutPageRequest{Start: 512, End: 1023, Data: in(string(bytes.Repeat([]byte{7}, 512)))}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "d/gone", "bye", Cond{})
	clk.add(time.Minute)
	if err := s.DeleteBlob(ctx, ref("d/gone"), "", Cond{}); err != nil {
		t.Fatal(err)
	}

	names := []string{"d/e/block", "d/staged", "d/log", "d/disk", "d/gone"}
	// The kinds whose keys are kind, account, container, name, ...; the
	// tag index is kind, account, tag, value, container, name; an expiry
	// entry kind, time, account, container, name, snapshot.
	seen := map[byte][]string{}
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		for _, kind := range []byte{kindBlob, kindStaging, kindBlock, kindAppend, kindPage, kindBlockList, kindTagIndex, kindDeleted, kindExpiry} {
			lo := []byte{kind}
			it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
			for it.Next() {
				rest := it.Key()[1:]
				skip := 2 // account, container
				if kind == kindTagIndex {
					skip = 4
				}
				if kind == kindExpiry {
					if _, rest, _ = keyenc.ReadUint64(rest); rest == nil {
						t.Fatalf("expiry key %q", it.Key())
					}
				}
				var name string
				var err error
				for i := 0; i <= skip; i++ {
					if name, rest, err = keyenc.ReadString(rest); err != nil {
						t.Fatalf("key %q: %v", it.Key(), err)
					}
				}
				if !slices.Contains(names, name) {
					t.Errorf("kind %c: key %q names %q, not a full name", kind, it.Key(), name)
				}
				if !slices.Contains(seen[kind], name) {
					seen[kind] = append(seen[kind], name)
				}
			}
			err := it.Err()
			it.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[byte][]string{
		kindBlob:      {"d/disk", "d/e/block", "d/log"},
		kindStaging:   {"d/staged"},
		kindBlock:     {"d/staged"},
		kindAppend:    {"d/log"},
		kindPage:      {"d/disk"},
		kindBlockList: {"d/e/block"},
		kindTagIndex:  {"d/e/block"},
		kindDeleted:   {"d/gone"},
		kindExpiry:    {"d/gone"},
	}
	for kind, w := range want {
		got := slices.Clone(seen[kind])
		slices.Sort(got)
		if !slices.Equal(got, w) {
			t.Errorf("kind %c: keys name %q, want %q", kind, got, w)
		}
	}
}
