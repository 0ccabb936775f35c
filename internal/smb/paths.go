package smb

import "strings"

// badNameStatus is the status of a CREATE name sharePath refused: one
// starting with ".." would leave the share (STATUS_OBJECT_PATH_SYNTAX_BAD,
// as Windows answers; smbtorture smb2.mkdir), any other is
// STATUS_OBJECT_NAME_INVALID.
func badNameStatus(name string) uint32 {
	if first, _, _ := strings.Cut(name, `\`); first == ".." {
		return statusObjectPathSyntaxBad
	}
	return statusObjectNameInvalid
}
