package file

import (
	"reflect"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

func TestNodeCodecRoundTrip(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	for _, n := range []*Node{
		{},
		{ID: 1<<63 - 1, Parent: rootParent, Name: "Ünïcode ☃.txt", Dir: true, Modified: now, ETag: 42, Size: 1 << 40,
			Attrs: AttrReadOnly | AttrArchive, CreationTime: now, LastWriteTime: now.Add(time.Second), ChangeTime: now, LastAccessTime: now,
			PermKey: "1*2", Props: blob.Props{ContentType: "text/plain", ContentMD5: []byte{1, 2, 3}, CacheControl: "no"},
			Meta: []blob.KV{{"a", "1"}, {"B", ""}}, Lease: lease.State{Phase: lease.Leased, ID: "id", Duration: -1},
			Copy: &CopyInfo{ID: "c", Source: "s", Status: "success", Progress: "1/1", Completion: now}, Handles: 3, DeletePending: true},
	} {
		got, err := decodeNode(encodeNode(n))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, n) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, n)
		}
	}
}

// FuzzDecodeNode: a damaged record is an error, never a panic.
func FuzzDecodeNode(f *testing.F) {
	f.Add(encodeNode(&Node{Name: "x", Meta: []blob.KV{{"k", "v"}}, Copy: &CopyInfo{ID: "c"}}))
	f.Add([]byte{nodeRecordV1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := decodeNode(b); err == nil {
			if _, err := decodeNode(encodeNode(n)); err != nil {
				t.Fatalf("re-encoded record unreadable: %v", err)
			}
		}
	})
}
