package smb

import (
	"errors"
	"strconv"
	"strings"
)

// defaultSDDL is the descriptor of files that have none: everyone may do
// everything, as the share's access is what Azure checks.
const defaultSDDL = "O:BAG:SYD:(A;;FA;;;WD)"

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

var errSDDL = errors.New("smb: invalid SDDL")

func encodeSID(s string) ([]byte, error) {
	if v, ok := sidAliases[s]; ok {
		if v == "" {
			return nil, errSDDL
		}
		s = v
	}
	parts := strings.Split(s, "-")
	if len(parts) < 3 || parts[0] != "S" || parts[1] != "1" || len(parts)-3 > 15 {
		return nil, errSDDL
	}
	auth, err := strconv.ParseUint(parts[2], 10, 48)
	if err != nil {
		return nil, errSDDL
	}
	b := []byte{1, byte(len(parts) - 3), byte(auth >> 40), byte(auth >> 32), byte(auth >> 24), byte(auth >> 16), byte(auth >> 8), byte(auth)}
	for _, p := range parts[3:] {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, errSDDL
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
			return 0, nil, errSDDL
		}
	}
	var aces []byte
	count := 0
	for rest := s[i:]; rest != ""; {
		if rest[0] != '(' {
			return 0, nil, errSDDL
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return 0, nil, errSDDL
		}
		f := strings.Split(rest[1:end], ";")
		rest = rest[end+1:]
		if len(f) != 6 {
			return 0, nil, errSDDL
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
			return 0, nil, errSDDL
		}
		var aflags byte
		for k := 0; k+2 <= len(f[1]); k += 2 {
			v, ok := aceFlagAliases[f[1][k:k+2]]
			if !ok {
				return 0, nil, errSDDL
			}
			aflags |= v
		}
		if len(f[1])%2 != 0 {
			return 0, nil, errSDDL
		}
		var mask uint32
		if strings.HasPrefix(f[2], "0x") || strings.HasPrefix(f[2], "0X") {
			v, err := strconv.ParseUint(f[2][2:], 16, 32)
			if err != nil {
				return 0, nil, errSDDL
			}
			mask = uint32(v)
		} else {
			if len(f[2])%2 != 0 {
				return 0, nil, errSDDL
			}
			for k := 0; k+2 <= len(f[2]); k += 2 {
				v, ok := rightAliases[f[2][k:k+2]]
				if !ok {
					return 0, nil, errSDDL
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

// securityDescriptor encodes an SDDL string as a self-relative security
// descriptor (MS-DTYP §2.4.6) holding the parts info asks for (owner 1,
// group 2, DACL 4; a SACL is never returned).
func securityDescriptor(sddl string, info uint32) ([]byte, error) {
	if sddl == "" {
		sddl = defaultSDDL
	}
	parts := map[byte]string{}
	for s := sddl; s != ""; {
		if len(s) < 2 || s[1] != ':' || !strings.ContainsRune("OGDS", rune(s[0])) {
			return nil, errSDDL
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
	control := uint16(0x8000) // self-relative
	var owner, group, dacl []byte
	var err error
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
	if v, ok := parts['D']; ok && info&4 != 0 {
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
