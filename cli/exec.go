package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

func (h *host) execCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "exec",
		Usage:     "execute new process inside the container",
		ArgsUsage: "<container-id> <command> [command options]  ||  -p process.json <container-id>",
		Description: `The exec command runs a new process in a running container: it joins the
container's namespaces and cgroup and gets its seccomp filter. The process never
gets more than the container's own: capabilities outside the container's
bounding set, or dropping no_new_privs, are refused. In the foreground it
forwards stdio and signals and exits with the process's status.`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "console-socket", Usage: "path to an AF_UNIX socket which will receive a file descriptor referencing the master end of the console's pseudoterminal"},
			&ucli.StringFlag{Name: "pidfd-socket", Usage: "path to an AF_UNIX socket which will receive a file descriptor referencing the exec process"},
			&ucli.StringFlag{Name: "cwd", Usage: "current working directory in the container"},
			&ucli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "set environment variables"},
			&ucli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "allocate a pseudo-TTY"},
			&ucli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "UID (format: <uid>[:<gid>])"},
			&ucli.Int64SliceFlag{Name: "additional-gids", Aliases: []string{"g"}, Usage: "additional gids"},
			&ucli.StringFlag{Name: "process", Aliases: []string{"p"}, Usage: "path to the process.json"},
			&ucli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "detach from the container's process"},
			&ucli.StringFlag{Name: "pid-file", Usage: "specify the file to write the process id to"},
			&ucli.StringFlag{Name: "process-label", Usage: "set the asm process label for the process commonly used with selinux"},
			&ucli.StringFlag{Name: "apparmor", Usage: "set the apparmor profile for the process"},
			&ucli.BoolFlag{Name: "no-new-privs", Usage: "set the no new privileges value for the process"},
			&ucli.StringSliceFlag{Name: "cap", Aliases: []string{"c"}, Usage: "add a capability to the bounding set for the process (only one the container has)"},
			&ucli.IntFlag{Name: "preserve-fds", Usage: "Pass N additional file descriptors to the container (stdio + $LISTEN_FDS + N in total)"},
			&ucli.BoolFlag{Name: "ignore-paused", Usage: "allow exec in a paused container"},
			&ucli.StringSliceFlag{Name: "cgroup", Usage: "run the process in an (existing) sub-cgroup(s) of the container's. Format is [<controller>:]<cgroup>."},
		},
		Action: func(c *ucli.Context) error {
			min := 2
			if c.String("process") != "" {
				min = 1
			}
			if err := args(c, min, 1<<20); err != nil {
				return err
			}
			r, err := h.newRuntime(c)
			if err != nil {
				return err
			}
			code, err := r.Exec(runtime.ExecOptions{
				ID:             c.Args().First(),
				ProcessFile:    c.String("process"),
				Args:           c.Args().Slice()[1:],
				Cwd:            c.String("cwd"),
				Env:            c.StringSlice("env"),
				TTY:            c.Bool("tty"),
				User:           c.String("user"),
				AdditionalGids: c.Int64Slice("additional-gids"),
				NoNewPrivs:     c.Bool("no-new-privs"),
				Caps:           c.StringSlice("cap"),
				ProcessLabel:   c.String("process-label"),
				Apparmor:       c.String("apparmor"),
				ConsoleSocket:  c.String("console-socket"),
				PidfdSocket:    c.String("pidfd-socket"),
				Cgroups:        c.StringSlice("cgroup"),
				PidFile:        c.String("pid-file"),
				Detach:         c.Bool("detach"),
				PreserveFDs:    c.Int("preserve-fds"),
				IgnorePaused:   c.Bool("ignore-paused"),
			})
			if err != nil {
				return err
			}
			return exitWith(code)
		},
	}
}
