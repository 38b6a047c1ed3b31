// Package platform is the one place that picks this binary's backend by
// GOOS (linux/, darwin/, windows/), and the entry points of the processes
// the runtime re-executes itself as: a container's init, the backends'
// holders and shims, the egress relay, the canary probe. main calls
// InitIfRequested and ReExec before the command line exists (cli/ builds
// that, on NewBackend and HostFacts); inside a sandbox or an init there
// are no flags, state root or logging to set up.
//
// It is its own package, not build-tagged files of cli/, because the
// re-executions are not commands: they must run before the CLI and
// without it, and cli/ then stays one file set for every platform.
package platform

// ReExec runs what args (os.Args) ask the binary to be when it is not the
// command line: a backend's own re-execution of the runtime (shim) or the
// canary probe. It returns the exit status, with ok set, for those; main
// exits with it. A container's init is not here: it must start in package
// init (InitIfRequested).
func ReExec(args []string) (code int, ok bool) {
	if code, ok := shimIfRequested(args); ok {
		return code, true
	}
	return probeIfRequested(args)
}
