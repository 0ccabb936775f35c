package odata

// jsonPlain marks the bytes a JSON string can carry as they are: printable
// ASCII other than '"' and '\'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// IsJSONPlain reports whether s needs no escaping in a JSON string: it is
// printable ASCII other than '"' and '\'. It tests eight bytes at a time:
// a word holds no byte that needs escaping when none is below 0x20, none
// has the high bit set and none equals 0x7F, '"' or '\'.
func IsJSONPlain[T string | []byte](s T) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// Each term has a byte's high bit set if that byte (or, only
		// when some byte really matches, a byte above it) is: below 0x20,
		// or 0x7F, '"' or '\' (a zero byte after the XOR).
		below := (x - 0x20*ones) &^ x
		del := x ^ (0x7F * ones)
		quote := x ^ ('"' * ones)
		bslash := x ^ ('\\' * ones)
		bad := below | x | ((del - ones) &^ del) | ((quote - ones) &^ quote) | ((bslash - ones) &^ bslash)
		if bad&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			return false
		}
	}
	return true
}
