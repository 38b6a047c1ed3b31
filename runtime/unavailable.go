package runtime

import (
	"fmt"
	"strconv"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// Unavailable is a Backend for a platform whose sandbox is not built: it
// refuses every launch with ErrBackendUnavailable (exit 125) rather than
// run anything unconfined, and knows no containers. The darwin and
// windows backends are this until their sandboxes exist (docs/platforms.md).
type Unavailable struct {
	OS string
	// Sandbox names the mechanism that would confine containers there.
	Sandbox string
}

var _ Backend = Unavailable{}

func (u Unavailable) err() error {
	return Errorf(ErrBackendUnavailable, "the %s sandbox (%s) is not implemented in this build, and vetto-runtime does not run a container it cannot confine; use a Linux host", u.OS, u.Sandbox)
}

func (u Unavailable) Name() string { return u.OS }

func (u Unavailable) Create(*CreateRequest) (Container, Foreground, error) { return nil, nil, u.err() }

// Load finds nothing: this backend never created a container.
func (u Unavailable) Load(_, id string) (Container, error) {
	return nil, fmt.Errorf("%q: %w", id, ErrNotExist)
}

// ParseSignal accepts numbers only; no container can exist to signal.
func (u Unavailable) ParseSignal(s string) (syscall.Signal, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("unknown signal %q", s)
	}
	return syscall.Signal(n), nil
}

func (u Unavailable) ExampleSpec(bool) (*specs.Spec, error) { return nil, u.err() }

func (u Unavailable) Features() (*features.Features, error) { return nil, u.err() }
