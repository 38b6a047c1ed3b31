package hooks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/shim"
)

// LandlockLaunch is what the pre-launch verification knows of a process
// that is to be restricted by the pre-exec step.
type LandlockLaunch struct {
	// Ruleset is what the plan decided the step enforces.
	Ruleset string
	// ABI is the host's Landlock ABI, probed again at verification;
	// ABIErr when that failed.
	ABI    int
	ABIErr error
	// Known: the backend reports what it handed the init (it created the
	// container in this process). Then PreExec is the pre-exec step's
	// config it handed it (nil: none), and Args the argv the init will
	// exec.
	Known   bool
	PreExec *shim.Config
	Args    []string
}

// CheckLandlock judges what can be known of the Landlock restriction
// before the process runs: the init will restrict itself with the plan's
// ruleset in its pre-exec step and then exec the spec's own args
// (landlock/shim), and the host's ABI, probed afresh, enforces every right
// that ruleset handles (landlock/abi). That the process is then inside the
// domain is judged by the canaries it runs there and after it exec'd
// (CheckPastShim).
func CheckLandlock(in *LandlockLaunch, specArgs []string) []Result {
	step := Result{Check: "landlock/shim", Expected: "the init's pre-exec step restricts it with the plan's ruleset, then it execs " + strings.Join(specArgs, " ")}
	switch {
	case !in.Known:
		step.Verdict, step.Found = Unavailable, "the backend does not report what it handed the init"
	case in.PreExec == nil || in.PreExec.Ruleset == "":
		step.Verdict, step.Found = Fail, "the init runs the process without the Landlock restriction"
	case in.PreExec.Ruleset != in.Ruleset:
		step.Verdict, step.Found = Fail, "the init gets another ruleset: "+in.PreExec.Ruleset
	case !slices.Equal(in.Args, specArgs):
		step.Verdict, step.Found = Fail, fmt.Sprintf("the init execs %q", in.Args)
	default:
		step.Verdict, step.Found = Pass, "pre-exec step and argv as expected"
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
	return []Result{step, abi}
}

// CheckPastShim judges, after start, that the process is past the shim:
// the file it runs (/proc/<pid>/exe, read from the host) is no longer the
// sealed init executable the init and the shim ran. A process that is already
// gone cannot be judged, nor harm anything: UNAVAILABLE.
func CheckPastShim(shimExe, nowExe [2]uint64, nowErr error) Result {
	r := Result{Check: "landlock/past-shim", Expected: fmt.Sprintf("/proc/<pid>/exe not the init's sealed executable %d:%d", shimExe[0], shimExe[1])}
	switch {
	case nowErr != nil:
		r.Verdict, r.Found = Unavailable, "process gone: "+nowErr.Error()
	case nowExe == shimExe:
		r.Verdict, r.Found = Fail, "still the init's sealed executable"
	default:
		r.Verdict, r.Found = Pass, fmt.Sprintf("%d:%d", nowExe[0], nowExe[1])
	}
	return r
}
