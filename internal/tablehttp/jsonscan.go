package tablehttp

import (
	"bytes"
	"encoding/json"
)

// scanObject is the fast path of readObject for the bodies clients send:
// one flat object whose member names and string values carry no escapes
// and whose values are strings, numbers, true, false or null. It accepts
// only input that encoding/json reads the same way; anything else (escapes,
// nested values, malformed or duplicate members) reports ok = false and the
// caller takes the general path, which also produces the exact error.
//
// Member names are cut from text when it is the body as a string, so they
// cost no allocation of their own. Members are appended to buf[:0].
func scanObject(body []byte, text string, buf []rawProp) (out []rawProp, ok bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		if skipSpace(body, i+1) != len(body) {
			return nil, false
		}
		return nil, true
	}
	out = buf[:0]
	for {
		// Member name.
		end, ok := scanPlainString(body, i)
		if !ok {
			return nil, false
		}
		var name string
		if len(text) == len(body) {
			name = text[i+1 : end-1]
		} else {
			name = string(body[i+1 : end-1])
		}
		for _, p := range out {
			if p.name == name {
				return nil, false
			}
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, false
		}
		i = skipSpace(body, i+1)
		// Scalar value.
		start := i
		if i >= len(body) {
			return nil, false
		}
		switch c := body[i]; {
		case c == '"':
			i, ok = scanPlainString(body, i)
		case c == '-' || (c >= '0' && c <= '9'):
			i, ok = scanNumber(body, i)
		case c == 't':
			i, ok = scanLiteral(body, i, "true")
		case c == 'f':
			i, ok = scanLiteral(body, i, "false")
		case c == 'n':
			i, ok = scanLiteral(body, i, "null")
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
		out = append(out, rawProp{name: name, raw: json.RawMessage(body[start:i]), off: start})
		i = skipSpace(body, i)
		if i >= len(body) {
			return nil, false
		}
		if body[i] == '}' {
			break
		}
		if body[i] != ',' {
			return nil, false
		}
		i = skipSpace(body, i+1)
	}
	if skipSpace(body, i+1) != len(body) {
		return nil, false
	}
	return out, true
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

// scanPlainString returns the index just past a string starting at b[i]
// that holds no escape and no control character; ok is false otherwise.
// The caller has checked that b is valid UTF-8.
func scanPlainString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	n := bytes.IndexByte(b[i+1:], '"')
	if n < 0 || !jsonPlain(b[i+1:i+1+n], false) {
		return 0, false
	}
	return i + 1 + n + 1, true
}

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

// plainString returns the text of a JSON string value that needs no
// unescaping, as scanObject produces; ok is false for any other value.
func plainString(raw []byte) (string, bool) {
	if !isPlainString(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}
