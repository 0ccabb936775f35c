package tablehttp

import "github.com/lazuli-storage/lazuli/internal/table"

// DecodeEntity decodes an entity in the Table service's JSON form, as an
// Insert Entity body carries it, with the same rules: for tools that bring
// entities from elsewhere (the reference emulator's data directory).
func DecodeEntity(body []byte) (pk, rk string, props []table.Property, err error) {
	e, err := decodeEntity(body)
	if err != nil {
		return "", "", nil, err
	}
	return e.PartitionKey, e.RowKey, e.Props, nil
}
