// vetto-runtime-init is the executable every container's init, and every
// process `vetto-runtime exec` adds, starts as: libcontainer's init with
// vetto's pre-exec step (linux/containerinit), and nothing else of the
// runtime. make build builds it first and embeds it in vetto-runtime,
// which writes it once into its private directory and starts inits from
// a sealed view of it (docs/architecture.md, "The init executable"): a
// small binary starts in about half the time of the runtime's own, and
// every create and exec waits for that start.
//
// It is not a command: run by hand it says so and exits 1.
package main

import (
	"fmt"
	"os"
)

func main() {
	// An init never gets here: package init (init_linux.go) became the
	// container's process or exited.
	fmt.Fprintln(os.Stderr, "vetto-runtime-init: a container's init, started by vetto-runtime; not a command")
	os.Exit(1)
}
