package cli

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

func (h *host) monitorCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "monitor",
		Usage:     "watch a running container and kill it when it stops holding (started by create)",
		ArgsUsage: "<container-id>",
		Description: `The monitor command is the per-container monitor: create launches it
detached, it waits for the start, and it lives exactly as long as the
container. It re-runs the checks of verify that can change after launch
(P1 identity, P2 namespaces and cgroups, P4 containment and every process's
restrictions, P6 masks, P7 limits) soon after start, then every interval
(runtime.toml [monitor] interval, default 5s), and at once when the
container's cgroups report an event or its mounts change. A FAIL kills the
container at standard and strict, as verify does, and is recorded at
degraded. delete stops it, and the teardown receipt says how many rounds it
ran and whether it killed. Running it by hand is harmless: it does what the
started one does.`,
		Flags: []ucli.Flag{
			// What create (or start, or run) passes to the monitor it
			// spawns; by hand it is not needed.
			&ucli.BoolFlag{Name: "spawned", Hidden: true, Usage: "watch only while the container's record names this process as its monitor"},
		},
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			if c.Bool("spawned") {
				closeInherited()
			}
			// A small, steady footprint: the monitor lives as long as
			// the container and does little.
			debug.SetMemoryLimit(monitorMemoryLimit)
			// SIGTERM from delete ends it between rounds: the teardown
			// holds the container's lock, so no round is running then.
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			done := make(chan error, 1)
			go func() { done <- r.Monitor(c.Args().First(), r.Config.MonitorInterval(), c.Bool("spawned")) }()
			select {
			case err := <-done:
				return err
			case <-sigs:
				return nil
			}
		}),
	}
}

// monitorMemoryLimit is the monitor's soft memory limit (the Go
// runtime's, debug.SetMemoryLimit). It counts everything the runtime
// maps, about 4 MiB for this binary before the monitor holds anything: at
// 4 MiB the collector ran back to back, some 50 cycles a round, and the
// monitor took 160 ms of CPU a minute for 2.9 MiB private (RssAnon); at 6
// MiB, 70 ms for 3.3 MiB; with no limit, 50 ms for 4.3 MiB (a minute each,
// four monitors side by side).
const monitorMemoryLimit = 6 << 20

// spawnMonitor starts `vetto-runtime monitor --spawned <id>` for the
// container being created (or started, if it has none): in a session of its own, with this process's
// global flags, its stdio /dev/null (what it has to say goes to --log and
// the audit log), not waited for. It returns the monitor's pid and start
// time, which the create writes into the record: --spawned makes that the
// monitor's licence to watch.
func spawnMonitor(c *ucli.Context, self, root string) func(id string) (int, uint64, error) {
	return func(id string) (int, uint64, error) {
		// Absolute: the monitor runs in /.
		args := []string{"--root", root}
		for _, flag := range []string{"config", "log", "log-format", "audit-log"} {
			if !c.IsSet(flag) {
				continue
			}
			v := c.String(flag)
			if flag != "log-format" {
				if abs, err := filepath.Abs(v); err == nil {
					v = abs
				}
			}
			args = append(args, "--"+flag, v)
		}
		if c.Bool("debug") {
			args = append(args, "--debug")
		}
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return 0, 0, err
		}
		defer null.Close()
		// It idles between rounds: one P and a tight GC keep what it
		// holds of memory to itself small (docs/performance.md).
		env := append(os.Environ(), "GOMAXPROCS=1", "GOGC=25")
		pid, err := spawnDetached(selfExe(self), append([]string{self}, append(args, "monitor", "--spawned", id)...), env, null)
		if err != nil {
			return 0, 0, fmt.Errorf("start the monitor: %w", err)
		}
		start, err := procStartTime(pid)
		if err != nil {
			return 0, 0, fmt.Errorf("the monitor (pid %d): %w", pid, err)
		}
		return pid, start, nil
	}
}

// procStartTime is field 22 of /proc/<pid>/stat.
func procStartTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("short stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}
