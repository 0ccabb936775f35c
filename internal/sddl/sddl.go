// Package sddl converts Windows security descriptors between their string
// form (SDDL, as Azure Files stores and returns permissions) and their
// binary self-relative form (MS-DTYP 2.4.6, as SMB and the binary
// permission format carry them). It is a leaf package.
package sddl

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

var sidAliases = map[string]string{
	"WD": "S-1-1-0", "CO": "S-1-3-0", "CG": "S-1-3-1", "OW": "S-1-3-4", "AN": "S-1-5-7",
	"AU": "S-1-5-11", "SY": "S-1-5-18", "LS": "S-1-5-19", "NS": "S-1-5-20",
	"BA": "S-1-5-32-544", "BU": "S-1-5-32-545", "BG": "S-1-5-32-546", "PU": "S-1-5-32-547",
	"BO": "S-1-5-32-551", "SO": "S-1-5-32-549", "AO": "S-1-5-32-548", "RD": "S-1-5-32-555",
	"IU": "S-1-5-4", "SU": "S-1-5-6", "NU": "S-1-5-2", "CA": "", "DA": "", "DU": "",
}

var rightAliases = map[string]uint32{
	"FA": 0x001F01FF, "FR": 0x00120089, "FW": 0x00120116, "FX": 0x001200A0,
	"GA": 0x10000000, "GR": 0x80000000, "GW": 0x40000000, "GX": 0x20000000,
	"RC": 0x00020000, "SD": 0x00010000, "WD": 0x00040000, "WO": 0x00080000,
	"CC": 0x1, "DC": 0x2, "LC": 0x4, "SW": 0x8, "RP": 0x10, "WP": 0x20, "DT": 0x40, "LO": 0x80, "CR": 0x100,
}

var aceFlagAliases = map[string]byte{"OI": 0x01, "CI": 0x02, "NP": 0x04, "IO": 0x08, "ID": 0x10, "SA": 0x40, "FA": 0x80}

// The parts of a descriptor, as the info argument of Encode and Decode
// names them (SMB's AdditionalInformation bits).
const (
	Owner uint32 = 1
	Group uint32 = 2
	DACL  uint32 = 4
)

// ErrInvalid is returned for a descriptor that does not parse.
var ErrInvalid = errors.New("sddl: invalid security descriptor")

var le = binary.LittleEndian

func encodeSID(s string) ([]byte, error) {
	if v, ok := sidAliases[s]; ok {
		if v == "" {
			return nil, ErrInvalid
		}
		s = v
	}
	parts := strings.Split(s, "-")
	if len(parts) < 3 || parts[0] != "S" || parts[1] != "1" || len(parts)-3 > 15 {
		return nil, ErrInvalid
	}
	auth, err := strconv.ParseUint(parts[2], 10, 48)
	if err != nil {
		return nil, ErrInvalid
	}
	b := []byte{1, byte(len(parts) - 3), byte(auth >> 40), byte(auth >> 32), byte(auth >> 24), byte(auth >> 16), byte(auth >> 8), byte(auth)}
	for _, p := range parts[3:] {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, ErrInvalid
		}
		b = le.AppendUint32(b, uint32(v))
	}
	return b, nil
}

// parseACL parses the "flags(ace)(ace)..." part of D: or S:.
func parseACL(s string) (control uint16, acl []byte, err error) {
	i := strings.IndexByte(s, '(')
	if i < 0 {
		i = len(s)
	}
	flags := s[:i]
	for len(flags) > 0 {
		switch {
		case strings.HasPrefix(flags, "P"):
			control |= 0x1000
			flags = flags[1:]
		case strings.HasPrefix(flags, "AI"):
			control |= 0x0400
			flags = flags[2:]
		case strings.HasPrefix(flags, "AR"):
			control |= 0x0100
			flags = flags[2:]
		default:
			return 0, nil, ErrInvalid
		}
	}
	var aces []byte
	count := 0
	for rest := s[i:]; rest != ""; {
		if rest[0] != '(' {
			return 0, nil, ErrInvalid
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return 0, nil, ErrInvalid
		}
		f := strings.Split(rest[1:end], ";")
		rest = rest[end+1:]
		if len(f) != 6 {
			return 0, nil, ErrInvalid
		}
		var typ byte
		switch f[0] {
		case "A":
			typ = 0
		case "D":
			typ = 1
		case "AU":
			typ = 2
		default:
			return 0, nil, ErrInvalid
		}
		var aflags byte
		for k := 0; k+2 <= len(f[1]); k += 2 {
			v, ok := aceFlagAliases[f[1][k:k+2]]
			if !ok {
				return 0, nil, ErrInvalid
			}
			aflags |= v
		}
		if len(f[1])%2 != 0 {
			return 0, nil, ErrInvalid
		}
		var mask uint32
		if strings.HasPrefix(f[2], "0x") || strings.HasPrefix(f[2], "0X") {
			v, err := strconv.ParseUint(f[2][2:], 16, 32)
			if err != nil {
				return 0, nil, ErrInvalid
			}
			mask = uint32(v)
		} else {
			if len(f[2])%2 != 0 {
				return 0, nil, ErrInvalid
			}
			for k := 0; k+2 <= len(f[2]); k += 2 {
				v, ok := rightAliases[f[2][k:k+2]]
				if !ok {
					return 0, nil, ErrInvalid
				}
				mask |= v
			}
		}
		sid, err := encodeSID(f[5])
		if err != nil {
			return 0, nil, err
		}
		aces = append(aces, typ, aflags)
		aces = le.AppendUint16(aces, uint16(8+len(sid)))
		aces = le.AppendUint32(aces, mask)
		aces = append(aces, sid...)
		count++
	}
	acl = []byte{2, 0}
	acl = le.AppendUint16(acl, uint16(8+len(aces)))
	acl = le.AppendUint16(acl, uint16(count))
	acl = append(acl, 0, 0)
	return control, append(acl, aces...), nil
}

// Encode encodes an SDDL string as a self-relative security
// descriptor (MS-DTYP §2.4.6) holding the parts info asks for (owner 1,
// group 2, DACL 4; a SACL is never returned).
func Encode(sddl string, info uint32) ([]byte, error) {
	parts, err := sddlParts(sddl)
	if err != nil {
		return nil, err
	}
	control := uint16(0x8000) // self-relative
	var owner, group, dacl []byte
	if v, ok := parts['O']; ok && info&1 != 0 {
		if owner, err = encodeSID(v); err != nil {
			return nil, err
		}
	}
	if v, ok := parts['G']; ok && info&2 != 0 {
		if group, err = encodeSID(v); err != nil {
			return nil, err
		}
	}
	if v, ok := parts['D']; ok && info&4 != 0 && v == nullDACL {
		// Present, with no ACL: offset 0.
		control |= 0x0004
	} else if ok && info&4 != 0 {
		var ctl uint16
		if ctl, dacl, err = parseACL(v); err != nil {
			return nil, err
		}
		control |= 0x0004 | ctl
	}
	b := []byte{1, 0}
	b = le.AppendUint16(b, control)
	off := uint32(20)
	var offs [4]uint32
	if owner != nil {
		offs[0] = off
		off += uint32(len(owner))
	}
	if group != nil {
		offs[1] = off
		off += uint32(len(group))
	}
	if dacl != nil {
		offs[3] = off
	}
	for _, o := range offs {
		b = le.AppendUint32(b, o)
	}
	b = append(b, owner...)
	b = append(b, group...)
	return append(b, dacl...), nil
}

func insideParens(s string, j int) bool {
	return strings.Count(s[:j], "(") > strings.Count(s[:j], ")")
}

// sddlParts splits an SDDL string into its O:, G:, D: and S: parts.
func sddlParts(sddl string) (map[byte]string, error) {
	parts := map[byte]string{}
	for s := sddl; s != ""; {
		if len(s) < 2 || s[1] != ':' || !strings.ContainsRune("OGDS", rune(s[0])) {
			return nil, ErrInvalid
		}
		key := s[0]
		s = s[2:]
		end := len(s)
		for _, k := range []string{"O:", "G:", "D:", "S:"} {
			if j := strings.Index(s, k); j >= 0 && j < end && !insideParens(s, j) {
				end = j
			}
		}
		parts[key] = s[:end]
		s = s[end:]
	}
	return parts, nil
}

// decodeSID renders the SID at the start of b as S-1-...; it returns the
// SID's length.
func decodeSID(b []byte) (string, int, error) {
	if len(b) < 8 || b[0] != 1 || b[1] > 15 || len(b) < 8+4*int(b[1]) {
		return "", 0, ErrInvalid
	}
	var auth uint64
	for _, v := range b[2:8] {
		auth = auth<<8 | uint64(v)
	}
	s := "S-1-" + strconv.FormatUint(auth, 10)
	n := int(b[1])
	for i := range n {
		s += "-" + strconv.FormatUint(uint64(le.Uint32(b[8+4*i:])), 10)
	}
	return s, 8 + 4*n, nil
}

// decodeACL renders the ACL at the start of b as SDDL ACE strings (only
// access-allowed and access-denied ACEs, as lazuli stores).
func decodeACL(b []byte) (string, error) {
	if len(b) < 8 || b[0] != 2 && b[0] != 4 {
		return "", ErrInvalid
	}
	size, count := int(le.Uint16(b[2:])), int(le.Uint16(b[4:]))
	if size < 8 || size > len(b) {
		return "", ErrInvalid
	}
	var out strings.Builder
	rest := b[8:size]
	for range count {
		if len(rest) < 8 {
			return "", ErrInvalid
		}
		typ, flags, n := rest[0], rest[1], int(le.Uint16(rest[2:]))
		if n < 8 || n > len(rest) {
			return "", ErrInvalid
		}
		var t string
		switch typ {
		case 0:
			t = "A"
		case 1:
			t = "D"
		default:
			return "", ErrInvalid
		}
		mask := le.Uint32(rest[4:])
		sid, _, err := decodeSID(rest[8:n])
		if err != nil {
			return "", err
		}
		out.WriteString("(" + t + ";")
		for _, f := range []struct {
			alias string
			bit   byte
		}{{"OI", 0x01}, {"CI", 0x02}, {"NP", 0x04}, {"IO", 0x08}, {"ID", 0x10}, {"SA", 0x40}, {"FA", 0x80}} {
			if flags&f.bit != 0 {
				out.WriteString(f.alias)
			}
		}
		out.WriteString(";0x" + strconv.FormatUint(uint64(mask), 16) + ";;;" + sid + ")")
		rest = rest[n:]
	}
	return out.String(), nil
}

// Decode applies the parts info names (owner 1, group 2,
// DACL 4) of the self-relative security descriptor sd to the SDDL cur and
// returns the result; the other parts of cur stay. A SACL (8) is ignored,
// as lazuli keeps none. A NULL DACL (present at offset 0: no access
// control, as Windows and Samba take it) is D:NO_ACCESS_CONTROL.
func Decode(sd []byte, info uint32, cur string) (string, error) {
	parts, err := sddlParts(cur)
	if err != nil {
		parts = map[byte]string{}
	}
	if len(sd) < 20 || sd[0] != 1 || le.Uint16(sd[2:])&0x8000 == 0 {
		return "", ErrInvalid
	}
	control := le.Uint16(sd[2:])
	at := func(i int) ([]byte, bool) {
		off := int(le.Uint32(sd[4+4*i:]))
		if off == 0 || off < 20 || off >= len(sd) {
			return nil, off == 0
		}
		return sd[off:], true
	}
	for i, key := range []byte{'O', 'G'} {
		if info&(1<<i) == 0 {
			continue
		}
		b, ok := at(i)
		if !ok || b == nil {
			return "", ErrInvalid
		}
		sid, _, err := decodeSID(b)
		if err != nil {
			return "", err
		}
		parts[key] = sid
	}
	if info&4 != 0 {
		b, ok := at(3)
		if !ok || control&0x0004 == 0 {
			return "", ErrInvalid
		}
		if b == nil {
			parts['D'] = nullDACL
			return joinParts(parts), nil
		}
		aces, err := decodeACL(b)
		if err != nil {
			return "", err
		}
		flags := ""
		if control&0x1000 != 0 {
			flags += "P"
		}
		if control&0x0400 != 0 {
			flags += "AI"
		}
		if control&0x0100 != 0 {
			flags += "AR"
		}
		parts['D'] = flags + aces
	}
	return joinParts(parts), nil
}

// nullDACL is the SDDL of a NULL DACL.
const nullDACL = "NO_ACCESS_CONTROL"

// joinParts joins the parts of sddlParts back into SDDL.
func joinParts(parts map[byte]string) string {
	var out strings.Builder
	for _, k := range []byte{'O', 'G', 'D', 'S'} {
		if v, ok := parts[k]; ok {
			out.WriteString(string(k) + ":" + v)
		}
	}
	return out.String()
}
