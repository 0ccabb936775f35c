package blob

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// sampleBlob sets every stored field of Blob (and of the types it holds)
// to a value other than its zero value.
func sampleBlob() *Blob {
	t0 := time.Date(2026, 11, 22, 2, 40, 1, 123456789, time.UTC)
	return &Blob{
		Name: "dir/naïve name", Snapshot: "2026-11-22T02:40:01.1234567Z", Type: PageBlob,
		Created: t0, Modified: t0.Add(time.Second).In(time.FixedZone("", 5*3600+1800)),
		ETag: 0x8DE0123456789AB, Size: 5 << 20,
		Props: Props{ContentType: "text/plain", ContentEncoding: "gzip", ContentLanguage: "de",
			ContentMD5: []byte{1, 2, 3, 4}, ContentDisposition: "inline", CacheControl: "no-cache"},
		Meta:  []KV{{"Owner", "me"}, {"bad", "\xff\xfex"}},
		Lease: lease.State{Phase: lease.Leased, ID: "id", Duration: 30, Expiry: t0.Add(30 * time.Second), BreakTime: t0.Add(time.Minute)},
		Blocks: []Block{
			{ID: "QUFB", Size: 3, Segs: []Segment{{Data: []byte("abc"), Len: 3}}},
			{ID: "QkJC", Size: 10, Segs: []Segment{{Ref: "chunk1", Off: 7, Len: 10}, {Len: 0, Data: []byte{}}}},
		},
		Pages:      []Page{{Start: 512, Seg: Segment{Ref: "chunk2", Len: 512}}, {Start: 4096, Seg: Segment{Data: []byte("p"), Len: 1}}},
		Seq:        -1,
		Tags:       []KV{{"k", "v"}},
		Copy:       &CopyInfo{ID: "cid", Source: "http://x/y", Status: "success", Progress: "1/1", Completion: t0, Description: "d"},
		AccessTier: "Hot", BlockIDLen: 4, AppendCount: 2, ExtBlocks: true, Sealed: true, TierChanged: time.Unix(1700000000, 5).UTC(),
		KeySHA256: "3QFFFpRA5+XANHqwwbT4yXDmrT/2JaLt/FKHjzhOdoE=", EncryptionScope: "scope1",
		RehydrateTo: "Hot", RehydratePriority: "High", RehydrateDone: time.Unix(1700003600, 0).UTC(),
		CopySnapshot: "2025-01-01T00:00:00.0000000Z", DestSnapshot: "2025-01-02T00:00:00.0000000Z", VersionID: "2025-01-03T00:00:00.0000000Z",
		ImmutableUntil: time.Unix(1800000000, 0).UTC(), ImmutableMode: ModeLocked, LegalHold: true, ExpiresOn: time.Unix(1800003600, 7).UTC(),
		PathCreated: true, EncryptionContext: "kid=1",
	}
}

// TestBlobRecordRoundTrip checks that a record reads back every field it
// was written with: times without their zone name or monotonic reading,
// empty slices as nil, invalid UTF-8 replaced by U+FFFD byte by byte.
func TestBlobRecordRoundTrip(t *testing.T) {
	full := sampleBlob()
	v := reflect.ValueOf(*full)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.IsExported() && f.Name != "AsOf" && v.Field(i).IsZero() {
			t.Fatalf("sampleBlob leaves %s zero: the codec test must cover every field", f.Name)
		}
	}
	t0 := time.Date(2026, 11, 22, 2, 40, 1, 5, time.UTC)
	small := &Blob{Name: "b", Type: BlockBlob, Created: t0, Modified: t0,
		Blocks: []Block{{Size: 1024, Segs: []Segment{{Len: 1024, Data: make([]byte, 1024)}}}}}
	wantFull := sampleBlob()
	wantFull.Meta[1][1] = "\uFFFD\uFFFDx"
	wantFull.Blocks[1].Segs[1].Data = nil
	for name, c := range map[string]struct{ in, want *Blob }{
		"full":  {full, wantFull},
		"empty": {&Blob{}, &Blob{}},
		"small": {small, small},
		"emptySlices": {
			&Blob{Meta: []KV{}, Blocks: []Block{}, Pages: []Page{}, Tags: []KV{}, Props: Props{ContentMD5: []byte{}}},
			&Blob{}},
	} {
		rec := encodeBlob(c.in)
		if rec[0] != blobBinaryTag {
			t.Fatalf("%s: record tag %#x", name, rec[0])
		}
		got, err := decodeBlob(rec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: reads back\n%#v\nwant\n%#v", name, got, c.want)
		}
	}
}

// TestBlobRecordBinaryCorrupt checks that every truncation of a record is
// reported as corrupt, never a panic or a partial record.
func TestBlobRecordBinaryCorrupt(t *testing.T) {
	rec := encodeBlob(sampleBlob())
	for n := 1; n < len(rec); n++ {
		if b, err := decodeBlob(rec[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: decoded %+v", n, b)
		}
	}
	if _, err := decodeBlob(append(rec, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

// The keys must stay byte for byte what earlier versions stored.
func TestTupleKeysUnchanged(t *testing.T) {
	s := keyenc.AppendString
	if got, want := blobKey("a", "c\x00", "n", "s"), s(s(s(s([]byte{kindBlob}, "a"), "c\x00"), "n"), "s"); string(got) != string(want) {
		t.Errorf("blob key %x, want %x", got, want)
	}
	if got, want := containerKey("a", "c"), s(s([]byte{kindContainer}, "a"), "c"); string(got) != string(want) {
		t.Errorf("container key %x, want %x", got, want)
	}
	if got, want := stagingKey("a", "c", "n\x00"), s(s(s([]byte{kindStaging}, "a"), "c"), "n\x00"); string(got) != string(want) {
		t.Errorf("staging key %x, want %x", got, want)
	}
}

// TestPageRecordBytes pins the page store's records (content.EncodePage)
// to the bytes page blobs wrote before the store was shared: a blob record
// holding one block named by the page's start.
func TestPageRecordBytes(t *testing.T) {
	for _, p := range []Page{
		{Start: 0, Seg: Segment{Ref: "chunk", Off: 3, Len: 512}},
		{Start: 1 << 40, Seg: Segment{Len: 1024, Data: bytes.Repeat([]byte{7}, 1024)}},
		{Start: 512, Seg: Segment{Len: 512}},
	} {
		old := encodeBlock(&Block{ID: strconv.FormatInt(p.Start, 10), Size: p.Seg.Len, Segs: []Segment{p.Seg}})
		if got := content.EncodePage(p); !bytes.Equal(got, old) {
			t.Fatalf("EncodePage(%+v) = %x, want %x", p, got, old)
		}
		got, err := content.DecodePage(old)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Fatalf("DecodePage = %+v, %v; want %+v", got, err, p)
		}
	}
	if _, err := content.DecodePage(encodeBlock(&Block{ID: "x", Size: 1, Segs: []Segment{{Len: 1}}})); err == nil {
		t.Fatal("DecodePage accepted a non-numeric start")
	}
}
