package runtime

import (
	"os/exec"
	"testing"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// monitorStats is host facts whose only answer is the monitor's stat, one
// state a read, the last repeated. Any other call panics (nil interface),
// which stopMonitor must not make.
type monitorStats struct {
	hooks.PostFacts
	states []hooks.ProcState
	reads  int
}

func (f *monitorStats) ProcStat(int) (hooks.ProcState, error) {
	st := f.states[min(f.reads, len(f.states)-1)]
	f.reads++
	return st, nil
}

// A delete reports the monitor stopped only once its process has finished
// exiting. One still exiting (PF_EXITING) is a process on the host for a
// moment yet: a caller that looked for what the container left, once the
// delete returned, found the monitor there.
func TestStopMonitorWaitsUntilItHasExited(t *testing.T) {
	// A process of this test's own stands in for the monitor: stopMonitor
	// signals the pid it names.
	stand := exec.Command("sleep", "60")
	if err := stand.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Process.Kill(); _ = stand.Wait() })
	const start = 7
	running := hooks.ProcState{State: 'S', Start: start}
	exiting := hooks.ProcState{State: 'R', Start: start, Exiting: true}
	zombie := hooks.ProcState{State: 'Z', Start: start}
	reused := hooks.ProcState{State: 'S', Start: start + 1}
	for _, tc := range []struct {
		name   string
		states []hooks.ProcState
	}{
		{"a zombie at the first look", []hooks.ProcState{zombie}},
		{"exiting at the first three looks", []hooks.ProcState{exiting, exiting, exiting, zombie}},
		{"running, then exiting twice", []hooks.ProcState{running, exiting, exiting, zombie}},
		{"running, then its pid another process's", []hooks.ProcState{running, reused}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &monitorStats{states: tc.states}
			r := &Runtime{Facts: f}
			rec := &Record{ID: "c1", Monitor: &MonitorState{Pid: stand.Process.Pid, StartTime: start}}
			out := r.stopMonitor(rec)
			if out == nil || !out.Stopped {
				t.Fatalf("stopMonitor = %+v, want it stopped", out)
			}
			if f.reads != len(tc.states) {
				t.Errorf("stopMonitor returned after %d looks at the monitor, want %d: it had not exited before", f.reads, len(tc.states))
			}
		})
	}
}
