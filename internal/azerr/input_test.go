package azerr

import (
	"errors"
	"testing"
)

// NameInput puts the header first among the details, as Azure renders
// them, and leaves any other error, or an input it cannot name, alone.
func TestNameInput(t *testing.T) {
	headers := map[Input]string{"quota": "x-ms-share-quota"}
	e, _ := As(NameInput(InvalidValue("quota", "0"), headers))
	if e.Code != InvalidHeaderValue || len(e.Details) != 2 || e.Details[0] != (Detail{"HeaderName", "x-ms-share-quota"}) ||
		e.Details[1] != (Detail{"HeaderValue", "0"}) || e.Input != "" {
		t.Errorf("named: %+v", e)
	}
	unnamed := InvalidValue("size", "1")
	if got := NameInput(unnamed, headers); got != error(unnamed) {
		t.Errorf("an input without a header: %v", got)
	}
	other := errors.New("x")
	if got := NameInput(other, headers); got != other {
		t.Errorf("not an Azure error: %v", got)
	}
	plain := New(BlobNotFound)
	if got := NameInput(plain, headers); got != error(plain) {
		t.Errorf("no input: %v", got)
	}
}
