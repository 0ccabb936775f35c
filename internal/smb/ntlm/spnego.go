package ntlm

// A small DER reader and writer for the two SPNEGO tokens (RFC 4178):
// NegTokenInit inside the GSS-API initial context token, and NegTokenResp.

func tlv(tag byte, content []byte) []byte {
	out := []byte{tag}
	n := len(content)
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	case n < 0x10000:
		out = append(out, 0x82, byte(n>>8), byte(n))
	default:
		out = append(out, 0x83, byte(n>>16), byte(n>>8), byte(n))
	}
	return append(out, content...)
}

// next reads one TLV from b: its tag, its content, the whole element and
// the rest.
func next(b []byte) (tag byte, content, whole, rest []byte, err error) {
	if len(b) < 2 {
		return 0, nil, nil, nil, ErrMalformed
	}
	tag = b[0]
	n, hdr := int(b[1]), 2
	if n >= 0x80 {
		k := n & 0x7f
		if k == 0 || k > 3 || len(b) < 2+k {
			return 0, nil, nil, nil, ErrMalformed
		}
		n = 0
		for i := 0; i < k; i++ {
			n = n<<8 | int(b[2+i])
		}
		hdr = 2 + k
	}
	if len(b)-hdr < n {
		return 0, nil, nil, nil, ErrMalformed
	}
	return tag, b[hdr : hdr+n], b[:hdr+n], b[hdr+n:], nil
}

// parseNegTokenInit returns the mechToken and the DER MechTypeList of a
// GSS-API wrapped NegTokenInit.
func parseNegTokenInit(b []byte) (mechToken, mechTypes []byte, err error) {
	tag, c, _, _, err := next(b)
	if err != nil || tag != 0x60 {
		return nil, nil, ErrMalformed
	}
	tag, _, _, c, err = next(c) // OID
	if err != nil || tag != 0x06 {
		return nil, nil, ErrMalformed
	}
	tag, c, _, _, err = next(c)
	if err != nil || tag != 0xa0 {
		return nil, nil, ErrMalformed
	}
	tag, c, _, _, err = next(c)
	if err != nil || tag != 0x30 {
		return nil, nil, ErrMalformed
	}
	for len(c) > 0 {
		var content []byte
		tag, content, _, c, err = next(c)
		if err != nil {
			return nil, nil, err
		}
		switch tag {
		case 0xa0:
			_, _, whole, _, err := next(content)
			if err != nil {
				return nil, nil, err
			}
			mechTypes = whole
		case 0xa2:
			t, tok, _, _, err := next(content)
			if err != nil || t != 0x04 {
				return nil, nil, ErrMalformed
			}
			mechToken = tok
		}
	}
	if mechTypes == nil {
		return nil, nil, ErrMalformed
	}
	return mechToken, mechTypes, nil
}

// parseNegTokenResp returns the responseToken and mechListMIC of a
// NegTokenResp.
func parseNegTokenResp(b []byte) (token, mic []byte, err error) {
	tag, c, _, _, err := next(b)
	if err != nil || tag != 0xa1 {
		return nil, nil, ErrMalformed
	}
	tag, c, _, _, err = next(c)
	if err != nil || tag != 0x30 {
		return nil, nil, ErrMalformed
	}
	for len(c) > 0 {
		var content []byte
		tag, content, _, c, err = next(c)
		if err != nil {
			return nil, nil, err
		}
		if tag == 0xa2 || tag == 0xa3 {
			t, v, _, _, err := next(content)
			if err != nil || t != 0x04 {
				return nil, nil, ErrMalformed
			}
			if tag == 0xa2 {
				token = v
			} else {
				mic = v
			}
		}
	}
	return token, mic, nil
}

// negTokenResp builds a NegTokenResp: state 0 accept-completed, 1
// accept-incomplete.
func negTokenResp(state byte, withMech bool, token, mic []byte) []byte {
	var seq []byte
	seq = append(seq, tlv(0xa0, []byte{0x0a, 0x01, state})...)
	if withMech {
		seq = append(seq, tlv(0xa1, oidNTLM)...)
	}
	if token != nil {
		seq = append(seq, tlv(0xa2, tlv(0x04, token))...)
	}
	if mic != nil {
		seq = append(seq, tlv(0xa3, tlv(0x04, mic))...)
	}
	return tlv(0xa1, tlv(0x30, seq))
}
