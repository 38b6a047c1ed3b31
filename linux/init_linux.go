package linux

import (
	// Registers the device-rules manager with the cgroup managers; without
	// it no container with device rules (i.e. any) can be created.
	_ "github.com/opencontainers/cgroups/devices"
	"github.com/opencontainers/runc/libcontainer"
	// nsenter's C constructor runs before the Go runtime starts when the
	// binary is re-executed as "vetto-runtime init": it joins and creates
	// the namespaces, which Go cannot do once it has threads.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// InitArg is the argument with which libcontainer re-executes this binary
// to become a container's init.
const InitArg = "init"

// Init is the container init's entry point; it does not return. The
// init's last step before it execs the process is vetto's (preExec).
func Init() {
	libcontainer.PreExecHook = preExec
	libcontainer.Init()
}
