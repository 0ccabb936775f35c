package pgstore

import "testing"

// TestRetryLane: the retry lane of a failed attempt follows from the keys
// it wrote, so that Updates racing for one key retry in the same lane
// whatever else they wrote, and Updates of unrelated keys spread over
// the lanes.
func TestRetryLane(t *testing.T) {
	attempt := func(hot string, others ...string) *tx {
		x := &tx{write: true}
		x.learn(hot, true) // read and found: a rewrite of an existing row
		x.Set([]byte(hot), []byte("v"))
		for _, k := range others {
			x.learn(k, false) // read and absent: a new row
			x.Set([]byte(k), []byte("v"))
		}
		return x
	}
	a := attempt("blob/one", "new/1", "new/2").lane()
	b := attempt("blob/one", "new/3").lane()
	if a < 0 || a != b {
		t.Fatalf("two writers of blob/one: lanes %d and %d, want one lane", a, b)
	}
	// Only new rows: the lane follows them.
	x := &tx{write: true}
	x.Insert([]byte("msg/1"), nil)
	if l := x.lane(); l < 0 || l >= laneCount {
		t.Fatalf("lane %d of an attempt that only inserted", l)
	}
	// Nothing written: no lane.
	if l := (&tx{write: true}).lane(); l != -1 {
		t.Fatalf("lane %d of an attempt that wrote nothing, want -1", l)
	}
	// Unrelated writers spread over the lanes.
	seen := map[int]bool{}
	for i := range 64 {
		seen[attempt(string(rune('a'+i%26))+"/"+string(rune('a'+i/26))).lane()] = true
	}
	if len(seen) < 16 {
		t.Fatalf("64 writers of distinct keys took %d lanes", len(seen))
	}
}
