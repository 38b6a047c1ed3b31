package hooks

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// ReadBundleConfig reads the config.json of the bundle at abs (an absolute
// path). A bundle may come from someone the operator does not trust, so
// its config.json must be a regular file inside the bundle:
//
//   - a fifo, a socket or a device node named config.json is refused
//     without being opened for reading — a fifo would block create for
//     good, and opening a device can act on it (a tape rewinds, a
//     watchdog arms);
//   - a symlink may point elsewhere in the bundle, but not out of it: one
//     to another container's config.json would launch this bundle's
//     rootfs with that spec's environment, mounts and hooks — a spec the
//     bundle's author could not read;
//   - its size is bounded before it is read (spec.MaxConfigSize).
//
// The file is opened by openBundleConfig (openat2 beneath the bundle on
// Linux) and judged by the open file's own stat, so it cannot be swapped
// between the look and the read.
func ReadBundleConfig(abs string) ([]byte, error) {
	return readWith(abs, openBundleConfig)
}

// readWith is ReadBundleConfig with the open to use (a test tries both).
func readWith(abs string, open func(string) (*os.File, error)) ([]byte, error) {
	f, err := open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg := filepath.Join(abs, spec.ConfigFile)
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", cfg, fileKind(fi.Mode()))
	}
	if fi.Size() > spec.MaxConfigSize {
		return nil, fmt.Errorf("config.json is %d bytes, over the %d this runtime reads", fi.Size(), spec.MaxConfigSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, spec.MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	return data, nil
}

// openPortable opens cfg, inside the bundle abs, the way every platform
// can: symlinks resolved by path and compared with the bundle's own
// resolved path, the file's kind looked at before it is opened, and the
// open itself non-blocking in case a fifo is put there in between (the
// caller's fstat then refuses it). Linux uses it only on a kernel without
// openat2.
func openPortable(abs string) (*os.File, error) {
	cfg := filepath.Join(abs, spec.ConfigFile)
	fi, err := os.Lstat(cfg)
	if err != nil {
		return nil, err
	}
	open := cfg
	if fi.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(cfg)
		if err != nil {
			return nil, err
		}
		root, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, err
		}
		if !within(root, real) {
			return nil, errOutside(cfg, real)
		}
		if fi, err = os.Stat(real); err != nil {
			return nil, err
		}
		// The file the check found, not the link again.
		open = real
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", cfg, fileKind(fi.Mode()))
	}
	f, err := os.OpenFile(open, os.O_RDONLY|syscall.O_NONBLOCK|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// within reports whether path is root or below it; both are clean and
// absolute.
func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

func errOutside(cfg, target string) error {
	return fmt.Errorf("%s is a symlink that leads out of the bundle, to %s: put the file itself in the bundle", cfg, target)
}

// fileKind names a file's type for an error.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a fifo"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	default:
		return "an irregular file"
	}
}
