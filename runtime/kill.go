package runtime

import (
	"fmt"
)

// Kill sends a signal ("TERM", "SIGKILL", "9") to the container's init, or
// with all to every process in it.
func (r *Runtime) Kill(id, signal string, all bool) error {
	sig, err := r.Backend.ParseSignal(signal)
	if err != nil {
		return Errorf(ErrInvalidInput, "kill %q: %w", id, err)
	}
	l, _, c, err := r.loadLocked(id)
	if err != nil {
		return err
	}
	defer l.unlock()
	if c == nil {
		return fmt.Errorf("kill %q: %w", id, ErrNotRunning)
	}
	if err := c.Signal(sig, all); err != nil {
		return fmt.Errorf("kill %q: %w", id, err)
	}
	return nil
}
