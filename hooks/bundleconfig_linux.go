package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// openBundleConfig opens config.json beneath the bundle directory abs:
// openat2 with RESOLVE_BENEATH keeps every step of the lookup, symlinks
// included, inside the bundle, and O_PATH opens nothing for reading. The
// O_PATH file's own stat decides; only a regular file is then opened for
// reading, through /proc/self/fd — the same inode, whatever the path
// names by then.
func openBundleConfig(abs string) (*os.File, error) {
	cfg := filepath.Join(abs, spec.ConfigFile)
	dir, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: abs, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, spec.ConfigFile, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		// EXDEV: a symlink left the bundle, or is absolute — which may
		// still name a file in the bundle; the portable open resolves it
		// and refuses it if it is outside.
		if errNoOpenat2(err) || errors.Is(err, unix.EXDEV) {
			return openPortable(abs)
		}
		return nil, &os.PathError{Op: "open", Path: cfg, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: cfg, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is %s, not a regular file", cfg, fileKind(modeOf(st.Mode)))
	}
	rd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: cfg, Err: err}
	}
	return os.NewFile(uintptr(rd), cfg), nil
}

// modeOf turns a stat(2) mode's file type into an fs.FileMode's.
func modeOf(m uint32) os.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFLNK:
		return os.ModeSymlink
	}
	return os.ModeIrregular
}

// errNoOpenat2 says the kernel has no openat2 (before 5.6) or a seccomp
// filter refuses it; the portable open is used then.
func errNoOpenat2(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
}
