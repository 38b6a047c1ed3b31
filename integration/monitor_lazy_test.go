//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// A foreground run spawns the container's monitor when the monitor's
// first round is due, and only if the container still runs: a job done
// before that never pays for the process, a long one is watched as a
// detached one is. The receipt in the audit log says which.
func TestForegroundRunMonitor(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		monitor bool
	}{
		{"a short job has none", []string{"true"}, false},
		{"a long job is watched", []string{"sleep", "1"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			audit := filepath.Join(e.tmp, "audit.jsonl")
			id := e.id()
			e.mustVetto("--audit-log", audit, "run", "-b", e.bundle(tc.args, nil), id)
			receipt := receiptMonitor(t, audit)
			switch {
			case tc.monitor && (receipt == nil || receipt.Pid == 0 || !receipt.Stopped):
				t.Errorf("a long foreground job: monitor %+v, want one, stopped at teardown", receipt)
			case !tc.monitor && receipt != nil:
				t.Errorf("a job done before the monitor's first round got one: %+v", receipt)
			}
		})
	}
}

// receiptMonitor is the monitor the teardown receipt in the audit log at
// path names (nil: none was begun); the test fails without a receipt.
func receiptMonitor(t *testing.T, path string) *receiptMonitorFacts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var receipt *struct{ Monitor *receiptMonitorFacts }
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Event   string
			Receipt json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event == "receipt" {
			if err := json.Unmarshal(ev.Receipt, &receipt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if receipt == nil {
		t.Fatalf("no receipt in the audit log: %s", data)
	}
	return receipt.Monitor
}

type receiptMonitorFacts struct {
	Pid     int
	Rounds  int
	Stopped bool
}

// The attack: the path the runtime was run from is replaced while a
// foreground run's workload runs (by whoever can write that directory —
// a container the evaluator would now refuse, a user owning it). The
// monitor the run begins once the workload runs must be the runtime that
// is running, not what is at the path now: that would run as root.
func TestMonitorIsTheRunningRuntimeNotItsPath(t *testing.T) {
	e := newEnv(t)
	tools := filepath.Join(e.tmp, "tools")
	sig := filepath.Join(e.tmp, "sig")
	for _, d := range []string{tools, sig} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(tools, "vetto-runtime")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(sig, "running")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.tmp, "PWNED")
	bundle := e.bundle([]string{"sh", "-c", "echo go > /sig/running; sleep 1.5"}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/sig", Type: "bind", Source: sig, Options: []string{"bind", "rw"}})
	})
	id := e.id()
	audit := filepath.Join(e.tmp, "audit.jsonl")
	cmd := exec.Command(self, "--root", e.root, "--audit-log", audit, "run", "--bundle", bundle, id)
	out := e.tempFile()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The workload runs: put another program at the runtime's path, as a
	// rename does, before the monitor's first round (100 ms) is due.
	f, err := os.OpenFile(fifo, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Read(make([]byte, 8))
	f.Close()
	fake := filepath.Join(tools, ".fake")
	writeExec(t, fake, "#!/bin/sh\ntouch "+marker+"\nexec sleep 5\n")
	if err := os.Rename(fake, self); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v: %s", err, readAll(t, out))
	}
	if fileExists(marker) {
		t.Fatal("the runtime started the program now at its path (as root), not itself, as the monitor")
	}
	if m := receiptMonitor(t, audit); m == nil || m.Pid == 0 {
		t.Fatalf("no monitor was begun (%+v): the test exercised nothing", m)
	}
}
