package hooks

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// LimitFacts reads a fact of a live process the spec sets directly
// and nothing else reads back: its resource limits. A platform without it
// has no such interface, and P7/rlimit is not judged there.
type LimitFacts interface {
	// Limits is /proc/<pid>/limits, by the kernel's name of each limit
	// ("Max open files"): soft and hard, math.MaxUint64 for unlimited.
	Limits(pid int) (map[string][2]uint64, error)
}

// rlimitNames are /proc/<pid>/limits' names of the spec's RLIMIT_*.
var rlimitNames = map[string]string{
	"RLIMIT_CPU": "Max cpu time", "RLIMIT_FSIZE": "Max file size",
	"RLIMIT_DATA": "Max data size", "RLIMIT_STACK": "Max stack size",
	"RLIMIT_CORE": "Max core file size", "RLIMIT_RSS": "Max resident set",
	"RLIMIT_NPROC": "Max processes", "RLIMIT_NOFILE": "Max open files",
	"RLIMIT_MEMLOCK": "Max locked memory", "RLIMIT_AS": "Max address space",
	"RLIMIT_LOCKS": "Max file locks", "RLIMIT_SIGPENDING": "Max pending signals",
	"RLIMIT_MSGQUEUE": "Max msgqueue size", "RLIMIT_NICE": "Max nice priority",
	"RLIMIT_RTPRIO": "Max realtime priority", "RLIMIT_RTTIME": "Max realtime timeout",
}

// CheckRlimits is P7/rlimit: each resource limit of the spec, read back
// from the live process. A hard limit above the spec's is a FAIL: the
// process holds more than it was given (a process can only lower its
// own hard limit, unless the spec grants it CAP_SYS_RESOURCE: then a
// higher one is PARTIAL). Below is the program's own choice and passes; the soft
// limit a process may raise to its hard one (Go programs do, for open
// files), so it is not judged.
func CheckRlimits(pid int, sp *specs.Spec, limits map[string][2]uint64, err error) []Result {
	if sp.Process == nil || len(sp.Process.Rlimits) == 0 {
		return nil
	}
	var out []Result
	for _, rl := range sp.Process.Rlimits {
		r := Result{Check: "P7/rlimit/" + strings.ToLower(strings.TrimPrefix(rl.Type, "RLIMIT_")), Evidence: HostFact,
			Expected: "hard at most " + limitString(rl.Hard)}
		got, ok := limits[rlimitNames[rl.Type]]
		switch {
		case err != nil:
			r.Verdict, r.Found = Unavailable, err.Error()
		case !ok:
			r.Verdict, r.Found = Unavailable, fmt.Sprintf("/proc/%d/limits has no %q", pid, rlimitNames[rl.Type])
		case got[1] > rl.Hard && mayRaiseLimits(sp):
			// Granted the capability, the program may raise its own.
			r.Verdict, r.Found = Partial, "hard "+limitString(got[1])+" (the spec grants CAP_SYS_RESOURCE)"
		case got[1] > rl.Hard:
			r.Verdict, r.Found = Fail, "hard "+limitString(got[1])
		default:
			r.Verdict, r.Found = Pass, "soft "+limitString(got[0])+", hard "+limitString(got[1])
		}
		out = append(out, r)
	}
	return out
}

func limitString(v uint64) string {
	if v == math.MaxUint64 {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// ParseLimits reads /proc/<pid>/limits: a header line, then one line per
// limit, the name in the first 26 columns, then soft, hard and units.
func ParseLimits(text string) (map[string][2]uint64, error) {
	out := map[string][2]uint64{}
	lines := strings.Split(text, "\n")
	for _, line := range lines[min(1, len(lines)):] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) < 26 {
			return nil, fmt.Errorf("limits line %q: too short", line)
		}
		name, f := strings.TrimSpace(line[:26]), strings.Fields(line[26:])
		if len(f) < 2 {
			return nil, fmt.Errorf("limits line %q: no soft and hard limit", line)
		}
		var v [2]uint64
		for i := range 2 {
			if f[i] == "unlimited" {
				v[i] = math.MaxUint64
				continue
			}
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("limits line %q: %w", line, err)
			}
			v[i] = n
		}
		out[name] = v
	}
	return out, nil
}

// mayRaiseLimits says the spec lets the process raise its hard limits.
func mayRaiseLimits(sp *specs.Spec) bool {
	c := sp.Process.Capabilities
	return c != nil && (slices.Contains(c.Permitted, "CAP_SYS_RESOURCE") || slices.Contains(c.Bounding, "CAP_SYS_RESOURCE"))
}
