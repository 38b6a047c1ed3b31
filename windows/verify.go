package windows

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Facts are what the host (the holder, a process outside the job that
// holds its handle) read of the live process, its token and its job.
// Each Err field says why a fact could not be read: then its check is
// UNAVAILABLE, never PASS.
type Facts struct {
	Pid int `json:"pid"`

	// InJob: IsProcessInJob(process, job).
	InJob    bool   `json:"inJob"`
	InJobErr string `json:"inJobErr,omitempty"`

	// The job's limits read back (QueryInformationJobObject).
	LimitFlags         uint32 `json:"limitFlags"`
	ActiveProcessLimit uint32 `json:"activeProcessLimit"`
	JobMemoryLimit     uint64 `json:"jobMemoryLimit"`
	LimitsErr          string `json:"limitsErr,omitempty"`
	UIRestrictions     uint32 `json:"uiRestrictions"`
	UIErr              string `json:"uiErr,omitempty"`

	// The process token (GetTokenInformation).
	Integrity       uint32   `json:"integrity"` // mandatory label RID
	IntegrityErr    string   `json:"integrityErr,omitempty"`
	AppContainer    bool     `json:"appContainer"`
	AppContainerSID string   `json:"appContainerSid"`
	AppContainerErr string   `json:"appContainerErr,omitempty"`
	Capabilities    int      `json:"capabilities"`
	CapabilitiesErr string   `json:"capabilitiesErr,omitempty"`
	Privileges      []string `json:"privileges"`
	PrivilegesErr   string   `json:"privilegesErr,omitempty"`
	// AdminEnabled: BUILTIN\Administrators is in the token and enabled
	// (not deny-only).
	AdminEnabled bool   `json:"adminEnabled"`
	GroupsErr    string `json:"groupsErr,omitempty"`
}

// Judge turns facts into verdicts (pure), against the plan and the SID
// of the AppContainer profile the holder made. Every verdict is a host
// fact.
func Judge(p *Plan, sid string, f Facts) []hooks.Result {
	var out []hooks.Result
	add := func(check, expected, errText string, ok bool, found string) {
		r := hooks.Result{Check: check, Evidence: hooks.HostFact, Expected: expected, Found: found}
		switch {
		case errText != "":
			// A fact that could not be read is the verify degradation,
			// as on Linux: refused at strict and, unless accepted, at
			// standard; never a PASS. A FAIL is never degradable.
			r.Verdict, r.Found, r.Feature = hooks.Unavailable, errText, string(runtime.FeatureVerify)
		case ok:
			r.Verdict = hooks.Pass
		default:
			r.Verdict = hooks.Fail
		}
		out = append(out, r)
	}
	add("job/member", "IsProcessInJob = true", f.InJobErr, f.InJob, strconv.FormatBool(f.InJob))
	want := p.Job.LimitFlags
	got := fmt.Sprintf("%#x %v", f.LimitFlags, flagNames(f.LimitFlags, limitNames))
	add("job/limits", fmt.Sprintf("%#x %v", want, p.Job.Limits), f.LimitsErr, f.LimitFlags&want == want, got)
	add("job/no-breakaway", "neither BREAKAWAY_OK nor SILENT_BREAKAWAY_OK", f.LimitsErr, f.LimitFlags&(limitBreakawayOK|limitSilentBreakawayOK) == 0, got)
	if want&limitActiveProcess != 0 {
		add("job/active-process-limit", strconv.FormatUint(uint64(p.Job.ActiveProcessLimit), 10), f.LimitsErr,
			f.ActiveProcessLimit != 0 && f.ActiveProcessLimit <= p.Job.ActiveProcessLimit, strconv.FormatUint(uint64(f.ActiveProcessLimit), 10))
	}
	if want&limitJobMemory != 0 {
		add("job/memory-limit", strconv.FormatUint(p.Job.JobMemoryLimit, 10), f.LimitsErr,
			f.JobMemoryLimit != 0 && f.JobMemoryLimit <= p.Job.JobMemoryLimit, strconv.FormatUint(f.JobMemoryLimit, 10))
	}
	add("job/ui-restrictions", fmt.Sprintf("%#x", p.Job.UIRestrictions), f.UIErr, f.UIRestrictions&p.Job.UIRestrictions == p.Job.UIRestrictions,
		fmt.Sprintf("%#x %v", f.UIRestrictions, flagNames(f.UIRestrictions, uiNames)))
	add("token/integrity", "low (0x1000) or below", f.IntegrityErr, f.Integrity <= integrityLow, fmt.Sprintf("%#x", f.Integrity))
	add("token/appcontainer", "an AppContainer token of "+sid, f.AppContainerErr, f.AppContainer && strings.EqualFold(f.AppContainerSID, sid),
		fmt.Sprintf("appcontainer=%v %s", f.AppContainer, f.AppContainerSID))
	add("token/capabilities", "none (no network)", f.CapabilitiesErr, f.Capabilities == 0, strconv.Itoa(f.Capabilities))
	extra := slices.DeleteFunc(slices.Clone(f.Privileges), func(s string) bool { return s == privilegeChangeNotify })
	add("token/privileges", "none but "+privilegeChangeNotify, f.PrivilegesErr, len(extra) == 0, strings.Join(f.Privileges, ","))
	add("token/administrators", "absent or deny-only", f.GroupsErr, !f.AdminEnabled, "enabled="+strconv.FormatBool(f.AdminEnabled))
	return out
}

// CanaryPlan is what the probe tries, created in the same job with the
// same token and AppContainer: read each masked path, write under every
// read-only root and hidden path (must fail) and one write root (must
// succeed), connect to a host loopback listener (must fail).
func (p *Plan) CanaryPlan() hooks.CanaryPlan {
	cp := hooks.CanaryPlan{ConnectMustFail: true, MaskedRead: slices.Clone(p.Masked)}
	if len(p.WriteRoots) > 0 {
		cp.WriteInside = []string{p.WriteRoots[0]}
	}
	out := slices.Concat(p.ReadRoots, p.Hidden)
	slices.Sort(out)
	cp.WriteOutside = slices.Compact(out)
	return cp
}

// Observation is what the host saw of one probe run.
type Observation struct {
	Common hooks.Observation
	// DenyACE: the masked path's DACL, read back, has the deny entry for
	// the AppContainer's SID (a host fact about the object); Err when it
	// could not be read.
	DenyACE map[string]Answer
	// HostDigest is the digest of the first canary.MaxRead bytes the
	// host reads at a masked path.
	HostDigest map[string]string
}

// Answer is one fact about a masked path.
type Answer struct {
	Denied bool   `json:"denied"`
	Err    string `json:"err,omitempty"`
}

// JudgeCanaries turns an observation into verdicts (pure). Writes and the
// connect are judged as on Linux (hooks.JudgeCanaries). A masked path is
// a PASS when its deny entry is on the object, a FAIL when it is not or
// when the probe read the host's bytes; the probe's word alone is
// PARTIAL.
func JudgeCanaries(cp hooks.CanaryPlan, o Observation) []hooks.Result {
	rest := cp
	rest.MaskedRead = nil
	out := hooks.JudgeCanaries(rest, o.Common)
	ran := o.Common.ProbeErr == ""
	for _, m := range cp.MaskedRead {
		r := hooks.Result{Check: "P3/masked-read" + m, Evidence: hooks.HostFact, Expected: "a deny entry for the AppContainer on the object"}
		var a canary.Attempt
		attempted := false
		for _, x := range o.Common.Report.Reads {
			if samePath(x.Path, m) && ran {
				a, attempted = x, true
			}
		}
		host, hasHost := o.HostDigest[m]
		ans, known := o.DenyACE[m]
		switch {
		case attempted && a.Size > 0 && hasHost && a.SHA256 == host:
			r.Verdict, r.Found = hooks.Fail, fmt.Sprintf("the probe read the file's %d bytes (sha256 matches the host's copy)", a.Size)
		case known && ans.Err == "" && ans.Denied:
			r.Verdict, r.Found = hooks.Pass, "deny entry present"
		case known && ans.Err == "":
			r.Verdict, r.Found = hooks.Fail, "no deny entry for the AppContainer"
		case attempted && a.Size > 0:
			r.Verdict, r.Evidence, r.Found = hooks.Fail, hooks.ContainerReport, fmt.Sprintf("the probe read %d bytes", a.Size)
		case attempted && a.Err != "":
			r.Verdict, r.Evidence, r.Found = hooks.Partial, hooks.ContainerReport, "the probe was refused ("+a.Err+"), but the host could not read the entry"
		case !ran:
			r.Verdict, r.Found = hooks.Unavailable, "probe failed: "+o.Common.ProbeErr
		default:
			r.Verdict, r.Found = hooks.Unavailable, "no fact: "+ans.Err
		}
		out = append(out, r)
	}
	return out
}
