package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	"github.com/sirupsen/logrus"
	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// fakeBackend is a runtime.Backend with no containers: create fails with
// createErr (what a platform that cannot build the sandbox says), and
// every other container operation finds nothing. The CLI's own work —
// argv, flags, usage errors, exit codes, what it prints — needs no more;
// real containers are integration/'s.
type fakeBackend struct {
	createErr error
	created   int
}

func (b *fakeBackend) Name() string { return "fake" }
func (b *fakeBackend) Create(*runtime.CreateRequest) (runtime.Container, runtime.Foreground, error) {
	b.created++
	return nil, nil, b.createErr
}
func (b *fakeBackend) Load(_, id string) (runtime.Container, error) {
	return nil, runtime.Errorf(runtime.ErrNotExist, "%q: %w", id, runtime.ErrNotExist)
}
func (b *fakeBackend) ParseSignal(string) (syscall.Signal, error) { return syscall.SIGKILL, nil }
func (b *fakeBackend) ExampleSpec(bool) (*specs.Spec, error) {
	return &specs.Spec{Version: specs.Version, Root: &specs.Root{Path: "rootfs"}}, nil
}
func (b *fakeBackend) Features() (*features.Features, error) {
	return &features.Features{OCIVersionMin: "1.0.0", OCIVersionMax: specs.Version}, nil
}

// result is one run of the app.
type result struct {
	code           int
	stdout, stderr string
}

// runApp runs the app on b with argv (after the program name), a state
// root and an empty floor file of the test's own, and returns the exit
// status and what it wrote. The log goes nowhere, so that the one error
// line is on the app's stderr (as with --log FILE).
func runApp(t *testing.T, b *fakeBackend, argv ...string) result {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	config := filepath.Join(dir, "runtime.toml")
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	logger := logrus.StandardLogger()
	out, formatter, level := logger.Out, logger.Formatter, logger.Level
	t.Cleanup(func() {
		logrus.SetOutput(out)
		logrus.SetFormatter(formatter)
		logrus.SetLevel(level)
	})
	logrus.SetOutput(io.Discard)
	app := newApp(&host{
		version: "1.2.3", commit: "abc",
		backend: func() runtime.Backend { return b },
		facts:   func() hooks.Facts { return nil },
		monitor: func() bool { return false },
	})
	var stdout, stderr bytes.Buffer
	app.Writer, app.ErrWriter = &stdout, &stderr
	args := append([]string{"vetto-runtime", "--root", root, "--config", config}, argv...)
	code := Run(app, args)
	return result{code, stdout.String(), stderr.String()}
}

// writeBundle is a bundle whose spec validates, for create.
func writeBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "rootfs"},
		Process: &specs.Process{Args: []string{"sh"}, Cwd: "/"},
		Linux:   &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: "pid"}, {Type: "network"}, {Type: "mount"}}},
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestApp(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		// backend's create error, if any
		createErr error
		code      int
		stdout    string // a substring of stdout ("" for any)
		stderr    string // a substring of stderr; "" for an empty stderr
	}{
		{"unknown command", []string{"nosuch"}, nil, 1, "", "vetto-runtime: No help topic for 'nosuch'"},
		{"unknown global flag", []string{"--nosuch"}, nil, 1, "", "flag provided but not defined: -nosuch (see vetto-runtime --help)"},
		{"unknown flag of a command", []string{"create", "--nosuch", "c1"}, nil, 1, "", "(see vetto-runtime create --help)"},
		{"unknown flag of a subcommand", []string{"policy", "rules", "--nosuch"}, nil, 1, "", "(see vetto-runtime policy rules --help)"},
		{"create without an id", []string{"create"}, nil, 1, "", `vetto-runtime: "create" requires exactly 1 argument(s)`},
		{"start with two ids", []string{"start", "a", "b"}, nil, 1, "", `"start" requires exactly 1 argument(s)`},
		{"kill with three arguments", []string{"kill", "a", "KILL", "x"}, nil, 1, "", `"kill" requires a maximum of 2 argument(s)`},
		{"a flag after the arguments", []string{"policy", "check", "p.toml", "--project", "."}, nil, 1, "",
			`"check" requires a maximum of 1 argument(s): --project after them reads as one; put flags before the arguments`},
		{"a flag after the id", []string{"delete", "c1", "--force"}, nil, 1, "", `--force after them reads as one`},
		{"exec without a command", []string{"exec", "c1"}, nil, 1, "", `"exec" requires a minimum of 2 argument(s)`},
		{"state of a missing container", []string{"state", "nosuch"}, nil, 1, "", `vetto-runtime: "nosuch": container does not exist`},
		{"delete of a missing container", []string{"delete", "nosuch"}, nil, 1, "", "container does not exist"},
		// The fake has no host facts: standard refuses before the
		// backend, accepting that the backend is asked.
		{"create refused by the level", []string{"create", "-b", "BUNDLE", "c1"}, nil, 125, "",
			`level standard refuses this launch: this platform has no host facts`},
		{"create refused by the backend", []string{"create", "--allow-degraded", "verify", "-b", "BUNDLE", "c1"},
			runtime.Errorf(runtime.ErrBackendUnavailable, "no sandbox here"), 125, "", "no sandbox here"},
		{"create failing in the backend", []string{"create", "--allow-degraded", "verify", "-b", "BUNDLE", "c1"}, errors.New("boom"), 125, "", "boom"},
		{"create of a missing bundle", []string{"create", "-b", "/nonexistent/bundle", "c1"}, nil, 1, "", "vetto-runtime: "},
		{"spec -- CMD", []string{"spec", "--", "make", "test"}, nil, 1, "",
			`spec: "make test" after -- is the command of a policy sandbox: add --profile NAME`},
		{"list, empty", []string{"list", "-q"}, nil, 0, "", ""},
		{"list, bad format", []string{"list", "-f", "yaml"}, nil, 1, "", `invalid format option "yaml": want table or json`},
		{"bad log format", []string{"--log-format", "xml", "list"}, nil, 1, "", `invalid --log-format "xml"`},
		// runc's global --criu and --rootless, as go-runc passes them.
		{"runc's --criu and --rootless", []string{"--criu", "/usr/sbin/criu", "--rootless=false", "list", "-q"}, nil, 0, "", ""},
		{"--rootless auto", []string{"--rootless", "auto", "list", "-q"}, nil, 0, "", ""},
		{"bad --rootless", []string{"--rootless", "maybe", "list"}, nil, 1, "", `invalid --rootless "maybe": want auto, true or false`},
		{"checkpoint", []string{"checkpoint", "c1"}, nil, 1, "", "checkpoint is not supported by vetto-runtime"},
		{"checkpoint --help", []string{"checkpoint", "--help"}, nil, 0, "not supported", ""},
		{"completion bash", []string{"completion", "bash"}, nil, 0, "complete -o bashdefault -o default -F _vetto_runtime vetto-runtime", ""},
		{"completion zsh", []string{"completion", "zsh"}, nil, 0, "bashcompinit", ""},
		{"completion fish", []string{"completion", "fish"}, nil, 0, "complete -c vetto-runtime", ""},
		{"completion of another shell", []string{"completion", "tcsh"}, nil, 1, "", `completion: unknown shell "tcsh"`},
		{"version", []string{"--version"}, nil, 0, "vetto-runtime version 1.2.3\ncommit: abc\nspec: " + specs.Version + "\n", ""},
		{"features", []string{"features"}, nil, 0, `"ociVersionMax": "` + specs.Version + `"`, ""},
		{"policy rules", []string{"policy", "rules", "-f", "json"}, nil, 0, `"id"`, ""},
		{"hook without a phase", []string{"hook"}, nil, 1, "", `"hook" requires exactly 1 argument(s)`},
		{"report of a missing log", []string{"report", "/nonexistent/audit.jsonl"}, nil, 1, "", "report: open /nonexistent/audit.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{createErr: tt.createErr}
			argv := append([]string(nil), tt.argv...)
			for i, a := range argv {
				if a == "BUNDLE" {
					argv[i] = writeBundle(t)
				}
			}
			got := runApp(t, b, argv...)
			if got.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", got.code, tt.code, got.stdout, got.stderr)
			}
			if !strings.Contains(got.stdout, tt.stdout) {
				t.Errorf("stdout %q, want it to contain %q", got.stdout, tt.stdout)
			}
			if tt.stderr == "" && got.stderr != "" || !strings.Contains(got.stderr, tt.stderr) {
				t.Errorf("stderr %q, want %q", got.stderr, tt.stderr)
			}
			// One error line, never urfave/cli's "Incorrect Usage" and
			// the whole help on stderr.
			if n := strings.Count(got.stderr, "\n"); got.code != 0 && (n != 1 || !strings.HasPrefix(got.stderr, "vetto-runtime: ")) {
				t.Errorf("stderr has %d error lines, want 1: %q", n, got.stderr)
			}
			if tt.createErr != nil && b.created != 1 {
				t.Errorf("the backend's Create ran %d times, want once", b.created)
			}
		})
	}
}

// commandPaths is every command and subcommand of app, as argv.
func commandPaths(cmds []*ucli.Command, prefix []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		p := append(append([]string(nil), prefix...), c.Name)
		out = append(out, p)
		out = append(out, commandPaths(c.Subcommands, p)...)
	}
	return out
}

// --help (and -h, and help CMD) of every command prints its help and
// exits 0, whatever the command would refuse.
func TestHelpOfEveryCommand(t *testing.T) {
	app := newApp(&host{})
	paths := commandPaths(app.Commands, nil)
	if len(paths) < 25 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, p := range paths {
		for _, flag := range []string{"--help", "-h"} {
			argv := append(append([]string(nil), p...), flag)
			t.Run(strings.Join(argv, " "), func(t *testing.T) {
				got := runApp(t, &fakeBackend{}, argv...)
				if got.code != 0 || got.stderr != "" {
					t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
				}
				if !strings.Contains(got.stdout, p[len(p)-1]) || !strings.Contains(got.stdout, "USAGE:") {
					t.Fatalf("no help for %s: %q", p[len(p)-1], got.stdout)
				}
			})
		}
		if len(p) == 1 {
			got := runApp(t, &fakeBackend{}, "help", p[0])
			if got.code != 0 || !strings.Contains(got.stdout, "USAGE:") {
				t.Errorf("help %s: exit %d, stdout %q, stderr %q", p[0], got.code, got.stdout, got.stderr)
			}
		}
	}
}

// Run passes the container's process's status through unreported, and
// maps an error by its kind through the one exit-code table.
func TestRunExitStatus(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, 0, ""},
		{"the process's status", exitWith(3), 3, ""},
		{"the process's status 0 is success", exitWith(0), 0, ""},
		{"a death by signal", exitWith(128 + 9), 137, ""},
		{"bad input", runtime.Errorf(runtime.ErrInvalidInput, "bad"), 1, "vetto-runtime: bad\n"},
		{"the sandbox not established", runtime.Errorf(runtime.ErrPostLaunchFailed, "P2 FAIL"), 125, "vetto-runtime: P2 FAIL\n"},
		{"the floor", runtime.Errorf(runtime.ErrFloorForbids, "no"), 126, "vetto-runtime: no\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logger := logrus.StandardLogger()
			out := logger.Out
			t.Cleanup(func() { logrus.SetOutput(out) })
			logrus.SetOutput(io.Discard)
			var stderr bytes.Buffer
			app := &ucli.App{Name: "vetto-runtime", ErrWriter: &stderr, Writer: io.Discard,
				ExitErrHandler: func(*ucli.Context, error) {},
				Action:         func(*ucli.Context) error { return tt.err }}
			if code := Run(app, []string{"vetto-runtime"}); code != tt.code || stderr.String() != tt.stderr {
				t.Fatalf("Run = %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}
