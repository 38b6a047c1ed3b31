package linux

import (
	"os"
	"os/signal"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The registration PrepareForeground begins is complete when
// caughtSignals returns it: a signal sent right then reaches the channel
// (the init starts only after this). Without a prepared one, caughtSignals
// registers its own.
func TestCaughtSignals(t *testing.T) {
	received := func(c chan os.Signal) bool {
		if err := unix.Kill(os.Getpid(), unix.SIGWINCH); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case s := <-c:
				if s == unix.SIGWINCH {
					return true
				}
			case <-time.After(5 * time.Second):
				return false
			}
		}
	}
	(&Backend{}).PrepareForeground()
	early.Lock()
	prepared := early.signals
	early.Unlock()
	c := caughtSignals()
	defer signal.Stop(c)
	if c != prepared {
		t.Fatal("caughtSignals did not return the channel PrepareForeground began")
	}
	if !received(c) {
		t.Fatal("a signal sent once caughtSignals returned did not reach the prepared channel")
	}
	own := caughtSignals()
	defer signal.Stop(own)
	if own == c {
		t.Fatal("a second caughtSignals reused the consumed channel")
	}
	if !received(own) {
		t.Fatal("caughtSignals' own registration missed a signal")
	}
}
