package landlock

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// onRestrictedThread runs f on a fresh OS thread restricted with
// annotation; the thread is never unlocked, so Go discards it afterwards
// and no other test runs restricted.
func onRestrictedThread(t *testing.T, annotation string, f func() error) (restrictErr, fErr error) {
	t.Helper()
	type result struct{ r, f error }
	done := make(chan result)
	go func() {
		goruntime.LockOSThread()
		// no_new_privs is per thread, like the domain: the test process
		// keeps neither.
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- result{r: err}
			return
		}
		if err := RestrictThread(annotation); err != nil {
			done <- result{r: err}
			return
		}
		done <- result{f: f()}
	}()
	res := <-done
	return res.r, res.f
}

func TestRestrictThread(t *testing.T) {
	abi, err := HostABI()
	if err != nil || abi < 1 {
		t.Skipf("no Landlock on this host (ABI %d, %v)", abi, err)
	}
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{allowed, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Read-only beneath allowed; everything else denied.
	rs := &Ruleset{Ruleset: Handled{AccessFS: Supported(abi).AccessFS}, Rules: Rules{PathBeneath: []PathBeneath{
		{AllowedAccess: 1<<2 | 1<<3, Paths: []string{allowed, "/nonexistent-rule-path"}},
	}}}
	tests := []struct {
		name string
		op   func() error
		want error
	}{
		{"read inside", func() error { _, err := os.ReadFile(filepath.Join(allowed, "f")); return err }, nil},
		{"read outside", func() error { _, err := os.ReadFile(filepath.Join(outside, "f")); return err }, unix.EACCES},
		{"read outside via ..", func() error { _, err := os.ReadFile(filepath.Join(allowed, "..", "outside", "f")); return err }, unix.EACCES},
		{"write inside a read root", func() error { return os.WriteFile(filepath.Join(allowed, "f"), []byte("y"), 0o644) }, unix.EACCES},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rerr, err := onRestrictedThread(t, rs.Encode(), tt.op)
			if rerr != nil {
				t.Fatalf("restrict: %v", rerr)
			}
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	// The restriction stayed on its thread: this one still reads outside.
	if _, err := os.ReadFile(filepath.Join(outside, "f")); err != nil {
		t.Fatalf("the test process itself became restricted: %v", err)
	}
}

// A ruleset that handles a right the host cannot enforce is refused
// before anything is restricted, naming the right: the thread stays
// unrestricted rather than half-restricted.
func TestRestrictRefusesUnsupported(t *testing.T) {
	abi, err := HostABI()
	if err != nil || abi < 1 {
		t.Skipf("no Landlock on this host (ABI %d, %v)", abi, err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Handles every fs right up to ABI 5, grants nothing; pretend the host
	// is ABI 4, which lacks ioctl_dev.
	rs := &Ruleset{Ruleset: Handled{AccessFS: 1<<16 - 1}}
	done := make(chan [2]error)
	go func() {
		goruntime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- [2]error{err, nil}
			return
		}
		rerr := rs.restrictAt(4)
		_, readErr := os.ReadFile(f)
		done <- [2]error{rerr, readErr}
	}()
	res := <-done
	if res[0] == nil || !strings.Contains(res[0].Error(), "ioctl_dev (ABI 5)") {
		t.Fatalf("restrict at ABI 4: %v; want a refusal naming ioctl_dev", res[0])
	}
	if res[1] != nil {
		t.Fatalf("after the refusal the thread cannot read %s: %v; it was restricted anyway", f, res[1])
	}
}
