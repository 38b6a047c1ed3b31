//go:build !darwin

package darwin

import (
	"fmt"
	goruntime "runtime"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// This file is the backend off macOS, where only the translator, the
// judges and their tests are of use: nothing launches.

func (b *Backend) launch(req *runtime.CreateRequest, _ *Plan) (runtime.Container, runtime.Foreground, error) {
	return nil, nil, runtime.Errorf(runtime.ErrBackendUnavailable, "create %q: the darwin backend (Seatbelt) runs only on macOS, not %s", req.ID, goruntime.GOOS)
}

func (b *Backend) load(_, id string) (runtime.Container, error) {
	return nil, fmt.Errorf("%q: %w", id, runtime.ErrNotExist)
}

func (b *Backend) probe() []runtime.Probe {
	out := []runtime.Probe{
		{Name: probeSandboxExec, Status: runtime.Unknown, Detail: "not macOS"},
		{Name: probeProfile, Status: runtime.Unknown, Detail: "not macOS"},
		{Name: probeCheck, Status: runtime.Unknown, Detail: "not macOS"},
	}
	return append(out, fixedProbes()...)
}
