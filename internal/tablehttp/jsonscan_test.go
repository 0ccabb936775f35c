package tablehttp

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// oracleObject reads body with encoding/json's streaming reader, the
// reference readObject is held to: its members in order, or the error
// code readObject must answer ("" for none).
func oracleObject(body []byte) ([]rawProp, string) {
	if !utf8.Valid(body) {
		return nil, azerr.InvalidInput.String()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return nil, azerr.InvalidInput.String()
	}
	var out []rawProp
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return nil, azerr.InvalidInput.String()
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return nil, azerr.InvalidInput.String()
		}
		if seen[name] {
			return nil, azerr.DuplicatePropertiesSpecified.String()
		}
		seen[name] = true
		out = append(out, rawProp{name, raw, -1})
	}
	if _, err := dec.Token(); err != nil {
		return nil, azerr.InvalidInput.String()
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, azerr.InvalidInput.String()
	}
	return out, ""
}

// checkReadObject fails unless readObject reads body as encoding/json
// does: the same members (names decoded, values raw) or the same error.
func checkReadObject(t *testing.T, body []byte) {
	got, err := readObject(body, string(body), nil)
	noText, err2 := readObject(body, "", make([]rawProp, 0, 2))
	if code(err2) != code(err) || !reflect.DeepEqual(noText, got) {
		t.Fatalf("%q: readObject reads the body differently with its text", body)
	}
	want, wantCode := oracleObject(body)
	if code(err) != wantCode {
		t.Fatalf("%q: readObject answers %q, encoding/json reads %q", body, code(err), wantCode)
	}
	if len(got) != len(want) {
		t.Fatalf("%q: %d members, encoding/json reads %d", body, len(got), len(want))
	}
	for i, m := range got {
		if m.off < 0 || !bytes.Equal(body[m.off:m.off+len(m.raw)], m.raw) {
			t.Fatalf("%q: member %q has offset %d", body, m.name, m.off)
		}
		if m.name != want[i].name || !bytes.Equal(m.raw, bytes.TrimSpace(want[i].raw)) {
			t.Fatalf("%q: member %d is %q=%s, encoding/json reads %q=%s", body, i, m.name, m.raw, want[i].name, want[i].raw)
		}
	}
}

// code is the Azure error code of err ("" for nil).
func code(err error) string {
	if e, ok := azerr.As(err); ok {
		return e.Code.String()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

var readObjectSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+3,"b":true,"c":false,"d":null,"e":"x y"}`,
	`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"12"}`,
	"{\n\t\"a\" : \"\u00e9\" ,\r\n\"b\":0}\n",
	`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":truex}`, `{"a":"b\"c"}`,
	`{"a":1,}`, `{,}`, `{"a"}`, `{"a":1}x`, `{"a":1}{}`, `{"a":1,"a":2}`, `{"a":[1]}`, `{"a":{"b":1}}`,
	`[]`, `"a"`, ``, `{"a":"` + "\x01" + `"}`, `{"a":1 "b":2}`,
	// Escapes, in names and values; a name that is a duplicate only once
	// unescaped; nested values; broken escapes.
	`{"\u0061":1,"a":2}`, `{"a\nb":"c\td","e":"\ud83d\ude00","f":"\ud800"}`, `{"a":"\/\b\f\r\""}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"\":1}`, `{"a":[1,{"b":[true,null,"\"]"]},[]],"c":{}}`,
	`{"a":[1,]}`, `{"a":{"b"}}`, `{"a":{"b":1,}}`, `{"a":[}`, `{"a":1,"a":}`, `{"a":1,"a":2,}`,
	"\xff", `{"a":"` + "\xc3" + `"}`,
}

func TestReadObjectAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range readObjectSeeds {
		checkReadObject(t, []byte(s))
	}
	// Nesting up to encoding/json's bound, and one past it.
	for _, depth := range []int{9999, 10000, 10001} {
		checkReadObject(t, []byte(`{"a":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}`))
	}
}

// Past the members checked by a linear scan, duplicates are found through
// a map (so the check stays linear in the body whatever a client sends):
// distinct members all read, a repeat of the first refused.
func TestReadObjectManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"m0":0`)
	for i := 1; i < 100000; i++ {
		b.WriteString(`,"m` + itoa(i) + `":0`)
	}
	distinct := b.String() + "}"
	got, err := readObject([]byte(distinct), distinct, nil)
	if err != nil || len(got) != 100000 {
		t.Fatalf("100,000 distinct members: %d read, %v", len(got), err)
	}
	repeated := b.String() + `,"m0":1}`
	if _, err := readObject([]byte(repeated), repeated, nil); code(err) != azerr.DuplicatePropertiesSpecified.String() {
		t.Fatalf("the first member repeated last: %v", err)
	}
}

func FuzzReadObject(f *testing.F) {
	for _, s := range readObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkReadObject(t, body) })
}
