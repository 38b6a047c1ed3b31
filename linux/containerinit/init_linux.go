package containerinit

import (
	"github.com/opencontainers/runc/libcontainer"
	// nsenter's C constructor runs before the Go runtime starts when a
	// binary with this package is executed as "<binary> init": it joins
	// and creates the namespaces, which Go cannot do once it has threads.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// Arg is the argument with which libcontainer executes the init: the init
// executable, or the runtime's own binary (os.Args[1]).
const Arg = "init"

// IfRequested turns this process into a container's init when it was
// executed as one (args: os.Args); otherwise it returns. It must be
// called from package init, as runc's is: the Go runtime runs package init
// on the main thread, locked to it, and libcontainer.Init locks the
// goroutine to whatever thread it is on. From main() the goroutine may
// already have moved to another thread; then the init drops its
// capabilities and sets no_new_privs on that thread only (both are per
// thread), and the host, reading /proc/<pid>/status — the main thread's —
// sees the init still privileged until the exec.
func IfRequested(args []string) {
	if len(args) > 1 && args[1] == Arg {
		Init()
	}
}

// Init is the container init's entry point; it does not return. The
// init's last step before it execs the process is vetto's (preExec).
func Init() {
	libcontainer.PreExecHook = preExec
	// It execs the process or exits with the init's failure; it never
	// returns.
	libcontainer.Init()
}
