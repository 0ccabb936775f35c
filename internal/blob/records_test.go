package blob

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
)

// goldenBlobRecords are records as lazuli writes them, so that a change of
// the record primitives cannot change what is on disk unnoticed.
var goldenBlobRecords = []struct {
	name string
	enc  func() []byte
	hex  string
}{
	{"full blob", func() []byte { return encodeBlob(sampleBlob()) }, "020f6469722f6e61c3af7665206e616d651c323032362d31312d32325430323a34303a30312e313233343536375a0850616765426c6f620182d892b00d959aef3a000184d892b00d959aef3ab0b502ab939eabb4a480ef08808080050a746578742f706c61696e04677a6970026465040102030406696e6c696e65086e6f2d636163686502054f776e6572026d650362616407efbfbdefbfbd78020269643c01bed892b00d959aef3a0001fad892b00d959aef3a000204515546420601000006010361626304516b4a431402066368756e6b310e14000000000100028008066368756e6b320080080080400000020101700101016b017601036369640a687474703a2f2f782f79077375636365737303312f310182d892b00d959aef3a00016403486f7408040180c49fd50c0500ff2c3351464646705241352b58414e487177776254347958446d72542f324a614c742f464b486a7a684f646f453d0673636f70653103486f74044869676801a0fc9fd50c00001c323032352d30312d30315430303a30303a30302e303030303030305a1c323032352d30312d30325430303a30303a30302e303030303030305a1c323032352d30312d30335430303a30303a30302e303030303030305a1f064c6f636b65640180c8ceb40d000001a080cfb40d0700056b69643d31"},
	{"empty block blob", func() []byte { return encodeBlob(&Blob{Name: "n", Type: BlockBlob}) }, "02016e0009426c6f636b426c6f620000000000000000000000000000000000000000000000000000"},
	{"zoned times", func() []byte {
		t := time.Date(1969, 12, 31, 23, 59, 59, 1, time.FixedZone("", -7*3600))
		return encodeBlob(&Blob{Name: "z", Type: AppendBlob, Created: t, Modified: t.UTC(), Size: -1, ETag: 1 << 63})
	}, "02017a000a417070656e64426c6f6201de890301df890301de89030100808080808080808080010100000000000000000000000000000000000000000000"},
	{"page", func() []byte {
		return content.EncodePage(Page{Start: 1 << 40, Seg: Segment{Ref: "chunk", Off: 3, Len: 512, Data: []byte("xy")}})
	}, "0200000000000000000000000000000000000000010d31303939353131363237373736800801056368756e6b06800801027879000000000000000000"},
}

// TestRecordBytesUnchanged pins the bytes of blob and page records, and
// that they read back to what was written.
func TestRecordBytesUnchanged(t *testing.T) {
	for _, g := range goldenBlobRecords {
		got := g.enc()
		if h := hex.EncodeToString(got); h != g.hex {
			t.Errorf("%s: record\n%s\nwant\n%s", g.name, h, g.hex)
		}
	}
	// The full blob's empty inline segment reads back as no inline bytes,
	// so only the others are written again as they were read.
	for _, g := range goldenBlobRecords[1:3] {
		v := g.enc()
		got, err := decodeBlob(v)
		if err != nil {
			t.Fatal(err)
		}
		if again := encodeBlob(got); !bytes.Equal(again, v) {
			t.Fatalf("re-encoded record differs:\n%x\n%x", again, v)
		}
	}
	p := Page{Start: 1 << 40, Seg: Segment{Ref: "chunk", Off: 3, Len: 512, Data: []byte("xy")}}
	if got, err := content.DecodePage(content.EncodePage(p)); err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("page = %+v, %v", got, err)
	}
}

func BenchmarkBlobRecordEncode(b *testing.B) {
	bl := sampleBlob()
	b.ReportAllocs()
	for b.Loop() {
		encodeBlob(bl)
	}
}

func BenchmarkBlobRecordDecode(b *testing.B) {
	v := encodeBlob(sampleBlob())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeBlob(v); err != nil {
			b.Fatal(err)
		}
	}
}
