// Package hooks holds vetto-runtime's verification logic and the OCI hooks
// the core runs itself: it reads facts of a live process from the host and
// judges them against the spec, and it executes OCI hooks with the state on
// stdin. It imports spec/ and nothing else of ours.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// maxHookOutput bounds what a hook's stdout/stderr may add to an error.
const maxHookOutput = 4096

// RunOCI runs the hooks of one phase in order, each with the container's
// state as JSON on stdin, as config.md §Hooks says: "The state of the
// container MUST be passed to hooks over stdin". It stops at the first
// failure and returns it; whether that failure fails the operation is the
// caller's decision, since it differs per phase.
//
// A hook's environment is exactly its env list (empty when unset): the
// runtime's own environment is not leaked to programs a bundle names.
func RunOCI(phase string, list []specs.Hook, state *specs.State) error {
	if len(list) == 0 {
		return nil
	}
	stdin, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("encode state for %s hooks: %w", phase, err)
	}
	for i, h := range list {
		if err := runOne(h, stdin); err != nil {
			return fmt.Errorf("error running %s hook #%d (%s): %w", phase, i, h.Path, err)
		}
	}
	return nil
}

// RunOCIEach runs every hook of a phase even when some fail, and returns
// the failures: for poststop, where "the remaining hooks and lifecycle
// continue as if the hook had succeeded".
func RunOCIEach(phase string, list []specs.Hook, state *specs.State) []error {
	stdin, err := json.Marshal(state)
	if err != nil {
		return []error{fmt.Errorf("encode state for %s hooks: %w", phase, err)}
	}
	var errs []error
	for i, h := range list {
		if err := runOne(h, stdin); err != nil {
			errs = append(errs, fmt.Errorf("error running %s hook #%d (%s): %w", phase, i, h.Path, err))
		}
	}
	return errs
}

func runOne(h specs.Hook, stdin []byte) error {
	ctx := context.Background()
	if h.Timeout != nil && *h.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*h.Timeout)*time.Second)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, h.Path)
	if len(h.Args) > 0 {
		cmd.Args = h.Args
	}
	cmd.Env = append([]string{}, h.Env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out boundedBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// Do not wait forever for a grandchild that kept the output pipe.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timeout after %d seconds", *h.Timeout)
	}
	if err != nil {
		if b := bytes.TrimSpace(out.Bytes()); len(b) > 0 {
			return fmt.Errorf("%w, output: %s", err, b)
		}
		return err
	}
	return nil
}

type boundedBuffer struct{ bytes.Buffer }

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := maxHookOutput - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
