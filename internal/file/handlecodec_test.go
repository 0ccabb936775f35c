package file

import (
	"reflect"
	"testing"
	"time"
)

// Handle records read back as they were written, every field; a cut or
// altered record is an error, never a panic.
func TestHandleRecordRoundTrip(t *testing.T) {
	full := &Handle{ID: 1 << 40, FileID: 7, ParentID: 3, Session: 1<<63 + 5, ClientIP: "10.0.0.1:445",
		Opened: time.Date(2026, 11, 28, 10, 30, 0, 123456789, time.FixedZone("", 3600)), Owner: 9,
		Access: 0xFFFFFFFF, ShareAccess: 7, Dir: true, DeleteOnClose: true,
		Locks:   []Lock{{Off: 0, Len: 1<<64 - 1, Exclusive: true}, {Off: 100, Len: 0}},
		UserSet: UserSetLastWrite | UserSetChange,
		Cache: &Caching{Oplock: true, Client: [16]byte{1, 2}, Key: [16]byte{3}, Parent: [16]byte{15: 4}, V2: true,
			State: 7, Breaking: true, BreakTo: 1, Sent: 3, Epoch: 65535}}
	for _, h := range []*Handle{full, {ID: 1, Opened: time.Unix(5, 0).UTC()}, {}} {
		got, err := decodeHandle(encodeHandle(h))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Opened.Equal(h.Opened) {
			t.Fatalf("Opened %v, want %v", got.Opened, h.Opened)
		}
		_, off1 := got.Opened.Zone()
		_, off2 := h.Opened.Zone()
		if off1 != off2 {
			t.Fatalf("Opened offset %d, want %d", off1, off2)
		}
		g, w := *got, *h
		g.Opened, w.Opened = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("read back\n%+v\nwant\n%+v", g, w)
		}
	}
	b := encodeHandle(full)
	for i := range b {
		if _, err := decodeHandle(b[:i]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", i, len(b))
		}
	}
	if _, err := decodeHandle(append(b, 0)); err == nil {
		t.Fatal("a record with a byte too many decoded")
	}
	if _, err := decodeHandle([]byte(`{"id":1}`)); err == nil {
		t.Fatal("a JSON record decoded")
	}
}
