package file

import (
	"reflect"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

func TestNodeCodecRoundTrip(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	for _, n := range []*Node{
		{},
		{ID: 1<<63 - 1, Parent: rootParent, Name: "Ünïcode ☃.txt", Dir: true, Modified: now, ETag: 42, Size: 1 << 40,
			Attrs: AttrReadOnly | AttrArchive, CreationTime: now, LastWriteTime: now.Add(time.Second), ChangeTime: now, LastAccessTime: now,
			PermKey: "1*2", Props: content.Props{ContentType: "text/plain", ContentMD5: []byte{1, 2, 3}, CacheControl: "no"},
			Meta: []content.KV{{"a", "1"}, {"B", ""}}, Lease: lease.State{Phase: lease.Leased, ID: "id", Duration: -1},
			Copy: &CopyInfo{ID: "c", Source: "s", Status: "success", Progress: "1/1", Completion: now}, Handles: 3, DeletePending: true},
		{Name: "small", Size: 3000, Inline: true},
		{Name: "small", Size: 3000, Inline: true, Exts: []Extent{{Start: 0, Seg: content.Segment{Len: 3, Data: []byte{1, 2, 3}}},
			{Start: 512, Seg: content.Segment{Len: 100}}, {Start: 2999, Seg: content.Segment{Len: 1, Data: []byte{9}}}}},
	} {
		got, err := decodeNode(encodeNode(n))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, n) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, n)
		}
		if k, err := decodePermKey(encodeNode(n)); err != nil || k != n.PermKey {
			t.Fatalf("decodePermKey = %q, %v; want %q", k, err, n.PermKey)
		}
	}
}

// FuzzDecodeNode: a damaged record is an error, never a panic.
func FuzzDecodeNode(f *testing.F) {
	f.Add(encodeNode(&Node{Name: "x", Meta: []content.KV{{"k", "v"}}, Copy: &CopyInfo{ID: "c"}}))
	f.Add([]byte{nodeRecordV1, 0xff})
	f.Add(encodeNode(&Node{Name: "f", Inline: true, Exts: []Extent{{Start: 5, Seg: content.Segment{Len: 2, Data: []byte{1, 2}}}, {Start: 9, Seg: content.Segment{Len: 4}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, kerr := decodePermKey(b)
		if n, err := decodeNode(b); err == nil {
			if kerr != nil || k != n.PermKey {
				t.Fatalf("decodePermKey = %q, %v; the record's key is %q", k, kerr, n.PermKey)
			}
			if _, err := decodeNode(encodeNode(n)); err != nil {
				t.Fatalf("re-encoded record unreadable: %v", err)
			}
		}
	})
}

// TestFormatTimeMatchesLayout: FormatTime writes what time.Format with
// TimeFormat writes.
func TestFormatTimeMatchesLayout(t *testing.T) {
	for _, tm := range []time.Time{
		{}, time.Unix(0, 0), time.Date(2024, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC),
	} {
		if got, want := FormatTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
	for i := int64(0); i < 2000; i++ {
		tm := time.Unix(0, i*7919*1e12+i*123457).UTC()
		if got, want := FormatTime(tm), tm.Format(TimeFormat); got != want {
			t.Fatalf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}
