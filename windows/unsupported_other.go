//go:build !windows

package windows

import (
	"fmt"
	goruntime "runtime"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// This file is the backend off Windows, where only the translator, the
// judges and their tests are of use: nothing launches.

func (b *Backend) launch(req *runtime.CreateRequest, _ *Plan) (runtime.Container, runtime.Foreground, error) {
	return nil, nil, runtime.Errorf(runtime.ErrBackendUnavailable, "create %q: the windows backend (Job Object, AppContainer) runs only on Windows, not %s", req.ID, goruntime.GOOS)
}

func (b *Backend) load(_, id string) (runtime.Container, error) {
	return nil, fmt.Errorf("%q: %w", id, runtime.ErrNotExist)
}

func (b *Backend) probe() []runtime.Probe {
	out := []runtime.Probe{
		{Name: probeJobList, Status: runtime.Unknown, Detail: "not Windows"},
		{Name: probeAppContainer, Status: runtime.Unknown, Detail: "not Windows"},
		{Name: probeToken, Status: runtime.Unknown, Detail: "not Windows"},
	}
	return append(out, fixedProbes()...)
}
