package darwin

import (
	"fmt"
	"path"
	"strconv"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Query is one question the host asks the kernel about a live process's
// sandbox, sandbox_check(pid, Op, SANDBOX_FILTER_PATH, Path), and the
// answer the plan requires. The kernel answers from the profile it
// enforces, so a PASS here is a host fact about the live process, not
// about the text we handed to sandbox-exec.
type Query struct {
	Op      string `json:"op"`
	Path    string `json:"path,omitempty"` // "" asks with SANDBOX_FILTER_NONE
	Allowed bool   `json:"allowed"`
}

func (q Query) check() string {
	if q.Path == "" {
		return "seatbelt/" + q.Op
	}
	return "seatbelt/" + q.Op + " " + q.Path
}

// checkName is the file the queries ask to create under a root: it need
// not exist, sandbox_check judges the path.
const checkName = ".vetto-sandbox-check"

// Queries are what pre-launch verification asks of the live process:
// masked and hidden paths unreadable, every read root readable (the
// positive control: a profile that denied everything would pass the
// rest), read-only roots unwritable, write roots writable, the backend's
// own state directory unreadable, no network. Paths are the plan's; the
// launcher asks with the resolved ones.
func (p *Plan) Queries(stateDir string) []Query {
	var qs []Query
	for _, m := range p.Masked {
		qs = append(qs, Query{Op: "file-read-data", Path: m})
	}
	for _, h := range p.Hidden {
		qs = append(qs, Query{Op: "file-read-data", Path: h})
	}
	for _, r := range p.ReadRoots {
		qs = append(qs, Query{Op: "file-read-data", Path: r, Allowed: true},
			Query{Op: "file-write-create", Path: path.Join(r, checkName)})
	}
	for _, w := range p.WriteRoots {
		qs = append(qs, Query{Op: "file-write-create", Path: path.Join(w, checkName), Allowed: true})
	}
	if stateDir != "" {
		qs = append(qs, Query{Op: "file-read-data", Path: stateDir}, Query{Op: "file-write-create", Path: path.Join(stateDir, checkName)})
	}
	return append(qs, Query{Op: "network-outbound"}, Query{Op: "network-inbound"}, Query{Op: "mach-lookup"})
}

// Answer is the kernel's answer to one Query; Err says why it could not
// be asked (then the check is UNAVAILABLE, never PASS).
type Answer struct {
	Allowed bool   `json:"allowed"`
	Err     string `json:"err,omitempty"`
}

// Facts are what the host read of a live process.
type Facts struct {
	Pid int `json:"pid"`
	// Sandboxed: sandbox_check(pid, NULL, SANDBOX_FILTER_NONE) said the
	// process is sandboxed.
	Sandboxed    bool   `json:"sandboxed"`
	SandboxedErr string `json:"sandboxedErr,omitempty"`
	// Pgid is the process group (kern.proc.pid).
	Pgid    int    `json:"pgid"`
	PgidErr string `json:"pgidErr,omitempty"`
	// Start identifies the process with its pid (kern.proc.pid start
	// time, microseconds since the epoch): pids are reused.
	Start    int64  `json:"start"`
	StartErr string `json:"startErr,omitempty"`
	// Answers are sandbox_check's answers to the queries, in order.
	Answers []Answer `json:"answers"`
}

// Judge turns facts into verdicts (pure). want is the start time recorded
// at create, 0 at create itself. Every verdict is a host fact: the kernel's
// answers about the live process.
func Judge(qs []Query, f Facts, want int64) []hooks.Result {
	var out []hooks.Result
	add := func(r hooks.Result) {
		r.Evidence = hooks.HostFact
		if r.Verdict != hooks.Pass && r.Verdict != hooks.Fail {
			// A fact that could not be read is the verify degradation,
			// as on Linux: refused at strict and, unless accepted, at
			// standard; never a PASS. A FAIL is never degradable.
			r.Feature = string(runtime.FeatureVerify)
		}
		out = append(out, r)
	}

	id := hooks.Result{Check: "identity", Expected: "pid " + strconv.Itoa(f.Pid)}
	switch {
	case f.StartErr != "":
		id.Verdict, id.Found = hooks.Unavailable, f.StartErr
	case want != 0 && f.Start != want:
		id.Verdict, id.Found = hooks.Fail, fmt.Sprintf("pid %d started at %d, not %d (another process)", f.Pid, f.Start, want)
	default:
		id.Verdict, id.Found = hooks.Pass, fmt.Sprintf("pid %d started at %d", f.Pid, f.Start)
	}
	if want != 0 {
		id.Expected += fmt.Sprintf(" started at %d", want)
	}
	add(id)

	sb := hooks.Result{Check: "seatbelt/sandboxed", Expected: "sandbox_check(pid, NULL, NONE) = 1"}
	switch {
	case f.SandboxedErr != "":
		sb.Verdict, sb.Found = hooks.Unavailable, f.SandboxedErr
	case f.Sandboxed:
		sb.Verdict, sb.Found = hooks.Pass, "sandboxed"
	default:
		sb.Verdict, sb.Found = hooks.Fail, "not sandboxed"
	}
	add(sb)

	pg := hooks.Result{Check: "process-group", Expected: "own process group " + strconv.Itoa(f.Pid)}
	switch {
	case f.PgidErr != "":
		pg.Verdict, pg.Found = hooks.Unavailable, f.PgidErr
	case f.Pgid == f.Pid:
		pg.Verdict, pg.Found = hooks.Pass, "pgid "+strconv.Itoa(f.Pgid)
	default:
		pg.Verdict, pg.Found = hooks.Fail, "pgid "+strconv.Itoa(f.Pgid)
	}
	add(pg)

	for i, q := range qs {
		r := hooks.Result{Check: q.check(), Expected: verb(q.Allowed)}
		switch {
		case i >= len(f.Answers):
			r.Verdict, r.Found = hooks.Unavailable, "not asked"
		case f.Answers[i].Err != "":
			r.Verdict, r.Found = hooks.Unavailable, f.Answers[i].Err
		case f.Answers[i].Allowed == q.Allowed:
			r.Verdict, r.Found = hooks.Pass, verb(f.Answers[i].Allowed)
		default:
			r.Verdict, r.Found = hooks.Fail, verb(f.Answers[i].Allowed)
		}
		add(r)
	}
	return out
}

func verb(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "denied"
}
