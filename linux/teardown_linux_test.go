package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

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

// A run's teardown reaps every exited child of the runtime but the init,
// whose status its own Wait collects: the look before the list must see
// an exited child, and the list must pass over the init.
func TestReapStraysReapsEveryExitedChildButTheInit(t *testing.T) {
	start := func() *os.Process {
		t.Helper()
		p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
		if err != nil {
			t.Fatalf("start /bin/true: %v", err)
		}
		return p
	}
	zombie := func(pid int) bool {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		_, after, ok := strings.Cut(string(data), ") ")
		return ok && strings.HasPrefix(after, "Z")
	}
	initProc, stray := start(), start()
	t.Cleanup(func() {
		_ = initProc.Kill()
		_, _ = initProc.Wait()
		_ = stray.Release()
	})
	for deadline := time.Now().Add(10 * time.Second); !zombie(initProc.Pid) || !zombie(stray.Pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pids %d and %d never exited", initProc.Pid, stray.Pid)
		}
	}
	reapStrays(initProc.Pid)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", stray.Pid)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stray (pid %d) was not reaped: %v", stray.Pid, err)
	}
	if !zombie(initProc.Pid) {
		t.Fatalf("the init (pid %d) was reaped: its Wait would lose its status", initProc.Pid)
	}
	st, err := initProc.Wait()
	if err != nil || !st.Success() {
		t.Fatalf("init's own Wait: %v, %v", st, err)
	}
}
