package runtime

import "errors"

// readCredentialFile: Windows has no egress relay (no RelayBackend), so a
// bundle with credentials is refused before a file would be read; this is
// the same refusal, should it ever be reached.
func readCredentialFile(path string, dirs []string) (string, error) {
	return "", errors.New("credential files are read on Linux only")
}
