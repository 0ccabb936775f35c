package tablehttp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// readObject reads one JSON object keeping member order: the members'
// values are left raw (slices of body) for decodeEntity. A duplicate
// member is 400 DuplicatePropertiesSpecified, anything encoding/json
// would refuse (or body that is not valid UTF-8) 400 InvalidInput. Member
// names are cut from text, the body as a string, when they need no
// unescaping (text may be "" when the caller has none), so they cost no
// allocation of their own; members are appended to buf[:0].
//
// It is the one reader of request objects: the bodies clients send (flat
// objects of plain strings, numbers and literals) take its byte loops,
// and escapes or nested values, which encoding/json reads the same way
// (FuzzReadObject holds it to that), cost only where they appear.
func readObject(body []byte, text string, buf []rawProp) ([]rawProp, error) {
	if !utf8.Valid(body) {
		return nil, azerr.Newf(azerr.InvalidInput, "The request body is not valid UTF-8.")
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, invalidJSON()
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		if skipSpace(body, i+1) != len(body) {
			return nil, invalidJSON()
		}
		return nil, nil
	}
	out := buf[:0]
	var seen map[string]struct{} // past dupScan members, for the duplicate check
	for {
		// Member name.
		end, plain, ok := scanString(body, i)
		if !ok {
			return nil, invalidJSON()
		}
		var name string
		switch {
		case !plain:
			if json.Unmarshal(body[i:end], &name) != nil {
				return nil, invalidJSON()
			}
		case len(text) == len(body):
			name = text[i+1 : end-1]
		default:
			name = string(body[i+1 : end-1])
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, invalidJSON()
		}
		i = skipSpace(body, i+1)
		start := i
		if i, ok = scanValue(body, i, 1); !ok {
			return nil, invalidJSON()
		}
		// A duplicate is found once its value is read, as encoding/json's
		// streaming reader would.
		if len(out) < dupScan {
			for _, p := range out {
				if p.name == name {
					return nil, azerr.New(azerr.DuplicatePropertiesSpecified)
				}
			}
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*dupScan)
				for _, p := range out {
					seen[p.name] = struct{}{}
				}
			}
			if _, dup := seen[name]; dup {
				return nil, azerr.New(azerr.DuplicatePropertiesSpecified)
			}
			seen[name] = struct{}{}
		}
		out = append(out, rawProp{name: name, raw: json.RawMessage(body[start:i]), off: start})
		i = skipSpace(body, i)
		if i >= len(body) {
			return nil, invalidJSON()
		}
		if body[i] == '}' {
			break
		}
		if body[i] != ',' {
			return nil, invalidJSON()
		}
		i = skipSpace(body, i+1)
	}
	if skipSpace(body, i+1) != len(body) {
		return nil, invalidJSON()
	}
	return out, nil
}

// dupScan is how many members readObject checks for duplicates by a
// linear scan (an entity's usual size, no map to allocate); beyond it a
// map keeps the check linear in the body, whatever a client sends.
const dupScan = 32

func invalidJSON() *azerr.Error {
	return azerr.Newf(azerr.InvalidInput, "The request body is not a valid JSON object.")
}

// maxDepth bounds the nesting of values, as encoding/json does.
const maxDepth = 10000

// scanValue returns the index just past the JSON value starting at b[i];
// depth is the nesting of that value.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	var ok bool
	switch c := b[i]; {
	case c == '"':
		i, _, ok = scanString(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		i, ok = scanNumber(b, i)
	case c == 't':
		i, ok = scanLiteral(b, i, "true")
	case c == 'f':
		i, ok = scanLiteral(b, i, "false")
	case c == 'n':
		i, ok = scanLiteral(b, i, "null")
	case c == '{' || c == '[':
		i, ok = scanComposite(b, i, depth)
	}
	return i, ok
}

// scanComposite returns the index just past the object or array starting
// at b[i] (a member value: decodeEntity refuses it, but only once the
// whole body is known to be JSON).
func scanComposite(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	obj := b[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if obj {
			if i, _, ok = scanString(b, i); !ok {
				return 0, false
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
		if i, ok = scanValue(b, i, depth+1); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		switch {
		case i >= len(b):
			return 0, false
		case b[i] == closer:
			return i + 1, true
		case b[i] != ',':
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
}

// skipSpace returns the index of the first non-whitespace byte at or
// after i (JSON whitespace: space, tab, CR, LF).
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the index just past the JSON string starting at
// b[i], and whether it holds no escape (plain: its text is the bytes
// between the quotes); ok is false when it is no valid JSON string. The
// caller has checked that b is valid UTF-8.
func scanString(b []byte, i int) (end int, plain, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, false
	}
	n := bytes.IndexByte(b[i+1:], '"')
	if n >= 0 && jsonPlain(b[i+1:i+1+n], false) {
		return i + 1 + n + 1, true, true
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, false, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			j++
			if j >= len(b) {
				return 0, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return 0, false, false
				}
				j += 4
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// jsonPlain reports whether s can stand inside a JSON string as it is:
// no '"', no '\\' and no byte below 0x20; with ascii set, also no byte at
// or above 0x7F (the renderer escapes those, as Azure does). It is the one
// byte scanner of the Table JSON code, and tests eight bytes at a time:
// each term sets a byte's high bit when that byte (or, only when some byte
// really matches, a byte above it, through a borrow or carry) is '"' or
// '\\' (a zero byte after the XOR, minus one), below 0x20, or in ascii mode
// 0x7F or above; outside ascii mode the high bits of bytes above 0x7F are
// cleared, since they are allowed. So the test as a whole is exact.
func jsonPlain[T string | []byte](s T, ascii bool) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		quote := x ^ ('"' * ones)
		bslash := x ^ ('\\' * ones)
		bad := (quote - ones) | (bslash - ones) | (x - 0x20*ones)
		if ascii {
			// x+1 carries into a high bit exactly at 0x7F (and bytes with
			// the high bit already set are bad themselves).
			bad |= x | (x + ones)
		} else {
			bad &^= x
		}
		if bad&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || ascii && c >= 0x7F {
			return false
		}
	}
	return true
}

// scanNumber returns the index just past a JSON number starting at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// scanLiteral matches true, false or null at b[i].
func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// isPlainString reports whether raw is a JSON string value that needs no
// unescaping.
func isPlainString(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && jsonPlain(raw[1:len(raw)-1], false)
}
