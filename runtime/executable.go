package runtime

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// The binary's identity (pre-launch check 10; docs/verification.md,
// "The executable"): nothing else in the frozen spec says which file the
// process will run. args[0] names a path; whatever is at that path when the
// init execs is what runs. A file replaced or rewritten between create and
// start — by another container that shares the rootfs, by an earlier run
// that wrote the project the sandbox runs from — would run in a container
// whose every other boundary was verified. So it is pinned three times:
//
//   - create records the file (device, inode, size, times, sha256; the
//     interpreter of a script too), read from the host in the init's root;
//   - start, before the exec fifo opens, resolves args[0] again and refuses
//     (SpecMismatch, 125) if it is not the same file with the same bytes;
//   - the init, as its last act before execve, stats the path once more
//     against what it found at create (the libcontainer patch), and after
//     the exec the host compares /proc/<pid>/exe with the record.

// recordExecutable identifies the file c's process will exec: a pre-launch
// check, PASS with the identity or FAIL when the host cannot read it (then
// nothing could be checked at start, and the launch is refused).
func recordExecutable(c Container, sp *specs.Spec, cache digestCache) (*hooks.Executable, []hooks.Result) {
	ec, ok := c.(ExecutableContainer)
	if !ok || sp.Process == nil {
		return nil, nil
	}
	e, err := identifyExecutable(ec, sp.Process, cache)
	r := hooks.Result{Check: "P1/executable", Evidence: hooks.HostFact, Expected: "args[0] resolved in the container's root, read from the host"}
	if err != nil {
		r.Verdict, r.Found = hooks.Fail, err.Error()
		return nil, []hooks.Result{r}
	}
	r.Verdict, r.Found = hooks.Pass, e.String()
	return e, []hooks.Result{r}
}

// checkExecutableLocked is start's check, before the fifo opens, that the
// file the process is about to exec is the one recorded at create. A
// container recorded without one (made by a runtime before this check,
// or a platform that cannot read it) passes unchecked.
func checkExecutableLocked(rec *Record, c Container, sp *specs.Spec) *hooks.Result {
	ec, ok := c.(ExecutableContainer)
	if rec.Executable == nil || !ok || sp.Process == nil {
		return nil
	}
	// By stat first: unchanged, and settled long before create read it,
	// the bytes are the recorded ones (hooks.Executable.Settled), and
	// reading a large file again is not needed.
	now, err := ec.Executable(sp.Process, false)
	if err != nil || rec.Executable.Differs(now) != "" || !rec.Executable.Settled() {
		now, err = ec.Executable(sp.Process, true)
	}
	r := hooks.CheckExecutable(rec.Executable, now, err)
	return &r
}

// executedCheck is the post-exec comparison of /proc/<pid>/exe with the
// record. The path is looked at again (by its stat: any write moves
// ctime) only when they differ or the process is gone, to tell a program
// that exec'd something else (PARTIAL) or exited (UNAVAILABLE) from a file
// swapped at the exec, which the init then refused or ran (FAIL).
func executedCheck(rec *Record, c Container, sp *specs.Spec) []hooks.Result {
	sc, ok := c.(ShimContainer)
	ec, ok2 := c.(ExecutableContainer)
	if rec.Executable == nil || !ok || !ok2 {
		return nil
	}
	exe, err := sc.InitExe()
	var current *hooks.Executable
	if want := rec.Executable.Exec(); err != nil || exe != [2]uint64{want.Dev, want.Ino} {
		current, _ = ec.Executable(sp.Process, false)
	}
	return []hooks.Result{hooks.CheckExecuted(rec.Executable, exe, err, current)}
}

// executableMismatch explains a start whose init died before the exec:
// the init refuses a file that is not the one it found at create (the
// libcontainer patch), so if args[0] is no longer the recorded file, that
// is why, and the start fails as SpecMismatch rather than a spawn failure.
func executableMismatch(rec *Record, c Container, sp *specs.Spec) error {
	ec, ok := c.(ExecutableContainer)
	if rec.Executable == nil || !ok || sp.Process == nil {
		return nil
	}
	now, err := ec.Executable(sp.Process, false)
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	default:
		why = rec.Executable.Differs(now)
	}
	if why == "" {
		return nil
	}
	return Errorf(ErrSpecMismatch, "start %q: the process's executable is not the file verified at create: %s; create the container again", rec.ID, why)
}
