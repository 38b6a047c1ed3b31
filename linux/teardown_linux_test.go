package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A cgroup removed under teardown — gone, or being destroyed when read
// (systemd stops a transient scope once its last process exits) — is an
// empty cgroup, not a failed teardown; any other error still is one.
func TestCgroupGone(t *testing.T) {
	pathErr := func(errno error) error {
		return fmt.Errorf("read cgroup.procs: %w", &fs.PathError{Op: "open", Path: "/sys/fs/cgroup/x/cgroup.procs", Err: errno})
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"gone", pathErr(unix.ENOENT), true},
		{"not exist", os.ErrNotExist, true},
		{"being destroyed", pathErr(unix.ENODEV), true},
		{"permission", pathErr(unix.EACCES), false},
		{"other", errors.New("boom"), false},
	} {
		if got := cgroupGone(tc.err); got != tc.want {
			t.Errorf("%s: cgroupGone(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
