package server

import (
	"fmt"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azimport"
)

// AzuriteDirError is a data directory that holds the reference
// emulator's files. lazuli does not write beside them: a user who points
// --location at that directory expects its data, which lazuli would not
// see, and the two sets of files would mix.
type AzuriteDirError struct {
	Dir   string
	Found []string
}

func (e *AzuriteDirError) Error() string {
	return fmt.Sprintf("%s holds the reference emulator's data (%s), which lazuli does not read in place; "+
		"import it into a directory of lazuli's with: lazuli import-azurite --from %s --location <new directory>",
		e.Dir, strings.Join(e.Found, ", "), e.Dir)
}

// checkNotAzurite refuses a data directory the reference emulator wrote.
func checkNotAzurite(dir string) error {
	if found := azimport.Found(dir); len(found) > 0 {
		return &AzuriteDirError{Dir: dir, Found: found}
	}
	return nil
}
