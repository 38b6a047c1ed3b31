// Package relayproc is a container's egress relay process (docs/network.md):
// it reads the config the runtime wrote (linux/relaywire), takes the
// sockets the runtime made in the container's network namespace, hardens
// itself — no_new_privs and an empty bounding set before Go starts a
// thread, an unprivileged uid, no capability, Landlock with no file, a
// seccomp allowlist — and serves the relay (package relay) until the
// container's init exits.
//
// It is the relay executable's whole program (cmd/vetto-runtime-relay),
// which make build embeds in the runtime, so that the relay's HTTP, TLS and
// x509 code is linked there and not into the runtime's own binary, which
// every create, start, exec and delete starts (docs/architecture.md, "The
// helper executables"). A runtime built without the embedinit tag links it
// and is its own relay executable.
package relayproc
