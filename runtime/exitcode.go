package runtime

import "errors"

// Exit codes (README.md, exit codes). run passes the container's own status through
// instead; that happens in the CLI (cli.Run), not here.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitSandbox = 125
	ExitFloor   = 126
)

// exitCodes is the one table from error kind to exit code. Order matters
// only in that the first match wins; kinds are disjoint in practice.
var exitCodes = []struct {
	kind error
	code int
}{
	{ErrFloorForbids, ExitFloor},
	{ErrBackendUnavailable, ExitSandbox},
	{ErrPreLaunchFailed, ExitSandbox},
	{ErrPostLaunchFailed, ExitSandbox},
	{ErrSpecMismatch, ExitSandbox},
	{ErrDegradedRefused, ExitSandbox},
	{ErrTeardownIncomplete, ExitSandbox},
	{ErrSpawnFailed, ExitSandbox},
	{ErrPolicyCompileFailed, ExitSandbox},
	{ErrDriftDetected, ExitSandbox},
	{ErrUnknownAfterReboot, ExitSandbox},
}

// ExitCode maps an error to the process exit code by its kind, never by its
// text. Errors of no sandbox or floor kind exit 1, as runc's do.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	for _, e := range exitCodes {
		if errors.Is(err, e.kind) {
			return e.code
		}
	}
	return ExitFailure
}
