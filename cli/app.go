// Package cli is vetto-runtime's command line: every command and flag
// (urfave/cli), their parsing, and what the commands print. It wires the
// flags to the core (runtime/) and to the backend platform/ picks, and maps
// the error that comes back to an exit code; main exits with it. Nothing
// but main imports it.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/platform"
	"github.com/vetto-dev/vetto-runtime/report"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

const description = `vetto-runtime runs OCI bundles like runc, and refuses to launch a container
whose requested boundaries it cannot establish. It is a drop-in for runc:
containerd (ctr run --runc-binary, RuntimeClass), podman --runtime, or
directly:

    # vetto-runtime run [-b bundle] <container-id>`

// host is what the commands take from the platform this binary is built
// for: NewApp fills it from platform/, this package's tests with a fake
// backend, so that every command can be driven without a kernel.
type host struct {
	version, commit string
	// backend is the platform's runtime.Backend, made afresh per call as
	// the commands always did.
	backend func() runtime.Backend
	// facts reads the host facts verification judges (nil where the
	// backend reads its own).
	facts func() hooks.Facts
	// monitor says whether the runtime starts a per-container monitor:
	// the platform has one, and the fault-injection build was not told
	// to leave it out.
	monitor func() bool
}

// NewApp is vetto-runtime's command line on this platform's backend.
// version and commit are what --version prints (and the linux backend
// records).
func NewApp(version, commit string) *ucli.App {
	return newApp(&host{
		version: version,
		commit:  commit,
		backend: func() runtime.Backend { return platform.NewBackend(version, commit) },
		facts:   platform.HostFacts,
		monitor: func() bool { return platform.MonitorSupported && !platform.MonitorFaultOff() },
	})
}

// Run runs app with args (os.Args) and returns the exit status: the
// container's process's own for a foreground run or exec, otherwise the
// error's kind through runtime.ExitCode (the one exit-code table), after
// reporting the error once.
func Run(app *ucli.App, args []string) int {
	err := app.Run(args)
	var exited processExited
	if errors.As(err, &exited) {
		return exited.status
	}
	if err != nil {
		reportError(app.ErrWriter, err)
		return runtime.ExitCode(err)
	}
	return runtime.ExitOK
}

// processExited carries the exit status of the container's process (run
// and exec in the foreground) out of the app, to be the runtime's own;
// it is not an error of vetto-runtime's and is never reported.
type processExited struct{ status int }

func (e processExited) Error() string {
	return fmt.Sprintf("the container's process exited with status %d", e.status)
}

// exitWith is what run and exec return for the process's status: nil for
// 0, so that success stays success everywhere.
func exitWith(status int) error {
	if status == 0 {
		return nil
	}
	return processExited{status}
}

func newApp(h *host) *ucli.App {
	ucli.VersionPrinter = func(c *ucli.Context) {
		w := c.App.Writer
		fmt.Fprintln(w, "vetto-runtime version", c.App.Version)
		if h.commit != "" {
			fmt.Fprintln(w, "commit:", h.commit)
		} else {
			fmt.Fprintln(w, "commit: unknown")
		}
		fmt.Fprintln(w, "spec:", specs.Version)
	}
	app := &ucli.App{
		Name:                 "vetto-runtime",
		Usage:                "fail-closed OCI container runtime",
		Description:          description,
		Version:              h.version,
		EnableBashCompletion: true,
		// runc's (urfave/cli v1's) slice flags take a value as it is: exec -e
		// NO_PROXY=a,b is one variable. --allow-degraded splits its own.
		DisableSliceFlagSeparator: true,
		// Errors go through reportError and the exit-code table, once.
		ExitErrHandler: func(*ucli.Context, error) {},
		Flags: append([]ucli.Flag{
			&ucli.BoolFlag{Name: "debug", Usage: "enable debug logging"},
			&ucli.StringFlag{Name: "log", Usage: "set the log file to write logs to (default is '/dev/stderr')"},
			&ucli.StringFlag{Name: "log-format", Value: "text", Usage: "set the log format ('text' (default), or 'json')"},
			&ucli.StringFlag{Name: "root", Value: defaultRoot(), Usage: "root directory for storage of container state (this should be located in tmpfs)"},
			&ucli.StringFlag{Name: "config", Value: runtime.DefaultConfigPath, Usage: "operator floor file (TOML): minimum level and forbidden requests; a missing default file means no floor"},
			&ucli.StringFlag{Name: "audit-log", Usage: "also append every audit event (transitions, verdicts, launches, refusals, receipts) to this JSONL file, besides the host-wide log ([audit] dir)"},
			&ucli.BoolFlag{Name: "systemd-cgroup", Usage: "enable systemd cgroup support, expects cgroupsPath to be of form \"slice:prefix:name\" for e.g. \"system.slice:vetto:434234\"; fails if systemd is not running"},
			// runc's other two global flags, which clients may pass
			// (go-runc's Criu and Rootless options).
			&ucli.StringFlag{Name: "criu", Value: "criu", Usage: "accepted as runc's (the criu binary); checkpoint and restore are refused, so it is never run"},
			&ucli.StringFlag{Name: "rootless", Value: "auto", Usage: "accepted as runc's ('auto', 'true' or 'false'); vetto-runtime always decides as 'auto' does, and never ignores a cgroup it cannot set up: the launch is refused unless the caller accepts the degradation (docs/rootless.md)"},
		}, globalSecurityFlags()...),
		Before:       configureLogging,
		OnUsageError: usageError(""),
		Commands: []*ucli.Command{
			h.createCommand(),
			h.startCommand(),
			h.runCommand(),
			h.stateCommand(),
			h.killCommand(),
			h.deleteCommand(),
			h.listCommand(),
			h.specCommand(),
			h.featuresCommand(),
			h.execCommand(),
			h.psCommand(),
			h.eventsCommand(),
			h.pauseCommand(),
			h.resumeCommand(),
			h.updateCommand(),
			refusedCommand("checkpoint", "checkpoint a running container", "CRIU checkpoint/restore is not implemented; a restored process would bypass the launch-time verification"),
			refusedCommand("restore", "restore a container from a previous checkpoint", "CRIU checkpoint/restore is not implemented; a restored process would bypass the launch-time verification"),
			h.doctorCommand(),
			h.verifyCommand(),
			h.monitorCommand(),
			reportCommand(),
			h.hookCommand(),
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

func configureLogging(c *ucli.Context) error {
	if c.Bool("debug") {
		logrus.SetLevel(logrus.DebugLevel)
	}
	switch r := c.String("rootless"); r {
	case "auto", "true", "false":
	default:
		return runtime.Errorf(runtime.ErrInvalidInput, "invalid --rootless %q: want auto, true or false", r)
	}
	switch f := c.String("log-format"); f {
	case "", "text":
		logrus.SetFormatter(printableFormatter{new(logrus.TextFormatter)})
	case "json":
		logrus.SetFormatter(printableFormatter{new(logrus.JSONFormatter)})
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
// stderr is the app's ErrWriter: os.Stderr but in this package's tests.
func reportError(stderr io.Writer, err error) {
	logrus.Error(err)
	if !logToStderr() {
		fmt.Fprintln(stderr, "vetto-runtime:", report.PrintableLines(err.Error()))
	}
}

func logToStderr() bool {
	f, ok := logrus.StandardLogger().Out.(*os.File)
	return ok && f.Fd() == os.Stderr.Fd()
}

// newRuntime builds the core from the global flags.
func (h *host) newRuntime(c *ucli.Context) (*runtime.Runtime, error) {
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
	r, err := runtime.New(abs, h.backend(), h.facts(), logrus.Warnf)
	if err != nil {
		return nil, err
	}
	if r.Config, err = runtime.LoadConfig(c.String("config"), c.IsSet("config")); err != nil {
		return nil, err
	}
	if r.ConfigPath, err = filepath.Abs(c.String("config")); err != nil {
		return nil, err
	}
	r.Store.Evidence = r.Config.Evidence()
	if p := c.String("log"); p != "" && !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/proc/self/fd/") {
		if r.LogPath, err = filepath.Abs(p); err != nil {
			return nil, err
		}
	}
	r.Environ = os.Environ()
	if p := c.String("audit-log"); p != "" {
		if r.Store.AuditLog, err = filepath.Abs(p); err != nil {
			return nil, err
		}
		// Refused before anything is built: a create that could not write
		// its evidence would build the container only to tear it down.
		if err := runtime.CheckAuditLog(r.Store.AuditLog); err != nil {
			return nil, err
		}
	}
	r.Launchf = launchf
	if self, err := os.Executable(); err == nil {
		r.Self = self
		if h.monitor() {
			r.SpawnMonitor = spawnMonitor(c, self, abs)
		}
	}
	r.Invoked = invokedPath(os.Args[0])
	return r, nil
}

// invokedPath is the absolute path argv0 ran this program by: as given
// when it has a slash, else found in PATH as the caller's shell found it;
// "" if neither.
func invokedPath(argv0 string) string {
	if !strings.Contains(argv0, "/") {
		p, err := exec.LookPath(argv0)
		if err != nil {
			return ""
		}
		argv0 = p
	}
	abs, err := filepath.Abs(argv0)
	if err != nil {
		return ""
	}
	return abs
}

// usageError makes a bad flag one line of error (exit 1) naming where
// help is, instead of urfave/cli's "Incorrect Usage" and the whole help.
func usageError(command string) ucli.OnUsageErrorFunc {
	return func(_ *ucli.Context, err error, _ bool) error {
		help := "vetto-runtime --help"
		if command != "" {
			help = "vetto-runtime " + command + " --help"
		}
		return runtime.Errorf(runtime.ErrInvalidInput, "%v (see %s)", err, help)
	}
}

// withUsageErrors gives every command (and subcommand) usageError.
func withUsageErrors(cmds []*ucli.Command, prefix string) {
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
	line := report.Printable(fmt.Sprintf(format, args...))
	if logToStderr() {
		fmt.Fprintln(os.Stderr, line)
		return
	}
	logrus.Info(line)
}

// withRuntime is the shape of every command that acts on containers: check
// the number of positional arguments, build the core from the global
// flags, then act.
func (h *host) withRuntime(min, max int, act func(*ucli.Context, *runtime.Runtime) error) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if err := args(c, min, max); err != nil {
			return err
		}
		r, err := h.newRuntime(c)
		if err != nil {
			return err
		}
		return act(c, r)
	}
}

// args checks the number of positional arguments the way runc does.
func args(c *ucli.Context, min, max int) error {
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
		_ = ucli.ShowCommandHelp(c, c.Command.Name)
		// Flags are read only before the arguments (as runc reads them):
		// one written after reads as an argument, and the count alone
		// would not tell the caller why.
		if n > max {
			for _, a := range c.Args().Slice()[min:] {
				if strings.HasPrefix(a, "-") && a != "-" && a != "--" {
					return runtime.Errorf(runtime.ErrInvalidInput, "%q requires %s argument(s): %s after them reads as one; put flags before the arguments", c.Command.Name, want, a)
				}
			}
		}
		return runtime.Errorf(runtime.ErrInvalidInput, "%q requires %s argument(s)", c.Command.Name, want)
	}
	return nil
}

// printableFormatter escapes what a terminal would act on in every log
// message (report.Printable) before the inner formatter writes it. A
// refusal or warning quotes the bundle's and the workload's text (a mount
// destination, a planted file's name), and logrus's text formatter
// writes the message raw when stderr is a terminal; the JSON one leaves
// C1 controls and bidirectional overrides as they are.
type printableFormatter struct{ inner logrus.Formatter }

func (f printableFormatter) Format(e *logrus.Entry) ([]byte, error) {
	e.Message = report.PrintableLines(e.Message)
	return f.inner.Format(e)
}
