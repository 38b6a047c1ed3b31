// vetto-runtime is a fail-closed, OCI-compatible container runtime and a
// drop-in for runc. This file wires the CLI to the core: flags in, runtime
// calls, exit code out. It is the only place that calls os.Exit.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Set with -ldflags "-X main.version=… -X main.gitCommit=…".
var (
	version   = "0.1.0-dev"
	gitCommit = ""
)

const description = `vetto-runtime runs OCI bundles like runc, and refuses to launch a container
whose requested boundaries it cannot establish. It is a drop-in for runc:
containerd (ctr run --runc-binary, RuntimeClass), podman --runtime, or
directly:

    # vetto-runtime run [-b bundle] <container-id>`

// init turns this process into a container's init when libcontainer
// re-executes it as "vetto-runtime init". It must run here, in package
// init, as runc's does: the Go runtime runs package init on the main
// thread, locked to it, and libcontainer.Init locks the goroutine to
// whatever thread it is on. From main() the goroutine may already have
// moved to another thread; then the init drops its capabilities and sets
// no_new_privs on that thread only (both are per thread), and the host,
// reading /proc/<pid>/status — the main thread's — sees the init still
// privileged until the exec.
func init() {
	initIfRequested()
}

func main() {
	if code, ok := shimIfRequested(); ok {
		os.Exit(code)
	}
	if code, ok := probeIfRequested(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args))
}

func run(args []string) int {
	status := 0
	app := newApp(&status)
	if err := app.Run(args); err != nil {
		reportError(err)
		return runtime.ExitCode(err)
	}
	return status
}

func newApp(status *int) *cli.App {
	cli.VersionPrinter = func(c *cli.Context) {
		w := c.App.Writer
		fmt.Fprintln(w, "vetto-runtime version", c.App.Version)
		if gitCommit != "" {
			fmt.Fprintln(w, "commit:", gitCommit)
		} else {
			fmt.Fprintln(w, "commit: unknown")
		}
		fmt.Fprintln(w, "spec:", specs.Version)
	}
	app := &cli.App{
		Name:                 "vetto-runtime",
		Usage:                "fail-closed OCI container runtime",
		Description:          description,
		Version:              version,
		EnableBashCompletion: true,
		// Errors go through reportError and the exit-code table, once.
		ExitErrHandler: func(*cli.Context, error) {},
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "debug", Usage: "enable debug logging"},
			&cli.StringFlag{Name: "log", Usage: "set the log file to write logs to (default is '/dev/stderr')"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "set the log format ('text' (default), or 'json')"},
			&cli.StringFlag{Name: "root", Value: defaultRoot(), Usage: "root directory for storage of container state (this should be located in tmpfs)"},
			&cli.StringFlag{Name: "config", Value: runtime.DefaultConfigPath, Usage: "operator floor file (TOML): minimum level and forbidden requests; a missing default file means no floor"},
			&cli.StringFlag{Name: "audit-log", Usage: "also append every audit event (transitions, verdicts, launches, refusals, receipts) to this JSONL file, besides the host-wide log ([audit] dir)"},
			&cli.BoolFlag{Name: "systemd-cgroup", Usage: "enable systemd cgroup support, expects cgroupsPath to be of form \"slice:prefix:name\" for e.g. \"system.slice:vetto:434234\"; fails if systemd is not running"},
		}, globalSecurityFlags()...),
		Before:       configureLogging,
		OnUsageError: usageError(""),
		Commands: []*cli.Command{
			createCommand(),
			startCommand(),
			runCommand(status),
			stateCommand(),
			killCommand(),
			deleteCommand(),
			listCommand(),
			specCommand(),
			featuresCommand(),
			execCommand(status),
			psCommand(),
			eventsCommand(),
			pauseCommand(),
			resumeCommand(),
			updateCommand(),
			refusedCommand("checkpoint", "checkpoint a running container", "CRIU checkpoint/restore is not implemented; a restored process would bypass the launch-time verification"),
			refusedCommand("restore", "restore a container from a previous checkpoint", "CRIU checkpoint/restore is not implemented; a restored process would bypass the launch-time verification"),
			doctorCommand(),
			verifyCommand(),
			monitorCommand(),
			reportCommand(),
			hookCommand(),
			policyCommand(),
			completionCommand(),
		},
	}
	withUsageErrors(app.Commands, "")
	return app
}

// defaultRoot is --root's default, as runtime.DefaultRoot decides it per
// platform ("" where this caller has none: newRuntime says why).
func defaultRoot() string { root, _ := runtime.DefaultRoot(); return root }

func configureLogging(c *cli.Context) error {
	if c.Bool("debug") {
		logrus.SetLevel(logrus.DebugLevel)
	}
	switch f := c.String("log-format"); f {
	case "", "text":
	case "json":
		logrus.SetFormatter(new(logrus.JSONFormatter))
	default:
		return runtime.Errorf(runtime.ErrInvalidInput, "invalid --log-format %q: want text or json", f)
	}
	if path := c.String("log"); path != "" {
		// Never through a symlink planted at the log's name (a root
		// runtime would append to whatever it points at); /dev/stderr
		// and /proc/self/fd/N are links by design.
		flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND | os.O_SYNC
		if !strings.HasPrefix(path, "/dev/") && !strings.HasPrefix(path, "/proc/self/fd/") {
			flags |= oNoFollow
		}
		f, err := os.OpenFile(path, flags, 0o644)
		if isSymlinkRefused(err) {
			return runtime.Errorf(runtime.ErrInvalidInput, "--log %s is a symbolic link; vetto-runtime does not follow one there: name the file itself", path)
		}
		if err != nil {
			return fmt.Errorf("open log file: %w", err)
		}
		logrus.SetOutput(f)
	}
	return nil
}

// reportError writes the one error line: to the log (which podman and
// containerd read as a single JSON object with --log-format json) and, if
// the log is a file, to stderr too for a human at a terminal.
func reportError(err error) {
	logrus.Error(err)
	if !logToStderr() {
		fmt.Fprintln(os.Stderr, "vetto-runtime:", err)
	}
}

func logToStderr() bool {
	f, ok := logrus.StandardLogger().Out.(*os.File)
	return ok && f.Fd() == os.Stderr.Fd()
}

// newRuntime builds the core from the global flags.
func newRuntime(c *cli.Context) (*runtime.Runtime, error) {
	root := c.String("root")
	if _, err := runtime.DefaultRoot(); err != nil && !c.IsSet("root") {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil || root == "" {
		return nil, runtime.Errorf(runtime.ErrInvalidInput, "--root %q", root)
	}
	if abs == "/" {
		return nil, runtime.Errorf(runtime.ErrInvalidInput, "--root must not be /")
	}
	if err := runtime.CheckStateRoot(abs); err != nil {
		return nil, err
	}
	r, err := runtime.New(abs, newBackend(), hostFacts(), logrus.Warnf)
	if err != nil {
		return nil, err
	}
	if r.Config, err = runtime.LoadConfig(c.String("config"), c.IsSet("config")); err != nil {
		return nil, err
	}
	r.Store.Evidence = r.Config.Evidence()
	r.Environ = os.Environ()
	if p := c.String("audit-log"); p != "" {
		if r.Store.AuditLog, err = filepath.Abs(p); err != nil {
			return nil, err
		}
	}
	r.Launchf = launchf
	if self, err := os.Executable(); err == nil {
		r.Self = self
		if monitorSupported && !monitorFaultOff() {
			r.SpawnMonitor = spawnMonitor(c, self, abs)
		}
	}
	return r, nil
}

// usageError makes a bad flag one line of error (exit 1) naming where
// help is, instead of urfave/cli's "Incorrect Usage" and the whole help.
func usageError(command string) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		help := "vetto-runtime --help"
		if command != "" {
			help = "vetto-runtime " + command + " --help"
		}
		return runtime.Errorf(runtime.ErrInvalidInput, "%v (see %s)", err, help)
	}
}

// withUsageErrors gives every command (and subcommand) usageError.
func withUsageErrors(cmds []*cli.Command, prefix string) {
	for _, c := range cmds {
		name := strings.TrimSpace(prefix + " " + c.Name)
		if c.OnUsageError == nil {
			c.OnUsageError = usageError(name)
		}
		withUsageErrors(c.Subcommands, name)
	}
}

// launchf prints the launch line: to stderr for a person, or into --log
// when a supervisor set one (then stderr may be the container's own
// stream, which must not carry our lines).
func launchf(format string, args ...any) {
	if logToStderr() {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return
	}
	logrus.Infof(format, args...)
}

// withRuntime is the shape of every command that acts on containers: check
// the number of positional arguments, build the core from the global
// flags, then act.
func withRuntime(min, max int, act func(*cli.Context, *runtime.Runtime) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if err := args(c, min, max); err != nil {
			return err
		}
		r, err := newRuntime(c)
		if err != nil {
			return err
		}
		return act(c, r)
	}
}

// args checks the number of positional arguments the way runc does.
func args(c *cli.Context, min, max int) error {
	n := c.NArg()
	if n < min || n > max {
		var want string
		switch {
		case min == max:
			want = fmt.Sprintf("exactly %d", min)
		case n < min:
			want = fmt.Sprintf("a minimum of %d", min)
		default:
			want = fmt.Sprintf("a maximum of %d", max)
		}
		_ = cli.ShowCommandHelp(c, c.Command.Name)
		return runtime.Errorf(runtime.ErrInvalidInput, "%q requires %s argument(s)", c.Command.Name, want)
	}
	return nil
}
