package keyenc

import (
	"bytes"
	"sort"
	"testing"
)

func TestStringOrderMatchesTupleOrder(t *testing.T) {
	names := []string{"", "a", "a\x00", "a\x00b", "a/b", "ab", "b", "\xff", "\xff\xff", "A", "a\x01"}
	type pair struct {
		s string
		k []byte
	}
	var ps []pair
	for _, n := range names {
		k := AppendString(nil, n)
		k = AppendUint64(k, 7)
		ps = append(ps, pair{n, k})
	}
	sort.Slice(ps, func(i, j int) bool { return bytes.Compare(ps[i].k, ps[j].k) < 0 })
	for i := 1; i < len(ps); i++ {
		if ps[i-1].s >= ps[i].s {
			t.Fatalf("order broken: %q before %q", ps[i-1].s, ps[i].s)
		}
	}
	for _, p := range ps {
		s, rest, err := ReadString(p.k)
		if err != nil || s != p.s {
			t.Fatalf("round trip %q: got %q, %v", p.s, s, err)
		}
		if v, _, err := ReadUint64(rest); err != nil || v != 7 {
			t.Fatalf("uint after %q: %d %v", p.s, v, err)
		}
	}
}

func TestPrefixRange(t *testing.T) {
	lo := AppendPrefix([]byte("x"), "ab")
	hi := PrefixEnd(lo)
	in := []string{"ab", "ab\x00", "abc", "ab/zz"}
	out := []string{"a", "aa", "ac", "b", "a\xff"}
	for _, s := range in {
		k := AppendString([]byte("x"), s)
		if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
			t.Errorf("%q should be in prefix range", s)
		}
	}
	for _, s := range out {
		k := AppendString([]byte("x"), s)
		if bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0 {
			t.Errorf("%q should be outside prefix range", s)
		}
	}
}

func TestInt64Order(t *testing.T) {
	vals := []int64{-1 << 63, -5, -1, 0, 1, 5, 1<<63 - 1}
	for i := 1; i < len(vals); i++ {
		a, b := AppendInt64(nil, vals[i-1]), AppendInt64(nil, vals[i])
		if bytes.Compare(a, b) >= 0 {
			t.Fatalf("%d !< %d", vals[i-1], vals[i])
		}
		v, _, _ := ReadInt64(b)
		if v != vals[i] {
			t.Fatalf("round trip %d got %d", vals[i], v)
		}
	}
}

func FuzzReadString(f *testing.F) {
	f.Add([]byte("abc\x00\x01"))
	f.Add([]byte("a\x00\xff\x00\x01rest"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, _, err := ReadString(b)
		if err != nil {
			return
		}
		k := AppendString(nil, s)
		s2, _, err := ReadString(k)
		if err != nil || s2 != s {
			t.Fatalf("re-encode mismatch")
		}
	})
}
