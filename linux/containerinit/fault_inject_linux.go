//go:build vetto_faultinject

package containerinit

import (
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/landlock"
)

// The init's side of the fault-injection build (linux/fault_inject_linux.go
// has the runtime's): compiled in only with the vetto_faultinject build
// tag, for the integration tests that prove the host catches an init that
// did less than the plan, or that a process in the container cannot use
// the window before the pre-exec step ends. The fault is the container
// process's TESTONLY_VETTO_FAULT (the init's own environment is
// libcontainer's, not the process's):
//
//	shim-pause:<duration>   pause the pre-exec step before it restricts itself
//	weaker-ruleset          restrict the init with the plan's ruleset plus every right on /

// shimFault pauses the pre-exec step while the init is still the
// init's sealed executable, unrestricted, with the container's process's
// fds: the window a process in the container would attack it in. A
// blocking sleep on the init's one thread, as the step's own waits are.
func shimFault(env []string) {
	if d, ok := strings.CutPrefix(processFault(env), "shim-pause:"); ok {
		if pause, err := time.ParseDuration(d); err == nil {
			ts := unix.NsecToTimespec(pause.Nanoseconds())
			for unix.Nanosleep(&ts, &ts) == unix.EINTR {
			}
		}
	}
}

// shimRuleset is the ruleset the pre-exec step restricts the init with: with
// weaker-ruleset, the plan's plus every right on /.
func shimRuleset(rs string, env []string) string {
	if processFault(env) != "weaker-ruleset" {
		return rs
	}
	r, err := landlock.Parse(rs)
	if err != nil {
		return rs
	}
	r.Rules.PathBeneath = append(r.Rules.PathBeneath, landlock.PathBeneath{AllowedAccess: r.Ruleset.AccessFS, Paths: []string{"/"}})
	return r.Encode()
}

// processFault is TESTONLY_VETTO_FAULT in the process's environment.
func processFault(env []string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, "TESTONLY_VETTO_FAULT="); ok {
			v = rest
		}
	}
	return v
}
