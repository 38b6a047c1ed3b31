package runtime

import (
	"errors"
	"fmt"
	"syscall"
	"time"
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

// killAndDestroy stops every process of c and removes what it holds.
func killAndDestroy(c Container) error {
	if err := c.Signal(syscall.SIGKILL, true); err != nil && !errors.Is(err, ErrNotRunning) {
		return fmt.Errorf("kill %q: %w", c.ID(), err)
	}
	if err := waitStopped(c, 10*time.Second); err != nil {
		return err
	}
	return c.Destroy()
}

// waitStopped polls until c's init is gone.
func waitStopped(c Container, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		st, err := c.Status()
		if err != nil {
			return fmt.Errorf("status of %q: %w", c.ID(), err)
		}
		if st == StatusStopped {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container %q init still running after SIGKILL and %s", c.ID(), limit)
		}
		time.Sleep(delay)
	}
}
