// Package darwin is vetto-runtime's darwin backend. Its sandbox, Seatbelt (sandbox-exec),
// is not built yet (DESIGN.md §9); until it is, this backend refuses every
// launch with ErrBackendUnavailable rather than run anything unconfined.
// The file is untagged so Linux CI compiles and tests it.
package darwin

import (
	"fmt"
	"strconv"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Backend is the darwin backend.
type Backend struct{}

var _ runtime.Backend = Backend{}

// errUnavailable says what is missing and what the user can do.
var errUnavailable = fmt.Errorf("the darwin sandbox (Seatbelt (sandbox-exec)) is not implemented in this build, and vetto-runtime does not run a container it cannot confine; use a Linux host: %w", runtime.ErrBackendUnavailable)

func (Backend) Name() string { return "darwin" }

func (Backend) Create(*runtime.CreateRequest) (runtime.Container, runtime.Foreground, error) {
	return nil, nil, errUnavailable
}

// Load finds nothing: this backend never created a container.
func (Backend) Load(_, id string) (runtime.Container, error) {
	return nil, fmt.Errorf("%q: %w", id, runtime.ErrNotExist)
}

// ParseSignal accepts numbers only; no container can exist to signal.
func (Backend) ParseSignal(s string) (syscall.Signal, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("unknown signal %q", s)
	}
	return syscall.Signal(n), nil
}

func (Backend) ExampleSpec(bool) (*specs.Spec, error) { return nil, errUnavailable }

func (Backend) Features() (*features.Features, error) { return nil, errUnavailable }
