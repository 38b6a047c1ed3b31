package hooks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vetto-dev/vetto-runtime/landlock"
)

// LandlockLaunch is what the pre-launch verification knows of a process
// that is to exec through the Landlock shim.
type LandlockLaunch struct {
	// Ruleset is what the plan decided the shim enforces.
	Ruleset string
	// ABI is the host's Landlock ABI, probed again at verification;
	// ABIErr when that failed.
	ABI    int
	ABIErr error
	// LaunchArgs is the argv the backend handed the init to exec; nil
	// when the backend cannot say.
	LaunchArgs []string
}

// CheckLandlock judges what can be known of the Landlock shim before the
// process runs: the init will exec the shim with the plan's ruleset and
// the spec's own args (landlock/shim), and the host's ABI, probed afresh,
// enforces every right that ruleset handles (landlock/abi). That the
// process is then inside the domain is judged after it exec'd
// (CheckPastShim).
func CheckLandlock(in *LandlockLaunch, specArgs []string) []Result {
	shim := Result{Check: "landlock/shim", Expected: landlock.ShimExe + " " + landlock.ShimCommand + " with the plan's ruleset, then " + strings.Join(specArgs, " ")}
	switch ruleset, args, err := landlock.ParseShimArgs(in.LaunchArgs); {
	case in.LaunchArgs == nil:
		shim.Verdict, shim.Found = Unavailable, "the backend does not report the init's argv"
	case err != nil:
		shim.Verdict, shim.Found = Fail, fmt.Sprintf("argv %q", in.LaunchArgs)
	case ruleset != in.Ruleset:
		shim.Verdict, shim.Found = Fail, "the shim gets another ruleset: "+ruleset
	case !slices.Equal(args, specArgs):
		shim.Verdict, shim.Found = Fail, "the shim execs "+strings.Join(args, " ")
	default:
		shim.Verdict, shim.Found = Pass, "argv as expected"
	}

	abi := Result{Check: "landlock/abi", Expected: "the host's ABI enforces every handled right"}
	rs, err := landlock.Parse(in.Ruleset)
	switch {
	case err != nil:
		abi.Verdict, abi.Found = Fail, err.Error()
	case in.ABIErr != nil:
		abi.Verdict, abi.Found = Unavailable, in.ABIErr.Error()
	default:
		if missing := rs.Unsupported(in.ABI); len(missing) > 0 {
			abi.Verdict, abi.Found = Fail, fmt.Sprintf("ABI %d lacks %s", in.ABI, landlock.Describe(missing))
		} else {
			abi.Verdict, abi.Found = Pass, fmt.Sprintf("ABI %d", in.ABI)
		}
	}
	return []Result{shim, abi}
}

// CheckPastShim judges, after start, that the process is past the shim:
// the file it runs (/proc/<pid>/exe, read from the host) is no longer the
// runtime's clone the init and the shim ran. A process that is already
// gone cannot be judged, nor harm anything: UNAVAILABLE.
func CheckPastShim(shimExe, nowExe [2]uint64, nowErr error) Result {
	r := Result{Check: "landlock/past-shim", Expected: fmt.Sprintf("/proc/<pid>/exe not the runtime's clone %d:%d", shimExe[0], shimExe[1])}
	switch {
	case nowErr != nil:
		r.Verdict, r.Found = Unavailable, "process gone: "+nowErr.Error()
	case nowExe == shimExe:
		r.Verdict, r.Found = Fail, "still the runtime's clone"
	default:
		r.Verdict, r.Found = Pass, fmt.Sprintf("%d:%d", nowExe[0], nowExe[1])
	}
	return r
}
