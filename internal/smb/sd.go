package smb

import "github.com/lazuli-storage/lazuli/internal/sddl"

// defaultSDDL is the descriptor of files that have none: everyone may do
// everything, as the share's access is what Azure checks.
const defaultSDDL = "O:BAG:SYD:(A;;FA;;;WD)"

// securityDescriptor encodes an SDDL string (the default one when empty)
// as a self-relative security descriptor holding the parts info asks for.
func securityDescriptor(s string, info uint32) ([]byte, error) {
	if s == "" {
		s = defaultSDDL
	}
	return sddl.Encode(s, info)
}

// sddlFromDescriptor applies the parts info names of the descriptor sd to
// the SDDL cur (the default one when empty).
func sddlFromDescriptor(sd []byte, info uint32, cur string) (string, error) {
	if cur == "" {
		cur = defaultSDDL
	}
	return sddl.Decode(sd, info, cur)
}
