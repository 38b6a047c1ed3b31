package linux

import (
	"os"
	"os/signal"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The registration PrepareForeground begins has the urgent signals caught
// when caughtSignals returns (the init starts only after this), and every
// other signal once the channel it returns is closed (the program execs
// only after that): a signal sent then reaches the channel, where one
// the Go runtime does not catch is dropped. Without a prepared one,
// caughtSignals registers every signal itself.
func TestCaughtSignals(t *testing.T) {
	received := func(c chan os.Signal, sig unix.Signal) bool {
		if err := unix.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case s := <-c:
				if s == sig {
					return true
				}
			case <-time.After(5 * time.Second):
				return false
			}
		}
	}
	// A real-time signal is not urgent, and the Go runtime drops it
	// uncaught: it reaches the channel only if the rest were caught.
	late := unix.Signal(37) // a real-time signal, SIGRTMIN+3 as glibc numbers them
	(&Backend{}).PrepareForeground()
	early.Lock()
	prepared := early.signals
	early.Unlock()
	c, all := caughtSignals(false)
	defer signal.Stop(c)
	if c != prepared {
		t.Fatal("caughtSignals did not return the channel PrepareForeground began")
	}
	for _, sig := range []unix.Signal{unix.SIGCHLD, unix.SIGHUP, unix.SIGTERM} {
		if !received(c, sig) {
			t.Fatalf("%v, sent once caughtSignals returned, did not reach the prepared channel", sig)
		}
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("the rest of the signals were not caught within 10 s")
	}
	if !received(c, late) {
		t.Fatalf("%v, sent once every signal was said caught, did not reach the channel", late)
	}
	own, ownAll := caughtSignals(true)
	defer signal.Stop(own)
	if own == c {
		t.Fatal("a second caughtSignals reused the consumed channel")
	}
	select {
	case <-ownAll:
	default:
		t.Fatal("caughtSignals(true) returned before every signal was caught")
	}
	if !received(own, late) {
		t.Fatal("caughtSignals' own registration missed a signal")
	}
}

// A foreground run's program does not exec before every signal is caught:
// Start waits for signalsCaught before it looks at the init at all.
func TestStartWaitsForEverySignalCaught(t *testing.T) {
	caught := make(chan struct{})
	past := make(chan struct{})
	c := &container{signalsCaught: caught}
	go func() {
		// Past the wait, Start reads the init through a libcontainer
		// container this test has none of: that it got there is all
		// the test asks.
		defer func() { _ = recover(); close(past) }()
		_, _ = c.Start(&specs.Spec{}, nil)
	}()
	select {
	case <-past:
		t.Fatal("Start went on before every signal was caught")
	case <-time.After(100 * time.Millisecond):
	}
	close(caught)
	select {
	case <-past:
	case <-time.After(5 * time.Second):
		t.Fatal("Start still waits after every signal was caught")
	}
}
