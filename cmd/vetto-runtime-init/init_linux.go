package main

import (
	"os"

	"github.com/vetto-dev/vetto-runtime/linux/containerinit"
)

// init, not main: see containerinit.IfRequested.
func init() { containerinit.IfRequested(os.Args) }
