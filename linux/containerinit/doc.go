// Package containerinit is a container's init: libcontainer's init (the
// namespaces nsexec joined or made, the mounts, capabilities, no_new_privs,
// seccomp, the exec fifo) followed by vetto's pre-exec step (Landlock, the
// canaries), after which the init execs the container's process.
//
// It is its own package, importing nothing of the runtime beyond what the
// step needs (landlock/, shim/, hooks/canary), so that the init executable
// built from cmd/vetto-runtime-init — the file every container's init and
// every exec'd process start as — has only these packages to load and
// initialise, not the CLI, the policy compiler, the relay or the HTTP and
// TLS stacks of the runtime's own binary (docs/architecture.md, "The init
// executable"). The runtime's binary carries it too, for the build that
// embeds no init executable: libcontainer then starts the init from
// the runtime's own binary, as runc does.
package containerinit
