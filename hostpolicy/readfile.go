package hostpolicy

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// readRegular reads the regular file at path, at most max bytes, for a
// file of the project that a sandbox may have written: the open follows
// no symlink at the last component and cannot block (a fifo swapped in
// after a look at the path would hang the compiler or create for good),
// and the open file's own stat decides that it is a regular file.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, over the %d read", path, fi.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}
