package windows

import (
	"strings"
)

// Windows paths, handled as text so that Linux CI can test them (the
// path/filepath of a Linux build knows only "/"). A path here is
// drive-absolute, X:\..., compared case-insensitively as NTFS does by
// default.

// cleanPath returns the clean form of a drive-absolute path ("C:\a\b",
// drive letter upper-cased, "/" read as "\", no "." or ".." or trailing
// separator but the root's) and whether p is one. UNC and device paths
// (\\server\share, \\?\…) are not: they are refused by the caller.
func cleanPath(p string) (string, bool) {
	p = strings.ReplaceAll(p, "/", `\`)
	if len(p) < 3 || !isLetter(p[0]) || p[1] != ':' || p[2] != '\\' || strings.ContainsRune(p, 0) {
		return "", false
	}
	var parts []string
	for _, e := range strings.Split(p[3:], `\`) {
		switch e {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, e)
		}
	}
	return strings.ToUpper(p[:1]) + `:\` + strings.Join(parts, `\`), true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isRoot says whether a clean path is a drive root ("C:\").
func isRoot(p string) bool { return len(p) == 3 }

// samePath compares clean paths as NTFS does.
func samePath(a, b string) bool { return strings.EqualFold(a, b) }

// under says whether clean path p is root or beneath it.
func under(p, root string) bool {
	if samePath(p, root) {
		return true
	}
	prefix := root
	if !isRoot(root) {
		prefix += `\`
	}
	return len(p) > len(prefix) && strings.EqualFold(p[:len(prefix)], prefix)
}

// joinPath appends a name to a clean path.
func joinPath(dir, name string) string {
	if isRoot(dir) {
		return dir + name
	}
	return dir + `\` + name
}
