package darwin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

// CanaryPlan is what the probe tries in a darwin sandbox: read each
// masked path, write under every read-only root and hidden path (must
// fail) and one write root (must succeed: the positive control), and
// connect to a host loopback listener (must fail: network none). It comes
// from the plan, not the spec: on darwin a tmpfs is hidden, not a fresh
// writable directory, so the spec's own canaries would be wrong here.
func (p *Plan) CanaryPlan() hooks.CanaryPlan {
	cp := hooks.CanaryPlan{ConnectMustFail: true, MaskedRead: slices.Clone(p.Masked)}
	if len(p.WriteRoots) > 0 {
		cp.WriteInside = []string{p.WriteRoots[0]}
	}
	cp.WriteOutside = uniqueSorted(slices.Concat(p.ReadRoots, p.Hidden))
	return cp
}

// Observation is what the host saw of one probe run. Common holds what
// hooks judges the same way on every platform (files the probe created,
// connections the host's listener accepted, the probe's report).
type Observation struct {
	Common hooks.Observation
	// Denied is sandbox_check(workload pid, "file-read-data", path) for
	// each masked path: the kernel's word on the live workload.
	Denied map[string]Answer
	// HostDigest is the digest of what the host reads at a masked path
	// (canary.Digest of its first canary.MaxRead bytes).
	HostDigest map[string]string
}

// JudgeCanaries turns an observation into verdicts (pure). Writes and the
// connect are judged as on Linux (hooks.JudgeCanaries: the host's files and
// listener decide). A masked path is not a mount here, so it is judged
// from the kernel's answer for the live workload: denied is a PASS,
// allowed a FAIL, and a probe that read the host's bytes is a FAIL
// whatever the kernel said. With no answer, the probe's word that it was
// refused is only PARTIAL.
func JudgeCanaries(cp hooks.CanaryPlan, o Observation) []hooks.Result {
	rest := cp
	rest.MaskedRead = nil
	out := hooks.JudgeCanaries(rest, o.Common)
	ran := o.Common.ProbeErr == ""
	for _, m := range cp.MaskedRead {
		r := hooks.Result{Check: "P3/masked-read" + m, Evidence: hooks.HostFact, Expected: "the sandbox denies file-read-data"}
		var a canary.Attempt
		attempted := false
		for _, x := range o.Common.Report.Reads {
			if x.Path == m && ran {
				a, attempted = x, true
			}
		}
		host, hasHost := o.HostDigest[m]
		ans, known := o.Denied[m]
		switch {
		case attempted && a.Size > 0 && hasHost && a.SHA256 == host:
			r.Verdict, r.Found = hooks.Fail, fmt.Sprintf("the probe read the file's %d bytes (sha256 matches the host's copy)", a.Size)
		case known && ans.Err == "" && !ans.Allowed:
			r.Verdict, r.Found = hooks.Pass, "denied (sandbox_check on the workload)"
		case known && ans.Err == "":
			r.Verdict, r.Found = hooks.Fail, "the workload's sandbox allows file-read-data"
		case attempted && a.Size > 0:
			r.Verdict, r.Evidence, r.Found = hooks.Fail, hooks.ContainerReport, fmt.Sprintf("the probe read %d bytes", a.Size)
		case attempted && a.Err != "":
			r.Verdict, r.Evidence, r.Found = hooks.Partial, hooks.ContainerReport, "the probe was refused ("+a.Err+"), but the kernel could not be asked: "+errOf(ans, known)
		case !ran:
			r.Verdict, r.Found = hooks.Unavailable, "probe failed: "+o.Common.ProbeErr
		default:
			r.Verdict, r.Found = hooks.Unavailable, "no answer: "+errOf(ans, known)
		}
		out = append(out, r)
	}
	return out
}

func errOf(a Answer, known bool) string {
	if !known {
		return "not asked"
	}
	return strings.TrimSpace(a.Err)
}
