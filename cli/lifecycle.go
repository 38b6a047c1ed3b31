package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/report"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// createFlags are create's flags; run takes them too.
func createFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "path to the root of the bundle directory, defaults to the current directory"},
		&ucli.StringFlag{Name: "console-socket", Usage: "path to an AF_UNIX socket which will receive a file descriptor referencing the master end of the console's pseudoterminal"},
		&ucli.StringFlag{Name: "pidfd-socket", Usage: "path to an AF_UNIX socket which will receive a file descriptor referencing the init process"},
		&ucli.StringFlag{Name: "pid-file", Usage: "specify the file to write the process id to"},
		&ucli.BoolFlag{Name: "no-pivot", Usage: "do not use pivot root to jail process inside rootfs. This should be used whenever the rootfs is on top of a ramdisk"},
		&ucli.BoolFlag{Name: "no-new-keyring", Usage: "do not create a new session keyring for the container. This will cause the container to inherit the calling processes session key"},
		&ucli.IntFlag{Name: "preserve-fds", Usage: "Pass N additional file descriptors to the container (stdio + $LISTEN_FDS + N in total)"},
		&ucli.StringFlag{Name: "security-level", Usage: "strict, standard or degraded (default standard; the bundle's dev.vetto.level annotation may raise it)"},
		&ucli.StringSliceFlag{Name: "allow-degraded", Usage: "at level standard, accept these missing features, named and recorded (landlock, network, limits, cgroup-kill)"},
		&ucli.BoolFlag{Name: "dry-run", Usage: "compile and check everything, print the plan marked NOT ENFORCED, create nothing"},
		&ucli.BoolFlag{Name: "no-verify", Usage: "skip post-launch verification, to measure what it costs; refused at strict, recorded as degraded otherwise"},
	}
}

// globalSecurityFlags are --security-level and --allow-degraded before the
// command, for clients that pass only global flags to a runtime (podman's
// --runtime-flag, a containerd runtime's options); the command's own take
// precedence, and the two lists of accepted degradations add up.
func globalSecurityFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "security-level", Usage: "as create's and run's --security-level, for clients that pass only global flags (podman --runtime-flag)"},
		&ucli.StringSliceFlag{Name: "allow-degraded", Usage: "as create's and run's --allow-degraded, for clients that pass only global flags (podman --runtime-flag allow-degraded=cgroup-kill,limits)"},
	}
}

func securityOptions(c *ucli.Context) (runtime.Security, error) {
	var sec runtime.Security
	level := ""
	var allow []string
	// The command's context first, then the app's: the nearest level set
	// wins, every --allow-degraded counts.
	for _, ctx := range c.Lineage() {
		if ctx == nil {
			continue
		}
		if level == "" && ctx.IsSet("security-level") {
			level = ctx.String("security-level")
		}
		if ctx.IsSet("allow-degraded") {
			allow = append(allow, ctx.StringSlice("allow-degraded")...)
		}
	}
	if level != "" {
		l, err := runtime.ParseLevel(level)
		if err != nil {
			return sec, err
		}
		sec.Level, sec.LevelSet = l, true
	}
	allowed, err := runtime.ParseFeatures(allow)
	if err != nil {
		return sec, err
	}
	sec.AllowDegraded = allowed
	sec.DryRun = c.Bool("dry-run")
	sec.NoVerify = c.Bool("no-verify")
	return sec, nil
}

func createOptions(c *ucli.Context) (runtime.CreateOptions, error) {
	sec, err := securityOptions(c)
	return runtime.CreateOptions{
		Security:      sec,
		ID:            c.Args().First(),
		Bundle:        c.String("bundle"),
		PidFile:       c.String("pid-file"),
		ConsoleSocket: c.String("console-socket"),
		PidfdSocket:   c.String("pidfd-socket"),
		PreserveFDs:   c.Int("preserve-fds"),
		ListenFDs:     socketActivation(),
		NoPivot:       c.Bool("no-pivot"),
		NoNewKeyring:  c.Bool("no-new-keyring"),
		SystemdCgroup: c.Bool("systemd-cgroup"),
	}, err
}

// dryRun prints the plan of a create or run; it creates nothing.
func dryRun(c *ucli.Context, r *runtime.Runtime, opts runtime.CreateOptions) error {
	line, err := r.DryRun(opts)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, report.Printable(line))
	return nil
}

func (h *host) createCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "create",
		Usage:     "create a container",
		ArgsUsage: "<container-id>",
		Description: `The create command creates an instance of a container for a bundle. The
bundle is a directory with a specification file named "config.json" and a root
filesystem. The container's init waits until "start" is called; before that,
vetto-runtime checks the live init from the host and destroys it on failure.

With NOTIFY_SOCKET set (a systemd Type=notify service), the container gets a
socket at /run/notify/notify.sock, read-only, and its NOTIFY_SOCKET names it;
the start (or run) passes READY=1 on to the caller's socket once the program
sends it, with the container's init as MAINPID, as runc does.`,
		Flags: createFlags(),
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			opts, err := createOptions(c)
			if err != nil {
				return err
			}
			if opts.Security.DryRun {
				return dryRun(c, r, opts)
			}
			return r.Create(opts)
		}),
	}
}

func (h *host) startCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "start",
		Usage:     "executes the user defined process in a created container",
		ArgsUsage: "<container-id>",
		Description: `The start command executes the user defined process in a created container, then runs its poststart hooks; a failing poststart hook stops the container.

With NOTIFY_SOCKET set, and the container created with it, start returns once
the program has sent READY=1 (passed on to NOTIFY_SOCKET with the init as
MAINPID) or has ended.`,
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			return r.Start(c.Args().First())
		}),
	}
}

func (h *host) runCommand() *ucli.Command {
	flags := append(createFlags(),
		&ucli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "detach from the container's process"},
		&ucli.BoolFlag{Name: "keep", Usage: "do not delete the container after it exits"},
		&ucli.BoolFlag{Name: "no-subreaper", Usage: "disable the use of the subreaper used to reap reparented processes"},
	)
	return &ucli.Command{
		Name:      "run",
		Usage:     "create and run a container",
		ArgsUsage: "<container-id>",
		Description: `The run command creates and starts a container. In the foreground it forwards
signals and stdio until the container's process exits, deletes the container
(unless --keep) and exits with the process's exit status (128+N for a death by
signal N). With NOTIFY_SOCKET set, the program's READY=1 is passed on as
create's help says; a detached run returns once it has been, or the program
ended.`,
		Flags: flags,
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			opts, err := createOptions(c)
			if err != nil {
				return err
			}
			if opts.Security.DryRun {
				return dryRun(c, r, opts)
			}
			code, err := r.Run(runtime.RunOptions{
				CreateOptions: opts,
				Detach:        c.Bool("detach"),
				Keep:          c.Bool("keep"),
				NoSubreaper:   c.Bool("no-subreaper"),
			})
			if err != nil {
				return err
			}
			return exitWith(code)
		}),
	}
}

func (h *host) killCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "kill",
		Usage:     "kill sends the specified signal (default: SIGTERM) to the container's init process",
		ArgsUsage: "<container-id> [signal]",
		Description: `The kill command sends a signal, given by name (KILL, SIGKILL) or number, to
the container's init process; with --all, to every process in the container.`,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "send the specified signal to all processes inside the container"},
		},
		Action: h.withRuntime(1, 2, func(c *ucli.Context, r *runtime.Runtime) error {
			sig := c.Args().Get(1)
			if sig == "" {
				sig = "SIGTERM"
			}
			return r.Kill(c.Args().First(), sig, c.Bool("all"))
		}),
	}
}

func (h *host) deleteCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "delete",
		Usage:     "delete any resources held by the container often used with detached container",
		ArgsUsage: "<container-id>",
		Description: `The delete command removes a stopped (or created) container and everything it
holds, then runs its poststop hooks. With --force it kills a running one first.`,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "Forcibly deletes the container if it is still running (uses SIGKILL)"},
		},
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			return r.Delete(c.Args().First(), c.Bool("force"))
		}),
	}
}
