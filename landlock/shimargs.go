package landlock

import (
	"errors"
	"slices"
)

// The Landlock exec shim is vetto-runtime itself, re-executed inside the
// container through /proc/self/exe. libcontainer starts every init and
// every exec'd process from a sealed clone of the runtime binary, so in
// the container /proc/self/exe is that clone: nothing on the container's
// filesystem is run, and nothing there can be modified to change it.
const (
	// ShimExe is argv[0] and the path the init execs.
	ShimExe = "/proc/self/exe"
	// ShimCommand is argv[1], which main dispatches on before the CLI.
	ShimCommand = "landlock-exec"
	shimFlag    = "--ruleset"
	shimEnd     = "--"
)

// ShimArgs is the argv that runs args behind the shim enforcing ruleset
// (an annotation-form JSON).
func ShimArgs(ruleset string, args []string) []string {
	return append([]string{ShimExe, ShimCommand, shimFlag, ruleset, shimEnd}, args...)
}

// ParseShimArgs reads what ShimArgs wrote: the ruleset and the process's
// own args.
func ParseShimArgs(argv []string) (ruleset string, args []string, err error) {
	if len(argv) < 6 || argv[0] != ShimExe || argv[1] != ShimCommand || argv[2] != shimFlag || argv[4] != shimEnd {
		return "", nil, errors.New("not the Landlock shim's argv: want " + ShimExe + " " + ShimCommand + " " + shimFlag + " <ruleset> " + shimEnd + " <args…>")
	}
	return argv[3], slices.Clone(argv[5:]), nil
}
