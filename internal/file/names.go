package file

import (
	"strings"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// ValidShareName reports whether name follows the share naming rules
// (those of containers): 3-63 characters, lowercase letters, digits and
// single hyphens, starting and ending with a letter or digit.
func ValidShareName(name string) bool {
	if len(name) < 3 || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// reservedNames are the DOS device names no component may take (with or
// without an extension).
var reservedNames = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CLOCK$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// ValidComponent reports whether name may name a file or directory: 1-255
// characters of valid UTF-8, none of `"\/:|<>*?` or control characters,
// not "." or "..", and not a DOS device name.
func ValidComponent(name string) bool {
	if name == "" || name == "." || name == ".." || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`"\/:|<>*?`, r) {
			return false
		}
	}
	base, _, _ := strings.Cut(name, ".")
	return !reservedNames[strings.ToUpper(strings.TrimRight(base, " "))]
}

// SplitPath splits a path below a share into its components. Both '/' and
// '\' separate components (REST paths use '/', SMB '\'); leading and
// trailing separators are ignored, so "" and "/" are the root. A path
// longer than MaxPathLength or deeper than MaxDepth is 400
// InvalidFileOrDirectoryPathName; an empty or invalid component is 400
// InvalidResourceName.
func SplitPath(p string) ([]string, error) {
	p = strings.Trim(p, `/\`)
	if p == "" {
		return nil, nil
	}
	if len(p) > MaxPathLength {
		return nil, azerr.New(azerr.InvalidFileOrDirectoryPathName)
	}
	parts := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) > MaxDepth {
		return nil, azerr.New(azerr.InvalidFileOrDirectoryPathName)
	}
	// FieldsFunc drops empty fields; a doubled separator is an empty
	// component, which no name may be.
	if strings.Contains(p, "//") || strings.Contains(p, `\\`) || strings.Contains(p, `/\`) || strings.Contains(p, `\/`) {
		return nil, azerr.New(azerr.InvalidResourceName)
	}
	for _, c := range parts {
		if !ValidComponent(c) {
			return nil, azerr.New(azerr.InvalidResourceName)
		}
	}
	return parts, nil
}

// JoinPath joins components with '/'.
func JoinPath(parts []string) string { return strings.Join(parts, "/") }
