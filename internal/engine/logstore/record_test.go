package logstore

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// TestRecordLen: recordLen, from which append makes room in the file for
// a pending record, is the length appendRecord gives it, across the
// lengths where a uvarint grows a byte.
func TestRecordLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 127, 128, 16383, 16384, 70000}
	for range 200 {
		var ops []memstore.Op
		for range 1 + rng.IntN(4) {
			op := memstore.Op{Key: bytes.Repeat([]byte("k"), sizes[rng.IntN(len(sizes))]), Delete: rng.IntN(3) == 0}
			if !op.Delete {
				op.Value = bytes.Repeat([]byte("v"), sizes[rng.IntN(len(sizes))])
			}
			ops = append(ops, op)
		}
		if got, want := recordLen(ops), len(appendRecord(nil, ops, 0)); got != want {
			t.Fatalf("recordLen = %d, appendRecord wrote %d", got, want)
		}
	}
}
