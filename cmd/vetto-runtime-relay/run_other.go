//go:build !linux

package main

import (
	"fmt"
	"os"
)

// run: the relay serves Linux containers only; the macOS and Windows
// backends have no egress relay (docs/platforms.md).
func run([]string) int {
	fmt.Fprintln(os.Stderr, "vetto-runtime-relay: the egress relay runs on Linux only")
	return 1
}
