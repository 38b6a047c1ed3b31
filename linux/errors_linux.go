package linux

import (
	"errors"

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
