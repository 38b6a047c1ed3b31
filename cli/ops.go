package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"unicode"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/report"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

func (h *host) psCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "ps",
		Usage:     "ps displays the processes running inside a container",
		ArgsUsage: "<container-id> [ps options]",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "select one of: table or json"},
		},
		Action: func(c *ucli.Context) error {
			if err := args(c, 1, 1<<20); err != nil {
				return err
			}
			format := c.String("format")
			if format != "table" && format != "json" {
				return runtime.Errorf(runtime.ErrInvalidInput, "invalid format option %q: want table or json", format)
			}
			r, err := h.newRuntime(c)
			if err != nil {
				return err
			}
			pids, err := r.Processes(c.Args().First())
			if err != nil {
				return err
			}
			if format == "json" {
				if pids == nil {
					pids = []int{}
				}
				return json.NewEncoder(c.App.Writer).Encode(pids)
			}
			psArgs := c.Args().Slice()[1:]
			if len(psArgs) == 0 {
				psArgs = []string{"-ef"}
			}
			return psTable(c.App.Writer, pids, psArgs)
		},
	}
}

// psTable runs the host's ps and keeps the header and the container's lines.
func psTable(w io.Writer, pids []int, psArgs []string) error {
	out, err := exec.Command("ps", psArgs...).Output()
	if err != nil {
		// ps says what it did not like (an option it does not know) on
		// its stderr: that is the line the caller needs.
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if first, _, _ := strings.Cut(strings.TrimSpace(string(exit.Stderr)), "\n"); first != "" {
				return runtime.Errorf(runtime.ErrInvalidInput, "ps %s: %s", strings.Join(psArgs, " "), report.Printable(first))
			}
		}
		return fmt.Errorf("ps %s: %w", strings.Join(psArgs, " "), err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	pidCol := -1
	for i, f := range strings.Fields(lines[0]) {
		if f == "PID" {
			pidCol = i
		}
	}
	if pidCol < 0 {
		return runtime.Errorf(runtime.ErrInvalidInput, "ps %s: no PID column in its output", strings.Join(psArgs, " "))
	}
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	fmt.Fprintln(w, report.Printable(lines[0]))
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) <= pidCol {
			continue
		}
		if pid, err := strconv.Atoi(f[pidCol]); err == nil && in[pid] {
			fmt.Fprintln(w, report.Printable(line))
		}
	}
	return nil
}

func (h *host) eventsCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "events",
		Usage:     "display container events such as OOM notifications and cpu, memory, and IO usage statistics",
		ArgsUsage: "<container-id>",
		Flags: []ucli.Flag{
			&ucli.DurationFlag{Name: "interval", Value: 5e9, Usage: "set the stats collection interval"},
			&ucli.BoolFlag{Name: "stats", Usage: "display the container's stats then exit"},
		},
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			enc := json.NewEncoder(c.App.Writer)
			return r.Events(c.Args().First(), c.Duration("interval"), c.Bool("stats"), func(ev runtime.Event) error {
				return enc.Encode(ev)
			})
		}),
	}
}

func (h *host) pauseCommand() *ucli.Command {
	return &ucli.Command{
		Name: "pause", Usage: "pause suspends all processes inside the container", ArgsUsage: "<container-id>",
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			return r.Pause(c.Args().First())
		}),
	}
}

func (h *host) resumeCommand() *ucli.Command {
	return &ucli.Command{
		Name: "resume", Usage: "resumes all processes that have been previously paused", ArgsUsage: "<container-id>",
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			return r.Resume(c.Args().First())
		}),
	}
}

func (h *host) updateCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "update",
		Usage:     "update container resource constraints",
		ArgsUsage: "<container-id>",
		Description: `The update command changes the resource limits of a container. --resources
reads a JSON LinuxResources object from a file, or from stdin with "-"; the
individual flags override it. Memory values take k, m, g suffixes; -1 means
unlimited.`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: `path to a file containing the resources to update or "-" to read from the standard input`},
			&ucli.StringFlag{Name: "blkio-weight", Usage: "specifies per cgroup weight, range is from 10 to 1000"},
			&ucli.StringFlag{Name: "cpu-period", Usage: "CPU CFS period to be used for hardcapping (in usecs). 0 to use system default"},
			&ucli.StringFlag{Name: "cpu-quota", Usage: "CPU CFS hardcap limit (in usecs). Allowed cpu time in a given period"},
			&ucli.StringFlag{Name: "cpu-burst", Usage: "CPU CFS hardcap burst limit (in usecs)"},
			&ucli.StringFlag{Name: "cpu-share", Usage: "CPU shares (relative weight vs. other containers)"},
			&ucli.StringFlag{Name: "cpu-idle", Usage: "set cgroup SCHED_IDLE or not, 0: default behavior, 1: SCHED_IDLE"},
			&ucli.StringFlag{Name: "cpu-rt-period", Usage: "CPU realtime period to be used for hardcapping (in usecs)"},
			&ucli.StringFlag{Name: "cpu-rt-runtime", Usage: "CPU realtime hardcap limit (in usecs)"},
			&ucli.StringFlag{Name: "cpuset-cpus", Usage: "CPU(s) to use"},
			&ucli.StringFlag{Name: "cpuset-mems", Usage: "Memory node(s) to use"},
			&ucli.StringFlag{Name: "memory", Usage: "Memory limit (in bytes)"},
			&ucli.StringFlag{Name: "memory-reservation", Usage: "Memory reservation or soft_limit (in bytes)"},
			&ucli.StringFlag{Name: "memory-swap", Usage: "Total memory usage (memory + swap); set '-1' to enable unlimited swap"},
			&ucli.IntFlag{Name: "pids-limit", Usage: "Maximum number of pids allowed in the container"},
			&ucli.StringSliceFlag{Name: "allow-degraded", Usage: "accept removing a limit (-1) at level standard: limits"},
		},
		Action: func(c *ucli.Context) error {
			if err := args(c, 1, 1); err != nil {
				return err
			}
			res, err := updateResources(c)
			if err != nil {
				return err
			}
			r, err := h.newRuntime(c)
			if err != nil {
				return err
			}
			allow, err := runtime.ParseFeatures(c.StringSlice("allow-degraded"))
			if err != nil {
				return err
			}
			return r.Update(c.Args().First(), res, allow)
		},
	}
}

// updateResources reads --resources and applies the individual flags.
func updateResources(c *ucli.Context) (*specs.LinuxResources, error) {
	res := &specs.LinuxResources{}
	if path := c.String("resources"); path != "" {
		data, err := runtime.ReadInput(path, runtime.MaxResourcesFile)
		if err != nil {
			return nil, runtime.Errorf(runtime.ErrInvalidInput, "--resources: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(res); err != nil {
			return nil, runtime.Errorf(runtime.ErrInvalidInput, "--resources: invalid JSON: %w", err)
		}
	}
	cpu := func() *specs.LinuxCPU {
		if res.CPU == nil {
			res.CPU = &specs.LinuxCPU{}
		}
		return res.CPU
	}
	mem := func() *specs.LinuxMemory {
		if res.Memory == nil {
			res.Memory = &specs.LinuxMemory{}
		}
		return res.Memory
	}
	for _, f := range []struct {
		name string
		set  func(string) error
	}{
		{"blkio-weight", func(v string) error {
			n, err := strconv.ParseUint(v, 10, 16)
			if res.BlockIO == nil {
				res.BlockIO = &specs.LinuxBlockIO{}
			}
			w := uint16(n)
			res.BlockIO.Weight = &w
			return err
		}},
		{"cpu-period", func(v string) error { n, err := strconv.ParseUint(v, 10, 64); cpu().Period = &n; return err }},
		{"cpu-quota", func(v string) error { n, err := strconv.ParseInt(v, 10, 64); cpu().Quota = &n; return err }},
		{"cpu-burst", func(v string) error { n, err := strconv.ParseUint(v, 10, 64); cpu().Burst = &n; return err }},
		{"cpu-share", func(v string) error { n, err := strconv.ParseUint(v, 10, 64); cpu().Shares = &n; return err }},
		{"cpu-idle", func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil && n != 0 && n != 1 {
				err = errors.New("0 (the default) or 1 (SCHED_IDLE)")
			}
			cpu().Idle = &n
			return err
		}},
		{"cpu-rt-period", func(v string) error { n, err := strconv.ParseUint(v, 10, 64); cpu().RealtimePeriod = &n; return err }},
		{"cpu-rt-runtime", func(v string) error { n, err := strconv.ParseInt(v, 10, 64); cpu().RealtimeRuntime = &n; return err }},
		{"cpuset-cpus", func(v string) error { cpu().Cpus = v; return nil }},
		{"cpuset-mems", func(v string) error { cpu().Mems = v; return nil }},
		{"memory", func(v string) error { n, err := parseBytes(v); mem().Limit = &n; return err }},
		{"memory-reservation", func(v string) error { n, err := parseBytes(v); mem().Reservation = &n; return err }},
		{"memory-swap", func(v string) error { n, err := parseBytes(v); mem().Swap = &n; return err }},
	} {
		if v := c.String(f.name); c.IsSet(f.name) {
			if err := f.set(v); err != nil {
				return nil, runtime.Errorf(runtime.ErrInvalidInput, "--%s %q: %w", f.name, v, err)
			}
		}
	}
	if c.IsSet("pids-limit") {
		n := int64(c.Int("pids-limit"))
		res.Pids = &specs.LinuxPids{Limit: &n}
	}
	return res, nil
}

// parseBytes reads a size as runc does (go-units' RAMInBytes): "512",
// "256k", "64m", "1.5g", "2t", "4p" (binary multiples; an optional "i"
// and "b" after the unit, any case), or "-1". A size beyond int64 is an
// error, never a wrapped (negative: no-limit) value.
func parseBytes(s string) (int64, error) {
	if s == "-1" {
		return -1, nil
	}
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	mult := int64(1)
	if n := len(t); n > 0 && unicode.IsLetter(rune(t[n-1])) {
		switch t[n-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		case 'p':
			mult = 1 << 50
		default:
			return 0, fmt.Errorf("unknown unit %q", t[n-1:])
		}
		t = strings.TrimSpace(t[:n-1])
	}
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		if v < 0 {
			return 0, fmt.Errorf("not a size")
		}
		if v > math.MaxInt64/mult {
			return 0, fmt.Errorf("too large")
		}
		return v * mult, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(t, "eEx") {
		return 0, fmt.Errorf("not a size")
	}
	if f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("too large")
	}
	return int64(f * float64(mult)), nil
}

// refusedCommand is a runc command vetto-runtime does not implement; it
// says so instead of pretending.
func refusedCommand(name, usage, why string) *ucli.Command {
	return &ucli.Command{
		Name: name, Usage: usage + " (not supported by vetto-runtime)", SkipFlagParsing: true,
		Description: "Not supported: " + why + ". The command exists so that a client that calls it gets this reason, not an unknown command.",
		Action: func(c *ucli.Context) error {
			// --help is help, whatever else the command refuses.
			for _, a := range c.Args().Slice() {
				if a == "-h" || a == "--help" || a == "-help" {
					return ucli.ShowCommandHelp(c.Lineage()[1], name)
				}
			}
			return runtime.Errorf(runtime.ErrInvalidInput, "%s is not supported by vetto-runtime: %s", name, why)
		},
	}
}
