package sddl

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestDecodeEncodeRoundTrip: a descriptor as Windows writes it (DACL
// before owner and group, auto-inherited, a SACL flag without a SACL)
// decodes to SDDL that encodes back to a descriptor decoding to the same
// SDDL.
func TestDecodeEncodeRoundTrip(t *testing.T) {
	sd, _ := base64.StdEncoding.DecodeString("AQAUhGwAAACIAAAAAAAAABQAAAACAFgAAwAAAAAAFAD/AR8AAQEAAAAAAAUSAAAAAAAYAP8BHwABAgAAAAAABSAAAAAgAgAAAAAkAKkAEgABBQAAAAAABRUAAABZUbgXZnJdJWRjOwuMmS4AAQUAAAAAAAUVAAAAoGXPfnhLm1/nfIdwr/1IAQEFAAAAAAAFFQAAAKBlz354S5tf53yHcAECAAA=")
	s, err := Decode(sd, Owner|Group|DACL, "")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(s, Owner|Group|DACL)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Decode(enc, Owner|Group|DACL, "")
	if err != nil || again != s {
		t.Fatalf("%q became %q (%v)", s, again, err)
	}
	if enc2, _ := Encode(again, Owner|Group|DACL); !bytes.Equal(enc, enc2) {
		t.Fatal("encoding is not stable")
	}
}
