package file

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// goldenNodes are node records as lazuli writes them, so that a change of
// the record primitives cannot change what is on disk unnoticed.
func goldenNodes() []struct {
	n   *Node
	hex string
} {
	now := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	return []struct {
		n   *Node
		hex string
	}{
		{&Node{}, "0100000000ffffffffffffffffff01000000ffffffffffffffffff01ffffffffffffffffff01ffffffffffffffffff01ffffffffffffffffff010000000000000000000000ffffffffffffffffff01ffffffffffffffffff0100000000"},
		{&Node{ID: 1<<63 - 1, Parent: rootParent, Name: "Ünïcode ☃.txt", Dir: true, Modified: now, ETag: 42, Size: 1 << 40,
			Attrs: AttrReadOnly | AttrArchive, CreationTime: now, LastWriteTime: now.Add(time.Second), ChangeTime: now.In(time.FixedZone("", 3600)),
			LastAccessTime: time.Unix(-5, 0), PermKey: "1*2",
			Props: content.Props{ContentType: "text/plain", ContentEncoding: "gzip", ContentLanguage: "de", ContentMD5: []byte{1, 2, 3},
				ContentDisposition: "inline", CacheControl: "no"},
			Meta: []content.KV{{"a", "1"}, {"B", ""}, {"bad", "\xff"}}, Lease: lease.State{Phase: lease.Breaking, ID: "id", Duration: -1,
				Expiry: now.Add(time.Minute), BreakTime: now.Add(time.Hour)},
			Copy:    &CopyInfo{ID: "c", Source: "s", Status: "success", Progress: "1/1", Completion: now, Description: "d"},
			Handles: 3, DeletePending: true}, "01ffffffffffffffff7fffffffffffffffffff0111c39c6ec3af636f646520e298832e74787401f89ad8d5f7a4eacc2f2a80808080804021f89ad8d5f7a4eacc2ff8c2ae8fffa4eacc2ff89ad8d5f7a4eacc2fffc7afa02503312a320a746578742f706c61696e04677a69700264650301020306696e6c696e65026e6f03016101310142000362616401ff0202696401f8fa92dab6a8eacc2ff89a9de1bdf6ebcc2f0101630173077375636365737303312f310164f89ad8d5f7a4eacc2f030100"},
		{&Node{Name: "small", Size: 3000, Inline: true}, "01000005736d616c6c00ffffffffffffffffff0100f02e00ffffffffffffffffff01ffffffffffffffffff01ffffffffffffffffff01ffffffffffffffffff010000000000000000000000ffffffffffffffffff01ffffffffffffffffff010000000100"},
		{&Node{Name: "small", Size: 3000, Inline: true, Exts: []Extent{{Start: 0, Seg: content.Segment{Len: 3, Data: []byte{1, 2, 3}}},
			{Start: 512, Seg: content.Segment{Len: 100}}, {Start: 2999, Seg: content.Segment{Len: 1, Data: []byte{9}}}}}, "01000005736d616c6c00ffffffffffffffffff0100f02e00ffffffffffffffffff01ffffffffffffffffff01ffffffffffffffffff01ffffffffffffffffff010000000000000000000000ffffffffffffffffff01ffffffffffffffffff0100000001030006010102038008c80100ee2e020109"},
	}
}

// TestRecordBytesUnchanged pins the bytes of node records, and that they
// read back to the same record.
func TestRecordBytesUnchanged(t *testing.T) {
	for i, g := range goldenNodes() {
		v := encodeNode(g.n)
		if h := hex.EncodeToString(v); h != g.hex {
			t.Errorf("node %d: record\n%s\nwant\n%s", i, h, g.hex)
		}
		n, err := decodeNode(v)
		if err != nil {
			t.Fatal(err)
		}
		if again := encodeNode(n); !bytes.Equal(again, v) {
			t.Fatalf("node %d: re-encoded record differs:\n%x\n%x", i, again, v)
		}
	}
}

func BenchmarkNodeRecordEncode(b *testing.B) {
	n := goldenNodes()[1].n
	b.ReportAllocs()
	for b.Loop() {
		encodeNode(n)
	}
}

func BenchmarkNodeRecordDecode(b *testing.B) {
	for _, i := range []int{1, 3} {
		v := encodeNode(goldenNodes()[i].n)
		b.Run([]string{1: "full", 3: "inline"}[i], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeNode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	v := encodeNode(goldenNodes()[1].n)
	b.Run("permkey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodePermKey(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
