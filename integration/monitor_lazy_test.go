//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			var receipt *struct {
				Monitor *struct {
					Pid     int
					Rounds  int
					Stopped bool
				}
			}
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
			switch {
			case tc.monitor && (receipt.Monitor == nil || receipt.Monitor.Pid == 0 || !receipt.Monitor.Stopped):
				t.Errorf("a long foreground job: monitor %+v, want one, stopped at teardown", receipt.Monitor)
			case !tc.monitor && receipt.Monitor != nil:
				t.Errorf("a job done before the monitor's first round got one: %+v", receipt.Monitor)
			}
		})
	}
}
