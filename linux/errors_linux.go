package linux

import (
	"errors"
	"strings"

	"github.com/opencontainers/runc/libcontainer"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

var kinds = []struct{ lc, rt error }{
	{libcontainer.ErrNotExist, runtime.ErrNotExist},
	{libcontainer.ErrExist, runtime.ErrExist},
	{libcontainer.ErrInvalidID, runtime.ErrInvalidID},
	{libcontainer.ErrNotRunning, runtime.ErrNotRunning},
	{libcontainer.ErrRunning, runtime.ErrRunning},
	{libcontainer.ErrPaused, runtime.ErrPaused},
	{libcontainer.ErrNotPaused, runtime.ErrNotPaused},
}

// mapErr tags err with the runtime kind matching libcontainer's sentinel,
// keeping libcontainer's text (which is runc's, and what callers match).
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	for _, k := range kinds {
		if errors.Is(err, k.lc) {
			return runtime.WithKind(k.rt, err)
		}
	}
	return err
}

// initExecError tags the init's failure to exec the user's process as the
// user's input (exit 1, as runc), not the sandbox failing: the sandbox was
// built, the command in it does not run. The error crosses the init's
// sync pipe as text, so the text is all there is; it is libcontainer's
// (runc's) wording, which podman also matches to exit 127.
func initExecError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if !strings.Contains(msg, "error during container init: exec: ") {
		return err
	}
	if strings.Contains(msg, "executable file not found") || strings.Contains(msg, "no such file or directory") {
		return runtime.WithKind(runtime.ErrNotFound, err)
	}
	return runtime.WithKind(runtime.ErrInvalidInput, err)
}
