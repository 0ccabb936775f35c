package pgstore

import (
	"bytes"
	"fmt"
	"testing"
)

// TestHintsBounded: the hints keep at most hintBytes of keys and values,
// copy what they keep, and know a large value is there without keeping
// it (reads of it go to the database).
func TestHintsBounded(t *testing.T) {
	var h hints
	v := bytes.Repeat([]byte("v"), 1000)
	for i := range 2 * hintBytes / 1000 {
		h.put(fmt.Sprint("k", i), v)
		if h.bytes > hintBytes {
			t.Fatalf("%d bytes kept after %d puts", h.bytes, i+1)
		}
	}
	h.put("mine", v)
	v[0] = 'x'
	if got, ok := h.get("mine"); !ok || got[0] != 'v' {
		t.Errorf("get(mine) = %.4q, %v: not a copy", got, ok)
	}
	h.put("big", make([]byte, maxHintValue+1))
	if got, ok := h.get("big"); ok || got != nil {
		t.Errorf("get(big) = %d bytes, %v; want not kept", len(got), ok)
	}
	if got, ok := h.get("unknown"); !ok || got != nil {
		t.Errorf("get(unknown) = %q, %v; want absent", got, ok)
	}
	h.drop([]string{"mine"})
	if _, ok := h.m["mine"]; ok {
		t.Error("mine kept after drop")
	}
}

// TestHintsAllow: once more than a quarter of the recent checks failed,
// one Update in 32 reads from the hints, until they succeed again.
func TestHintsAllow(t *testing.T) {
	var h hints
	for range 100 {
		h.note(false)
	}
	if !h.allow() {
		t.Fatal("not allowed after 100 good checks")
	}
	for range 60 {
		h.note(true)
	}
	allowed := 0
	for range 320 {
		if h.allow() {
			allowed++
		}
	}
	if allowed != 10 {
		t.Errorf("%d of 320 Updates allowed after many failed checks, want 10", allowed)
	}
	for range 200 {
		h.note(false)
	}
	if !h.allow() {
		t.Error("not allowed again after 200 good checks")
	}
}
