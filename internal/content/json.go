package content

import (
	"encoding/json"
	"fmt"
)

// EncodeJSON encodes one of the records kept as JSON (containers, shares,
// nodes, staging). They are plain structs, so Marshal cannot fail on them.
func EncodeJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// DecodeJSON decodes a JSON record; domain names the package whose record
// it is in the error a corrupt one gives.
func DecodeJSON[T any](b []byte, domain string) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("%s: corrupt record: %w", domain, err)
	}
	return v, nil
}
