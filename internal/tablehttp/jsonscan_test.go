package tablehttp

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"
)

// slowObject is readObject's general path, kept here as the reference the
// fast scanner is compared with.
func slowObject(body []byte) ([]rawProp, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return nil, false
	}
	var out []rawProp
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return nil, false
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil || seen[name] {
			return nil, false
		}
		seen[name] = true
		out = append(out, rawProp{name, raw, -1})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
}

func checkScanObject(t *testing.T, body []byte) {
	if !utf8.Valid(body) {
		return
	}
	fast, ok := scanObject(body, string(body), nil)
	if noText, ok2 := scanObject(body, "", make([]rawProp, 0, 2)); ok2 != ok || !reflect.DeepEqual(noText, fast) {
		t.Fatalf("%q: scanObject reads the body differently with its text", body)
	}
	if !ok {
		return
	}
	for _, m := range fast {
		if m.off < 0 || !bytes.Equal(body[m.off:m.off+len(m.raw)], m.raw) {
			t.Fatalf("%q: member %q has offset %d", body, m.name, m.off)
		}
	}
	slow, sok := slowObject(body)
	if !sok {
		t.Fatalf("scanObject accepted %q, encoding/json refuses it", body)
	}
	if len(fast) != len(slow) {
		t.Fatalf("%q: %d members, encoding/json reads %d", body, len(fast), len(slow))
	}
	for i := range fast {
		if fast[i].name != slow[i].name || !bytes.Equal(fast[i].raw, bytes.TrimSpace(slow[i].raw)) {
			t.Fatalf("%q: member %d is %q=%s, encoding/json reads %q=%s", body, i, fast[i].name, fast[i].raw, slow[i].name, slow[i].raw)
		}
	}
}

var scanObjectSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+3,"b":true,"c":false,"d":null,"e":"x y"}`,
	`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"12"}`,
	"{\n\t\"a\" : \"\u00e9\" ,\r\n\"b\":0}\n",
	`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":truex}`, `{"a":"b\"c"}`,
	`{"a":1,}`, `{,}`, `{"a"}`, `{"a":1}x`, `{"a":1}{}`, `{"a":1,"a":2}`, `{"a":[1]}`, `{"a":{"b":1}}`,
	`[]`, `"a"`, ``, `{"a":"` + "\x01" + `"}`, `{"a":1 "b":2}`,
}

func TestScanObjectAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range scanObjectSeeds {
		checkScanObject(t, []byte(s))
	}
	// Accepted inputs must be read the same way.
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":-0.5e+3,"b":true,"c":false,"d":null,"e":"x y"}`} {
		got, ok := scanObject([]byte(s), s, nil)
		want, _ := slowObject([]byte(s))
		if !ok || (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(len(got), len(want)) {
			t.Errorf("scanObject(%q) = %v, %v", s, got, ok)
		}
	}
}

func FuzzScanObject(f *testing.F) {
	for _, s := range scanObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkScanObject(t, body) })
}
