package runtime

import (
	"fmt"
	"os"
)

// oNoFollow: Windows opens follow reparse points; the state and evidence
// directories are the runtime's own there.
const oNoFollow = 0

// privateDir refuses d unless it is a directory.
func privateDir(d string) error {
	st, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	return nil
}

// CheckStateRoot: the state root on Windows is the runtime's own.
func CheckStateRoot(string) error { return nil }

// NormalUser: the Windows runtime keeps its state in its own directories.
func NormalUser() bool { return false }

// ownedBySelf: Windows keeps no executable digests (no backend reads an
// executable's identity there), so nothing is ever vouched for.
func ownedBySelf(os.FileInfo) bool { return false }
