package ntlm

import "testing"

func FuzzStep(f *testing.F) {
	f.Add(InitialToken(), []byte{})
	f.Add(append([]byte("NTLMSSP\x00\x01\x00\x00\x00"), 0x01, 0x82, 0x08, 0xa2, 0, 0, 0, 0), []byte("NTLMSSP\x00\x03\x00\x00\x00"))
	s := &Server{Lookup: func(string) ([]string, bool) { return []string{"key"}, true }, Target: "T"}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		a := s.NewAuth()
		if _, _, err := a.Step(first); err != nil {
			return
		}
		a.Step(second)
	})
}
