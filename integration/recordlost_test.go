//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// A container's record (vetto.json) lost while it runs — removed by hand,
// a failing disk, a state root restored from a backup — must not let
// delete forget a live workload. On 3d41cc7 delete took a missing record
// for a create that died before its first write: it removed the state
// directory, backend state and all, and delete --force said 0, while the
// container's processes ran on in their cgroups where no later command
// could find or kill them; an unreadable record made delete --force fail
// with the container left running. Now delete refuses, saying why, and
// delete --force tears down what the backend records, with a receipt.
func TestDeleteWithItsRecordLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, record string)
	}{
		{"missing", func(t *testing.T, record string) {
			if err := os.Remove(record); err != nil {
				t.Fatal(err)
			}
		}},
		{"unreadable", func(t *testing.T, record string) {
			if err := os.WriteFile(record, []byte("{\"id\": tor"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", "(sleep 1000 &); exec sleep 1000"}, nil), id)
			if len(cgroupPids(id)) == 0 {
				t.Fatal("the container runs no process to begin with")
			}
			tc.lose(t, filepath.Join(e.root, id, "vetto.json"))
			if r := e.vetto("list"); !strings.Contains(r.stderr, id) || !strings.Contains(r.stderr, "delete --force") {
				t.Fatalf("list says nothing of a container whose record is lost: %s", r)
			}

			r := e.vetto("delete", id)
			if r.code == 0 || !strings.Contains(r.stderr, "delete --force") {
				t.Fatalf("delete of a running container whose record is lost: %s; want a refusal that names delete --force", r)
			}
			if len(cgroupPids(id)) == 0 {
				t.Fatal("a refused delete ended the container")
			}
			if _, err := os.Stat(filepath.Join(e.root, id)); err != nil {
				t.Fatalf("a refused delete removed the container's state: %v", err)
			}

			r = e.vetto("delete", "--force", id)
			if r.code != 0 {
				t.Fatalf("delete --force: %s", r)
			}
			if procs := processesInCgroup(id); len(procs) > 0 {
				t.Fatalf("delete --force said 0 and left the container running: %v", procs)
			}
			if d := cgroupDirs(id); len(d) > 0 {
				t.Fatalf("cgroups left after delete --force: %v", d)
			}
			if _, err := os.Stat(filepath.Join(e.root, id)); !os.IsNotExist(err) {
				t.Fatalf("state left after delete --force: %v", err)
			}
		})
	}

	// The stored spec's poststop hooks run only if the spec still has the
	// hash the evidence directory kept of its create: the record that
	// held the hash is gone, and a rewritten spec must not choose what
	// runs on the host.
	for _, rewrite := range []bool{false, true} {
		name := "poststop of the frozen spec"
		if rewrite {
			name = "poststop of a rewritten spec"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			frozen, planted := filepath.Join(e.tmp, "frozen-ran"), filepath.Join(e.tmp, "planted-ran")
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
				s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/touch", Args: []string{"touch", frozen}}}}
			}), id)
			dir := filepath.Join(e.root, id)
			if rewrite {
				cfg := filepath.Join(dir, "config.json")
				data, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				var s specs.Spec
				if err := json.Unmarshal(data, &s); err != nil {
					t.Fatal(err)
				}
				s.Hooks.Poststop = []specs.Hook{{Path: "/bin/touch", Args: []string{"touch", planted}}}
				if data, err = json.Marshal(&s); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfg, data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Remove(filepath.Join(dir, "vetto.json")); err != nil {
				t.Fatal(err)
			}
			if r := e.vetto("delete", "--force", id); r.code != 0 {
				t.Fatalf("delete --force: %s", r)
			}
			if procs := processesInCgroup(id); len(procs) > 0 {
				t.Fatalf("delete --force left the container running: %v", procs)
			}
			if _, err := os.Stat(planted); err == nil {
				t.Fatal("a poststop hook written into the stored spec after create ran on the host")
			}
			_, err := os.Stat(frozen)
			if !rewrite && err != nil {
				t.Fatalf("the frozen spec's poststop hook did not run: %v", err)
			}
			if rewrite && err == nil {
				t.Fatal("the frozen spec's hook ran from a spec that is not the frozen one")
			}
		})
	}
}
