//go:build !linux

package hooks

import "os"

// openBundleConfig opens config.json inside the bundle abs (openPortable:
// this platform has no openat2).
func openBundleConfig(abs string) (*os.File, error) { return openPortable(abs) }
