package runtime

import (
	"fmt"
	"io"
	"os"
)

// Bounds of the files a caller names: a spec's process (--process), an
// update's resources (--resources), like config.json; a policy and the
// operator's runtime.toml, text a person writes.
const (
	MaxProcessFile   = 4 << 20
	MaxResourcesFile = 4 << 20
	MaxPolicyFile    = 1 << 20
	maxConfigFile    = 1 << 20
)

// ReadInput reads a file the caller named ("-" is stdin), at most max
// bytes: /dev/zero, a device or a pipe that never ends is an error, not a
// hang or the runtime's memory. A pipe (`--process <(…)`) still works.
func ReadInput(path string, max int64) ([]byte, error) {
	r := io.Reader(os.Stdin)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory", path)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes: is it the file you meant?", path, max)
	}
	return data, nil
}
