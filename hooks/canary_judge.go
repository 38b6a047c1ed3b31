package hooks

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

// CanarySession is one run of the canaries as the host prepares and judges
// it: the plan, the nonce the files are named with, and a listener on the
// host's loopback that a process with a network of its own cannot reach.
type CanarySession struct {
	Plan    CanaryPlan
	Request canary.Config
	lis     *loopbackListener
	// failed: the session could not be prepared; Judge says why.
	failed string
}

// NewCanarySession plans the canaries for s and prepares the host's side.
// A session that cannot be prepared judges every check UNAVAILABLE; one
// whose plan is empty judges nothing.
func NewCanarySession(s *specs.Spec) *CanarySession {
	plan, err := PlanCanaries(s)
	cs := &CanarySession{Plan: plan}
	if err != nil {
		cs.failed = "plan: " + err.Error()
		return cs
	}
	if plan.Empty() {
		return cs
	}
	nonce, err := newNonce()
	if err != nil {
		cs.failed = "nonce: " + err.Error()
		return cs
	}
	cs.Request = canary.Config{Nonce: nonce, MaskedRead: plan.MaskedRead, WriteOutside: plan.WriteOutside, WriteInside: plan.WriteInside}
	if plan.ConnectMustFail {
		// The host's own loopback, in the runtime's network namespace:
		// from a container with its own network it is unreachable.
		lis, err := listenLoopback()
		if err != nil {
			cs.failed = "host listener: " + err.Error()
			return cs
		}
		cs.lis = lis
		cs.Request.Connect = lis.Addr()
	}
	return cs
}

// Close releases the host's listener.
func (cs *CanarySession) Close() {
	if cs.lis != nil {
		cs.lis.Close()
	}
}

// Judge reads the host's facts after the process made its attempts — the
// files it created or failed to (through /proc/<pid>/root, as it sees
// them), the connections the host's listener accepted, the mounts over
// the masked paths, the bytes under them in the rootfs — removes what the
// attempts left, and judges. report is what the process said; runErr why
// it said nothing (then no negative check can pass).
func (cs *CanarySession) Judge(pid int, rootfs string, report canary.Report, runErr error, f PostFacts) []Result {
	return cs.JudgeObserved(pid, report, runErr, f, cs.Observe(pid, rootfs, f))
}

// MaskObservation is what the host reads of the masked paths: nothing the
// attempts can change (they read, they do not mount or write there), so
// it may be read while the process makes them (Observe) — once nothing
// of the bundle's (a startContainer hook) can run in the container before
// the program — and Judge reads the rest after.
type MaskObservation struct {
	Masked, Present map[string]bool
	HostDigest      map[string]string
	FactErr         []string
}

// Observe reads the masked paths' facts for JudgeObserved: the mounts
// over them, whether each is there, the bytes under them in the rootfs.
func (cs *CanarySession) Observe(pid int, rootfs string, f PostFacts) *MaskObservation {
	p := cs.Plan
	o := &MaskObservation{Masked: map[string]bool{}, Present: map[string]bool{}, HostDigest: map[string]string{}}
	if cs.failed != "" || p.Empty() || len(p.MaskedRead) == 0 {
		return o
	}
	f, release := holdRoots(f, pid, rootfs)
	defer release()
	mounts, mErr := f.Mounts(pid)
	for _, mp := range p.MaskedRead {
		ok, null, err := lookPath(f, pid, mp)
		if mErr == nil {
			o.Masked[mp] = isMaskMount(mounts, mp, null)
		}
		if err == nil {
			o.Present[mp] = ok
		}
		if rootfs != "" {
			if d, n, err := f.FileDigest(rootfs, mp); err == nil && n > 0 {
				o.HostDigest[mp] = d
			}
		}
	}
	if mErr != nil {
		o.FactErr = append(o.FactErr, mErr.Error())
	}
	return o
}

// JudgeObserved is Judge with the masked paths' facts read already (pre,
// from Observe on the same process).
func (cs *CanarySession) JudgeObserved(pid int, report canary.Report, runErr error, f PostFacts, pre *MaskObservation) []Result {
	p := cs.Plan
	if cs.failed != "" {
		return unavailableAll(p, cs.failed)
	}
	if p.Empty() {
		return nil
	}
	// Every look below is in the init's root: opened once for all of
	// them.
	f, release := holdRoots(f, pid, "")
	defer release()
	nonce := cs.Request.Nonce
	obs := Observation{Nonce: nonce, Report: report}
	if runErr != nil {
		obs.ProbeErr = runErr.Error()
	}
	if cs.lis != nil {
		n, err := cs.lis.accepted()
		obs.Accepted, obs.ListenerErr = n, errString(err)
	}
	obs.Created = map[string]bool{}
	for _, dir := range slices.Concat(p.WriteInside, p.WriteOutside) {
		file := canary.File(dir, nonce)
		ok, err := f.Exists(pid, file)
		if err != nil {
			obs.FactErr = append(obs.FactErr, err.Error())
			continue
		}
		obs.Created[dir] = ok
		if ok {
			if err := removeInContainer(pid, file); err != nil {
				obs.FactErr = append(obs.FactErr, err.Error())
			}
		}
	}
	obs.Masked, obs.Present, obs.HostDigest = pre.Masked, pre.Present, pre.HostDigest
	obs.FactErr = append(obs.FactErr, pre.FactErr...)
	return JudgeCanaries(p, obs)
}

// Observation is everything a CanarySession gathered: the probe's report and
// the host's own facts.
type Observation struct {
	Nonce    string
	Report   canary.Report
	ProbeErr string // the probe could not run or report
	// Accepted connections on the host's listener.
	Accepted    int
	ListenerErr string
	// Created: the canary file exists under the directory, as the host
	// sees the container's filesystem.
	Created map[string]bool
	// Masked: a mask (a /dev/null bind or a read-only tmpfs) is mounted
	// at the path in the container. Present: the path exists there.
	Masked, Present map[string]bool
	// HostDigest: the digest of the file under a masked path in the
	// rootfs, as the host reads it (the secret the mask hides).
	HostDigest map[string]string
	FactErr    []string
}

// JudgeCanaries turns an observation into verdicts (pure). Only the host's
// facts decide a PASS or a FAIL; the probe's report says that an attempt
// was made, and a read that returned the host's bytes is proof the mask
// did not hold.
func JudgeCanaries(p CanaryPlan, o Observation) []Result {
	var out []Result
	ran := o.ProbeErr == ""
	// Positive control first: without it a probe that can do nothing at
	// all would pass every negative check — and so would a container with
	// nowhere to write, whose negative checks then prove nothing either.
	control := len(p.WriteInside) > 0
	if !control && len(p.WriteOutside) > 0 {
		out = append(out, Result{Check: "P3/write-inside", Verdict: Partial, Evidence: HostFact,
			Expected: "a writable root for the positive control (a writable rootfs, a writable mount, /dev/shm)",
			Found:    "the container has nowhere to write: the write canaries cannot show that a write would have been seen"})
	}
	for _, dir := range p.WriteInside {
		r := Result{Check: "P3/write-inside" + dir, Evidence: HostFact, Expected: "the probe creates " + canary.File(dir, "<nonce>")}
		created, known := o.Created[dir]
		switch {
		case created:
			r.Verdict, r.Found = Pass, "created (seen by the host)"
		case !known:
			r.Verdict, r.Found = Unavailable, "host could not look: "+strings.Join(o.FactErr, "; ")
			control = false
		case !ran:
			r.Verdict, r.Found = Unavailable, "probe failed: "+o.ProbeErr
			control = false
		default:
			a, _ := canary.Find(o.Report.Writes, dir)
			r.Verdict, r.Evidence, r.Found = Partial, ContainerReport, "not created: "+orNone(a.Err)+" (over-confined, or the probe is blocked; the negative checks prove nothing)"
			control = false
		}
		out = append(out, r)
	}
	negative := func(r Result, attempted bool) Result {
		if r.Verdict == Pass && (!control || !attempted) {
			r.Verdict = Partial
			if !attempted {
				r.Found += "; the probe did not report the attempt"
			} else {
				r.Found += "; positive control did not hold"
			}
		}
		return r
	}
	for _, dir := range p.WriteOutside {
		r := Result{Check: "P3/write-outside" + dir, Evidence: HostFact, Expected: "no " + canary.File(dir, "<nonce>")}
		created, known := o.Created[dir]
		a, attempted := canary.Find(o.Report.Writes, dir)
		switch {
		case !known:
			r.Verdict, r.Found = Unavailable, "host could not look: "+strings.Join(o.FactErr, "; ")
		case created:
			r.Verdict, r.Found = Fail, "the probe created it (seen by the host)"
		case !ran:
			r.Verdict, r.Found = Unavailable, "probe failed: "+o.ProbeErr
		default:
			r.Verdict, r.Found = Pass, "not created ("+orNone(a.Err)+")"
		}
		out = append(out, negative(r, attempted))
	}
	for _, mp := range p.MaskedRead {
		r := Result{Check: "P3/masked-read" + mp, Evidence: HostFact, Expected: "masked: a /dev/null bind or read-only tmpfs, or absent"}
		a, attempted := canary.Find(o.Report.Reads, mp)
		host, hasHost := o.HostDigest[mp]
		masked, knownMask := o.Masked[mp]
		present, knownPresent := o.Present[mp]
		switch {
		case attempted && hasHost && a.Size > 0 && a.SHA256 == host:
			r.Verdict, r.Found = Fail, fmt.Sprintf("the probe read the file's %d bytes (sha256 matches the host's copy)", a.Size)
		case knownMask && masked:
			r.Verdict, r.Found = Pass, "masked"
		case knownPresent && !present:
			r.Verdict, r.Found = Pass, "absent"
		case knownMask && knownPresent:
			r.Verdict, r.Found = Fail, "present and not masked"
			if attempted && a.Size > 0 {
				r.Found += fmt.Sprintf("; the probe read %d bytes", a.Size)
			}
		default:
			r.Verdict, r.Found = Unavailable, "host could not read the container's mounts: "+strings.Join(o.FactErr, "; ")
		}
		if r.Verdict == Pass && ran && !attempted {
			r.Verdict, r.Found = Partial, r.Found+"; the probe did not report the attempt"
		}
		out = append(out, r)
	}
	if p.ConnectMustFail {
		r := Result{Check: "P3/loopback-connect", Evidence: HostFact, Expected: "no connection on the host's 127.0.0.1 listener"}
		attempted := o.Report.Connect != nil
		switch {
		case o.ListenerErr != "":
			r.Verdict, r.Found = Unavailable, o.ListenerErr
		case o.Accepted > 0:
			r.Verdict, r.Found = Fail, fmt.Sprintf("the host listener accepted %d connection(s) from the container", o.Accepted)
		case !ran:
			r.Verdict, r.Found = Unavailable, "probe failed: "+o.ProbeErr
		default:
			r.Verdict, r.Found = Pass, "no connection"
			if attempted {
				r.Found += " (" + orNone(o.Report.Connect.Err) + ")"
			}
		}
		out = append(out, negative(r, attempted))
	}
	for i := range out {
		out[i] = capped(out[i])
	}
	return out
}

func unavailableAll(p CanaryPlan, why string) []Result {
	return JudgeCanaries(p, Observation{ProbeErr: why, ListenerErr: why, FactErr: []string{why}})
}

func orNone(s string) string {
	if s == "" {
		return "no error reported"
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func newNonce() (string, error) {
	b := make([]byte, 16)
	if err := fillRandom(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// isMaskMount reports whether a mask is what shows at p: the last mount at
// p is a mask (runc masks a file with a bind of /dev/null and a directory
// with a read-only tmpfs), and no mount made after it at p or above it
// covers it — a bind of the project listed after a mask in it would leave
// the mask in the mount table and the secret in view (the policy-mode
// issue, 12.5).
func isMaskMount(mounts []Mount, p string, null bool) bool {
	last := -1
	for i, m := range mounts {
		if m.Point == p {
			last = i
		}
	}
	if last < 0 {
		return false
	}
	m := mounts[last]
	// What is mounted there must be the null device itself (what the host
	// reads at the path is a character device 1:3), or a read-only tmpfs:
	// never judged by the mount's source path, which an image can name
	// (the CVE-2025-31133 class).
	if !null && !(m.FSType == "tmpfs" && m.ReadOnly) {
		return false
	}
	for _, later := range mounts[last+1:] {
		if later.Point == "/" || strings.HasPrefix(p+"/", strings.TrimSuffix(later.Point, "/")+"/") {
			return false
		}
	}
	return true
}
