//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// cliRun runs the binary with exactly args (no --root added), with files
// for stdio as e.vetto does.
func cliRun(e *env, args ...string) result {
	e.t.Helper()
	return e.runCmd(exec.Command(binary, args...))
}

// cliLines splits output into lines, without the final newline.
func cliLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// With --log and --log-format json a failure is one JSON object in the log
// file, which containerd and podman parse.
func TestCLILogJSON(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"state", []string{"state", "nope"}, "container does not exist"},
		{"kill", []string{"kill", "nope", "KILL"}, "container does not exist"},
		{"delete", []string{"delete", "nope"}, "container does not exist"},
		{"invalid-id", []string{"state", "../nope"}, "invalid container ID format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			logFile := filepath.Join(e.tmp, "log.json")
			start := time.Now().Add(-2 * time.Second)
			r := e.vetto(append([]string{"--log", logFile, "--log-format", "json"}, tt.args...)...)
			if r.code != 1 {
				t.Errorf("got exit %d, want 1 (%s)", r.code, r)
			}
			data, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatalf("log file: %v", err)
			}
			lines := cliLines(string(data))
			if len(lines) != 1 || !bytes.HasSuffix(data, []byte("\n")) {
				t.Fatalf("got log %q (%d lines), want exactly one line", data, len(lines))
			}
			var entry map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
				t.Fatalf("got log line %q: %v, want a JSON object", lines[0], err)
			}
			if entry["level"] != "error" {
				t.Errorf("got level %v, want error", entry["level"])
			}
			if msg, _ := entry["msg"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("got msg %q, want it to contain %q", entry["msg"], tt.want)
			}
			ts, _ := entry["time"].(string)
			if tm, err := time.Parse(time.RFC3339, ts); err != nil || tm.Before(start) || tm.After(time.Now().Add(2*time.Second)) {
				t.Errorf("got time %q (%v), want an RFC 3339 time of now", entry["time"], err)
			}
			// The log is the supervisor's; a person at a terminal still
			// sees the error on stderr, but never as JSON.
			if !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, `"level"`) {
				t.Errorf("got stderr %q, want the plain error containing %q", r.stderr, tt.want)
			}
		})
	}
}

func TestCLIVersion(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"long", []string{"--version"}},
		{"with-root", []string{"--root", "/nonexistent-root", "--version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := cliRun(e, tt.args...)
			if r.code != 0 {
				t.Fatalf("got %s, want exit 0", r)
			}
			lines := cliLines(r.stdout)
			if len(lines) != 3 {
				t.Fatalf("got %d lines %q, want 3", len(lines), r.stdout)
			}
			if v, ok := strings.CutPrefix(lines[0], "vetto-runtime version "); !ok || strings.TrimSpace(v) == "" {
				t.Errorf("got first line %q, want `vetto-runtime version X`", lines[0])
			}
			if c, ok := strings.CutPrefix(lines[1], "commit: "); !ok || strings.TrimSpace(c) == "" {
				t.Errorf("got second line %q, want `commit: X`", lines[1])
			}
			if !strings.HasPrefix(lines[2], "spec: 1.") {
				t.Errorf("got third line %q, want `spec: 1.x`", lines[2])
			}
		})
	}
}

// Global and command flags work as --flag=value and --flag value (and -b).
func TestCLIFlagForms(t *testing.T) {
	tests := []struct {
		name   string
		root   func(root string) []string
		bundle func(b string) []string
	}{
		{"root-equals/bundle-equals", func(r string) []string { return []string{"--root=" + r} }, func(b string) []string { return []string{"--bundle=" + b} }},
		{"root-space/b-space", func(r string) []string { return []string{"--root", r} }, func(b string) []string { return []string{"-b", b} }},
		{"root-equals/b-space", func(r string) []string { return []string{"--root=" + r} }, func(b string) []string { return []string{"-b", b} }},
		{"root-space/bundle-space", func(r string) []string { return []string{"--root", r} }, func(b string) []string { return []string{"--bundle", b} }},
		{"root-space/b-equals", func(r string) []string { return []string{"--root", r} }, func(b string) []string { return []string{"-b=" + b} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			// Should the flag be ignored, the container would land in the
			// default root, out of the leak check's sight: remove it there.
			t.Cleanup(func() { _ = exec.Command(binary, "delete", "--force", id).Run() })
			b := e.bundle([]string{"sleep", "1000"}, nil)
			args := append(tt.root(e.root), "create")
			args = append(append(args, tt.bundle(b)...), id)
			if r := cliRun(e, args...); r.code != 0 {
				t.Fatalf("vetto-runtime %s: got %s, want exit 0", strings.Join(args, " "), r)
			}
			// e.state reads --root e.root: the container must be there,
			// made from b (the cwd holds no config.json to fall back on).
			st := e.state(id)
			if st["status"] != "created" || st["bundle"] != b {
				t.Errorf("got status %v bundle %v, want created %s", st["status"], st["bundle"], b)
			}
			r := cliRun(e, append(tt.root(e.root), "list", "-q")...)
			if r.code != 0 || strings.TrimSpace(r.stdout) != id {
				t.Errorf("list -q with %v: got %s, want %s", tt.root(e.root), r, id)
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

func TestCLIList(t *testing.T) {
	e := newEnv(t)
	created, running := e.id(), e.id()
	bCreated := e.bundle([]string{"sleep", "1000"}, nil)
	bRunning := e.bundle([]string{"sleep", "1000"}, nil)
	e.mustVetto("create", "-b", bCreated, created)
	e.mustVetto("run", "-d", "-b", bRunning, running)
	e.waitStatus(running, "running")
	want := map[string]struct{ status, bundle string }{
		created: {"created", bCreated},
		running: {"running", bRunning},
	}
	ids := []string{created, running}
	sort.Strings(ids)

	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, r result)
	}{
		{"table", []string{"list"}, func(t *testing.T, r result) {
			lines := cliLines(r.stdout)
			if len(lines) != 3 {
				t.Fatalf("got %d lines %q, want a header and 2 rows", len(lines), r.stdout)
			}
			if got, wantH := strings.Fields(lines[0]), []string{"ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"}; !slices.Equal(got, wantH) {
				t.Errorf("got header %q, want %q", got, wantH)
			}
			for i, line := range lines[1:] {
				f := strings.Fields(line)
				if len(f) != 6 {
					t.Errorf("got row %q, want 6 columns", line)
					continue
				}
				w := want[f[0]]
				if f[0] != ids[i] || f[2] != w.status || f[3] != w.bundle || f[5] != "root" {
					t.Errorf("got row %d %q, want id %s status %s bundle %s owner root", i, line, ids[i], w.status, w.bundle)
				}
				if pid, err := strconv.Atoi(f[1]); err != nil || pid <= 0 {
					t.Errorf("got pid %q in row %q, want a positive pid", f[1], line)
				}
				if _, err := time.Parse(time.RFC3339, f[4]); err != nil {
					t.Errorf("got created %q in row %q: %v", f[4], line, err)
				}
			}
		}},
		{"json", []string{"list", "--format", "json"}, func(t *testing.T, r result) {
			var got []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("got %q: %v, want a JSON array", r.stdout, err)
			}
			if len(got) != 2 {
				t.Fatalf("got %d entries, want 2: %q", len(got), r.stdout)
			}
			for _, o := range got {
				id, _ := o["id"].(string)
				w, ok := want[id]
				if !ok {
					t.Errorf("got entry for id %v, want one of %v", o["id"], ids)
					continue
				}
				if o["status"] != w.status || o["bundle"] != w.bundle {
					t.Errorf("got %s status %v bundle %v, want %s %s", id, o["status"], o["bundle"], w.status, w.bundle)
				}
				if pid, _ := o["pid"].(float64); pid <= 0 {
					t.Errorf("got %s pid %v, want a positive pid", id, o["pid"])
				}
			}
		}},
		{"json-short-flag", []string{"list", "-f", "json"}, func(t *testing.T, r result) {
			var got []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
				t.Errorf("got %q (%v), want a JSON array of 2", r.stdout, err)
			}
		}},
		{"quiet", []string{"list", "-q"}, func(t *testing.T, r result) {
			if got := cliLines(r.stdout); !slices.Equal(got, ids) {
				t.Errorf("got %q, want exactly %q", got, ids)
			}
		}},
		{"quiet-long", []string{"list", "--quiet"}, func(t *testing.T, r result) {
			if got := cliLines(r.stdout); !slices.Equal(got, ids) {
				t.Errorf("got %q, want exactly %q", got, ids)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.vetto(tt.args...)
			if r.code != 0 {
				t.Fatalf("got %s, want exit 0", r)
			}
			tt.check(t, r)
		})
	}
	t.Run("bogus-format", func(t *testing.T) {
		r := e.vetto("list", "--format", "bogus")
		if r.code != 1 || !strings.Contains(r.stderr, "bogus") || r.stdout != "" {
			t.Errorf("got %s, want exit 1 naming the format and no output", r)
		}
	})
	e.mustVetto("delete", "--force", running)
	e.mustVetto("delete", "--force", created)
	if r := e.mustVetto("list", "-q"); r.stdout != "" {
		t.Errorf("after delete: got list -q %q, want empty", r.stdout)
	}
}

// cliReadSpec parses dir/config.json.
func cliReadSpec(t *testing.T, dir string) (*specs.Spec, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	return &s, data
}

func TestCLISpec(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, s *specs.Spec)
	}{
		{"default", nil, func(t *testing.T, s *specs.Spec) {
			if s.Process == nil || !slices.Equal(s.Process.Args, []string{"sh"}) {
				t.Errorf("got process %+v, want args [sh]", s.Process)
			}
			if s.Root == nil || s.Root.Path != "rootfs" {
				t.Errorf("got root %+v, want path rootfs", s.Root)
			}
			if !strings.HasPrefix(s.Version, "1.") {
				t.Errorf("got ociVersion %q, want 1.x", s.Version)
			}
			if s.Linux != nil {
				for _, ns := range s.Linux.Namespaces {
					if ns.Type == specs.UserNamespace {
						t.Errorf("got a user namespace in the default (root) spec, want none")
					}
				}
			}
		}},
		{"rootless", []string{"--rootless"}, func(t *testing.T, s *specs.Spec) {
			if s.Linux == nil {
				t.Fatal("got no linux section, want one")
			}
			userns := false
			for _, ns := range s.Linux.Namespaces {
				userns = userns || ns.Type == specs.UserNamespace
			}
			if !userns {
				t.Errorf("got namespaces %v, want a user namespace", s.Linux.Namespaces)
			}
			if len(s.Linux.UIDMappings) == 0 || len(s.Linux.GIDMappings) == 0 {
				t.Errorf("got uid mappings %v gid mappings %v, want both set", s.Linux.UIDMappings, s.Linux.GIDMappings)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.tmp, "spec-bundle")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"spec", "--bundle", dir}, tt.args...)
			if r := e.vetto(args...); r.code != 0 {
				t.Fatalf("got %s, want exit 0", r)
			}
			s, _ := cliReadSpec(t, dir)
			tt.check(t, s)

			// A second spec must not clobber the (edited) config.json.
			s.Process.Args = []string{"edited", "by", "the", "user"}
			writeSpec(t, dir, s)
			before, err := os.ReadFile(filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			r := e.vetto(args...)
			if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(dir, "config.json")) || !strings.Contains(r.stderr, "exists") {
				t.Errorf("second spec: got %s, want exit 1 naming the existing config.json", r)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "config.json")); !bytes.Equal(after, before) {
				t.Errorf("second spec changed config.json: got %q, want %q", after, before)
			}
		})
	}
}

func TestCLIFeatures(t *testing.T) {
	e := newEnv(t)
	r := e.mustVetto("features")
	var f map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &f); err != nil {
		t.Fatalf("got %q: %v, want a JSON object", r.stdout, err)
	}
	linux, _ := f["linux"].(map[string]any)
	seccomp, _ := linux["seccomp"].(map[string]any)
	strs := func(v any) []string {
		var out []string
		list, _ := v.([]any)
		for _, x := range list {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		check func() (ok bool, got any)
	}{
		{"ociVersionMax", func() (bool, any) {
			v, _ := f["ociVersionMax"].(string)
			return strings.HasPrefix(v, "1."), f["ociVersionMax"]
		}},
		{"ociVersionMin", func() (bool, any) {
			v, _ := f["ociVersionMin"].(string)
			return strings.HasPrefix(v, "1."), f["ociVersionMin"]
		}},
		{"hooks", func() (bool, any) {
			got := strs(f["hooks"])
			for _, h := range []string{"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"} {
				if !slices.Contains(got, h) {
					return false, got
				}
			}
			return true, got
		}},
		{"namespaces", func() (bool, any) {
			got := strs(linux["namespaces"])
			for _, ns := range []string{"network", "pid", "mount", "user"} {
				if !slices.Contains(got, ns) {
					return false, got
				}
			}
			return true, got
		}},
		{"seccomp-enabled", func() (bool, any) {
			return seccomp["enabled"] == true, seccomp["enabled"]
		}},
		{"seccomp-actions", func() (bool, any) {
			got := strs(seccomp["actions"])
			return slices.Contains(got, "SCMP_ACT_ERRNO") && slices.Contains(got, "SCMP_ACT_ALLOW"), got
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok, got := tt.check(); !ok {
				t.Errorf("got %s %v, want otherwise", tt.name, got)
			}
		})
	}
}

func TestCLIStateFields(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
	}{
		{"with-annotations", map[string]string{"org.example.vetto-test": "some value", "org.example.other": ""}},
		{"without-annotations", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) { s.Annotations = tt.annotations })
			pidFile := filepath.Join(e.tmp, "pid")
			before := time.Now().Add(-2 * time.Second)
			e.mustVetto("create", "-b", b, "--pid-file", pidFile, id)
			after := time.Now().Add(2 * time.Second)
			raw, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			st := e.state(id)

			if v, _ := st["ociVersion"].(string); !strings.HasPrefix(v, "1.") {
				t.Errorf("got ociVersion %v, want 1.x", st["ociVersion"])
			}
			if st["id"] != id {
				t.Errorf("got id %v, want %s", st["id"], id)
			}
			if pid, _ := st["pid"].(float64); strconv.Itoa(int(pid)) != string(raw) {
				t.Errorf("got pid %v, want %s from the pid file", st["pid"], raw)
			}
			if st["status"] != "created" {
				t.Errorf("got status %v, want created", st["status"])
			}
			if st["bundle"] != b {
				t.Errorf("got bundle %v, want %s", st["bundle"], b)
			}
			if st["rootfs"] != rootfs {
				t.Errorf("got rootfs %v, want %s", st["rootfs"], rootfs)
			}
			cs, _ := st["created"].(string)
			if c, err := time.Parse(time.RFC3339, cs); err != nil || c.Before(before) || c.After(after) {
				t.Errorf("got created %v (%v), want an RFC 3339 time between %s and %s", st["created"], err, before, after)
			}
			if st["owner"] != "root" {
				t.Errorf("got owner %v, want root", st["owner"])
			}
			if tt.annotations == nil {
				if a, ok := st["annotations"]; ok && a != nil && len(a.(map[string]any)) > 0 {
					t.Errorf("got annotations %v, want none", a)
				}
			} else {
				got, _ := st["annotations"].(map[string]any)
				if len(got) != len(tt.annotations) {
					t.Errorf("got annotations %v, want %v", st["annotations"], tt.annotations)
				}
				for k, v := range tt.annotations {
					if gv, ok := got[k]; !ok || gv != v {
						t.Errorf("got annotation %s=%v (present %v), want %q", k, gv, ok, v)
					}
				}
			}
			vetto, ok := st["vetto"].(map[string]any)
			if !ok {
				t.Fatalf("got vetto %v, want an object", st["vetto"])
			}
			if s, _ := vetto["state"].(string); s != "Launchable" {
				t.Errorf("got vetto.state %v, want Launchable for a created container", vetto["state"])
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

// Commands check their positional arguments as runc does.
func TestCLIArgCount(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"start-none", []string{"start"}, `"start" requires exactly 1 argument(s)`},
		{"start-two", []string{"start", "a", "b"}, `"start" requires exactly 1 argument(s)`},
		{"state-none", []string{"state"}, `"state" requires exactly 1 argument(s)`},
		{"delete-two", []string{"delete", "a", "b"}, `"delete" requires exactly 1 argument(s)`},
		{"create-none", []string{"create"}, `"create" requires exactly 1 argument(s)`},
		{"kill-none", []string{"kill"}, `"kill" requires a minimum of 1 argument(s)`},
		{"kill-three", []string{"kill", "a", "KILL", "c"}, `"kill" requires a maximum of 2 argument(s)`},
		{"list-one", []string{"list", "a"}, `"list" requires exactly 0 argument(s)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.vetto(tt.args...)
			want := strings.ReplaceAll(tt.want, `"`, `\"`) // quoted in the text log line
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("got %s, want exit 1 and %s", r, tt.want)
			}
			if n := strings.Count(r.stderr, "\n"); n != 1 {
				t.Errorf("got %d stderr lines %q, want 1", n, r.stderr)
			}
		})
	}
}

// A flag that does not exist is one line of error naming where help is
// (exit 1), not urfave/cli's "Incorrect Usage" and the whole help text.
func TestUnknownFlagIsOneLine(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"--no-such-flag"}, {"run", "--no-such-flag", "x"}, {"policy", "check", "--no-such-flag"}} {
		r := e.vetto(args...)
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--help") || strings.Contains(r.stdout+r.stderr, "USAGE") {
			t.Errorf("%v: %s; want exit 1 and one line pointing at --help", args, r)
		}
	}
}

// The CLI habits a runc or podman user expects: --help of a refused
// command is its help (with the reason), `spec -- CMD` without a policy
// says which flag it needs, and the shells can complete commands and
// flags from the binary itself.
func TestCLIHelpAndCompletion(t *testing.T) {
	e := newEnv(t)
	for _, cmd := range []string{"checkpoint", "restore"} {
		r := e.vetto(cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Not supported: CRIU") || strings.Contains(r.stderr, "error") {
			t.Errorf("%s --help: %s; want exit 0 and its help with the reason", cmd, r)
		}
		if r := e.vetto(cmd, "x"); r.code != 1 || !strings.Contains(r.stderr, "not supported by vetto-runtime") {
			t.Errorf("%s x: %s; want exit 1 and the reason", cmd, r)
		}
	}
	bundle := t.TempDir()
	r := e.vetto("spec", "--bundle", bundle, "--", "make", "test")
	if r.code != 1 || !strings.Contains(r.stderr, "--profile") || !strings.Contains(r.stderr, "--policy") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("spec -- make test: %s; want one line naming --profile and --policy", r)
	}
	if _, err := os.Stat(filepath.Join(bundle, "config.json")); err == nil {
		t.Error("spec -- make test wrote a config.json")
	}
	if r := e.vetto("--generate-bash-completion"); r.code != 0 || !strings.Contains(r.stdout, "\nrun\n") || !strings.Contains(r.stdout, "completion") {
		t.Errorf("--generate-bash-completion: %s; want the commands", r)
	}
	if r := e.vetto("run", "--bu", "--generate-bash-completion"); !strings.Contains(r.stdout, "--bundle") {
		t.Errorf("run --bu --generate-bash-completion: %s; want --bundle", r)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := e.vetto("completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "vetto-runtime") {
			t.Errorf("completion %s: %s", shell, r)
			continue
		}
		if shell == "bash" {
			script := filepath.Join(t.TempDir(), "c.bash")
			if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			// The script completes "ru" to run, asking the binary.
			out, err := exec.Command("bash", "-c", `source "$1"; COMP_WORDS=("$2" ru); COMP_CWORD=1; _vetto_runtime; echo "${COMPREPLY[*]}"`, "bash", script, binary).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "run" {
				t.Errorf("bash completion of \"ru\": %q, %v; want run", out, err)
			}
		}
	}
	if r := e.vetto("completion", "tcsh"); r.code != 1 || !strings.Contains(r.stderr, "want bash, zsh or fish") {
		t.Errorf("completion tcsh: %s", r)
	}
}
