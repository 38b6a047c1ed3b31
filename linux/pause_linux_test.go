package linux

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPauseSleepsAtLeastAsAsked: a poll's pause never returns before its
// time, whichever way it sleeps — nanosleep(2) under a millisecond, the Go
// timer above.
func TestPauseSleepsAtLeastAsAsked(t *testing.T) {
	for _, d := range []time.Duration{0, time.Microsecond, 50 * time.Microsecond, 400 * time.Microsecond, 2 * time.Millisecond} {
		began := time.Now()
		pause(d)
		if took := time.Since(began); took < d {
			t.Errorf("pause(%v) returned after %v", d, took)
		}
	}
}

// TestPauseSleepsOnThroughSignals: a signal that interrupts nanosleep(2)
// (EINTR: it is never restarted) must not end the pause early. The Go
// runtime's own preemption signal is sent to the pausing thread every
// 20 µs throughout.
func TestPauseSleepsOnThroughSignals(t *testing.T) {
	const d = 900 * time.Microsecond
	tid := make(chan int)
	done := make(chan time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		began := time.Now()
		pause(d)
		done <- time.Since(began)
	}()
	target := <-tid
	var sent atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Tgkill(unix.Getpid(), target, unix.SIGURG) == nil {
				sent.Add(1)
			}
			// Not time.Sleep: its 20 µs would be a millisecond here.
			_ = unix.Nanosleep(&unix.Timespec{Nsec: 20000}, nil)
		}
	}()
	took := <-done
	close(stop)
	if took < d {
		t.Fatalf("pause(%v) returned after %v, with %d signals sent to its thread", d, took, sent.Load())
	}
}
