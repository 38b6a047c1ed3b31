package hooks

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"path"
	"slices"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// MaxCanaryRead bounds what the probe reads of a masked path (and what the
// host hashes of the file under it): enough to recognise the content,
// never a whole /proc/kcore.
const MaxCanaryRead = 4096

// ProbeTimeout bounds the probe process. Its connect attempt gives up
// sooner (probeDialTimeout), so a probe that runs into this was stuck.
const ProbeTimeout = 10 * time.Second

const probeDialTimeout = 500 * time.Millisecond

// canaryPrefix names the files the probe creates; the nonce makes each
// run's unguessable, so an old or planted file cannot pass for a new one.
const canaryPrefix = ".vetto-canary-"

// CanaryPlan is what the probe will try, derived from the spec alone (a
// pure function): which masked paths to read, where writing must fail,
// where it must succeed, and whether the host's loopback must be out of
// reach.
type CanaryPlan struct {
	MaskedRead   []string `json:"maskedRead,omitempty"`
	WriteOutside []string `json:"writeOutside,omitempty"`
	WriteInside  []string `json:"writeInside,omitempty"`
	// ConnectMustFail: the container has a network of its own, so the
	// host's loopback must not be reachable from it.
	ConnectMustFail bool `json:"connectMustFail"`
}

// Empty reports whether the plan tries nothing.
func (p CanaryPlan) Empty() bool {
	return len(p.MaskedRead) == 0 && len(p.WriteOutside) == 0 && len(p.WriteInside) == 0 && !p.ConnectMustFail
}

// Landlock access bits (linux/landlock.h) that make a path writable.
const (
	landlockWriteFile = 1 << 1
	landlockMakeReg   = 1 << 8
)

// Mount types whose files are the kernel's, not the workload's: nothing to
// learn from writing there.
var kernelFSTypes = map[string]bool{"proc": true, "sysfs": true, "cgroup": true, "cgroup2": true, "devpts": true, "mqueue": true}

// kernelDirs are trees the canaries leave alone for the same reason.
var kernelDirs = []string{"/proc", "/sys", "/dev"}

// PlanCanaries derives the canaries from the spec. The spec's own fields
// say what is enforced; vetto's annotations, when present, say what the
// policy intended, and a canary checks the intent where the two can
// differ: dev.vetto.masked (paths the policy denies), dev.vetto.landlock
// (the roots the policy lets the process write) and dev.vetto.net (the
// network mode). A bundle with neither is checked against its own fields.
func PlanCanaries(s *specs.Spec) (CanaryPlan, error) {
	var p CanaryPlan
	if s.Linux != nil {
		p.MaskedRead = append(p.MaskedRead, s.Linux.MaskedPaths...)
	}
	if a, ok := s.Annotations[spec.AnnotationMasked]; ok {
		var extra []string
		if err := json.Unmarshal([]byte(a), &extra); err != nil {
			return p, fmt.Errorf("annotation %s: %w", spec.AnnotationMasked, err)
		}
		p.MaskedRead = append(p.MaskedRead, extra...)
	}
	p.MaskedRead = uniqueClean(p.MaskedRead)

	roots, err := writableRoots(s)
	if err != nil {
		return p, err
	}
	// One positive control is enough: it proves the probe can write at
	// all, so its failures elsewhere mean something. A tmpfs root is
	// preferred: a canary file that appears for a moment in a bind of the
	// user's project could wake a file watcher on the host.
	tmpfs := map[string]bool{}
	for _, m := range s.Mounts {
		if m.Type == "tmpfs" {
			tmpfs[path.Clean(m.Destination)] = true
		}
	}
	for _, pass := range []bool{true, false} {
		for _, r := range roots {
			if len(p.WriteInside) == 0 && !underAny(r, kernelDirs) && (!pass || tmpfs[r]) {
				p.WriteInside = []string{r}
			}
		}
	}
	var candidates []string
	if s.Root != nil {
		candidates = append(candidates, "/")
	}
	for _, m := range s.Mounts {
		if !kernelFSTypes[m.Type] {
			candidates = append(candidates, path.Clean(m.Destination))
		}
	}
	for _, c := range uniqueClean(candidates) {
		if c != "/" && underAny(c, kernelDirs) {
			continue
		}
		if !underAny(c, roots) {
			p.WriteOutside = append(p.WriteOutside, c)
		}
	}

	mode, annotated := s.Annotations[spec.AnnotationNet]
	switch {
	case annotated:
		p.ConnectMustFail = mode != "host"
	case s.Linux != nil:
		for _, ns := range s.Linux.Namespaces {
			if ns.Type == specs.NetworkNamespace && ns.Path == "" {
				p.ConnectMustFail = true
			}
		}
	}
	return p, nil
}

// writableRoots are the container paths the policy lets the process write
// under: the dev.vetto.landlock write rules when the bundle has them, else
// a writable rootfs and every mount not mounted "ro".
func writableRoots(s *specs.Spec) ([]string, error) {
	if a, ok := s.Annotations[spec.AnnotationLandlock]; ok && a != "" {
		var ll struct {
			Rules struct {
				PathBeneath []struct {
					AllowedAccess uint64   `json:"allowedAccess"`
					Paths         []string `json:"paths"`
				} `json:"pathBeneath"`
			} `json:"rules"`
		}
		if err := json.Unmarshal([]byte(a), &ll); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", spec.AnnotationLandlock, err)
		}
		var out []string
		for _, r := range ll.Rules.PathBeneath {
			if r.AllowedAccess&(landlockWriteFile|landlockMakeReg) == landlockWriteFile|landlockMakeReg {
				out = append(out, r.Paths...)
			}
		}
		return uniqueClean(out), nil
	}
	var out []string
	if s.Root != nil && !s.Root.Readonly {
		out = append(out, "/")
	}
	for _, m := range s.Mounts {
		if !kernelFSTypes[m.Type] && !slices.Contains(m.Options, "ro") {
			out = append(out, m.Destination)
		}
	}
	return uniqueClean(out), nil
}

func uniqueClean(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" || !strings.HasPrefix(p, "/") {
			continue
		}
		if c := path.Clean(p); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if r == "/" || p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// ProbeConfig is the probe's argument: what to try, and the nonce and
// address the host prepared.
type ProbeConfig struct {
	Nonce        string   `json:"nonce"`
	MaskedRead   []string `json:"maskedRead,omitempty"`
	WriteOutside []string `json:"writeOutside,omitempty"`
	WriteInside  []string `json:"writeInside,omitempty"`
	Connect      string   `json:"connect,omitempty"`
	// Landlock is the container's dev.vetto.landlock annotation: the probe
	// restricts itself with it first, as the container's process is.
	Landlock string `json:"landlock,omitempty"`
}

// ProbeReport is what the probe says it saw. It is the container's word:
// the verdicts use it only to know an attempt was made and, for a masked
// read, which bytes came back — which the host compares with the file it
// holds.
type ProbeReport struct {
	Landlock string         `json:"landlock,omitempty"`
	Reads    []ProbeAttempt `json:"reads,omitempty"`
	Writes   []ProbeAttempt `json:"writes,omitempty"`
	Connect  *ProbeAttempt  `json:"connect,omitempty"`
}

// ProbeAttempt is one operation the probe tried.
type ProbeAttempt struct {
	Path string `json:"path"`
	Err  string `json:"err,omitempty"`
	// Size and SHA256 describe what a read returned.
	Size   int    `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

func (r ProbeReport) attempt(list []ProbeAttempt, p string) (ProbeAttempt, bool) {
	for _, a := range list {
		if a.Path == p {
			return a, true
		}
	}
	return ProbeAttempt{}, false
}

// CanaryFile is the container path the probe creates under dir.
func CanaryFile(dir, nonce string) string { return path.Join(dir, canaryPrefix+nonce) }

// Digest is how the probe and the host fingerprint what they read.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ProbeRunner runs the probe in the container, joined to its namespaces,
// cgroup, user, capabilities, no_new_privs and seccomp filter, with args
// as its argv, and returns its stdout.
type ProbeRunner func(args []string, timeout time.Duration) ([]byte, error)

// CanaryInput is one canary run against a live container.
type CanaryInput struct {
	Pid    int // the init, whose view of the filesystem the host reads
	Rootfs string
	Spec   *specs.Spec
	Plan   CanaryPlan
	// Self is the probe's argv[0] inside the container.
	Self string
	// Landlock is the ruleset the workload runs under; empty: none.
	Landlock string
}

// RunCanaries runs the probe and judges what happened from the host: the
// files the probe created or failed to, the connections the host's own
// listener saw, the mounts over masked paths, and the masked files' bytes.
// Whatever the probe left is removed.
func RunCanaries(in CanaryInput, f PostFacts, run ProbeRunner) []Result {
	if in.Plan.Empty() {
		return nil
	}
	nonce, err := newNonce()
	if err != nil {
		return unavailableAll(in.Plan, "nonce: "+err.Error())
	}
	// The probe runs in the Landlock domain the workload got: the
	// negotiated ruleset, not the annotation (at degraded they differ).
	cfg := ProbeConfig{Nonce: nonce, MaskedRead: in.Plan.MaskedRead, WriteOutside: in.Plan.WriteOutside, WriteInside: in.Plan.WriteInside, Landlock: in.Landlock}
	var lis net.Listener
	if in.Plan.ConnectMustFail {
		// The host's own loopback, in the runtime's network namespace:
		// from a container with its own network it is unreachable.
		if lis, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
			return unavailableAll(in.Plan, "host listener: "+err.Error())
		}
		defer lis.Close()
		cfg.Connect = lis.Addr().String()
	}
	arg, err := json.Marshal(cfg)
	if err != nil {
		return unavailableAll(in.Plan, err.Error())
	}
	out, runErr := run([]string{in.Self, ProbeArg, string(arg)}, ProbeTimeout)
	obs := Observation{Nonce: nonce}
	if runErr == nil {
		if err := json.Unmarshal(out, &obs.Report); err != nil {
			runErr = fmt.Errorf("probe report %q: %w", truncate(out), err)
		}
	}
	if runErr != nil {
		obs.ProbeErr = runErr.Error()
	}
	// Host facts, after the probe is gone.
	if lis != nil {
		n, err := acceptedSince(lis)
		obs.Accepted, obs.ListenerErr = n, errString(err)
	}
	obs.Created = map[string]bool{}
	for _, dir := range slices.Concat(in.Plan.WriteInside, in.Plan.WriteOutside) {
		file := CanaryFile(dir, nonce)
		ok, err := f.Exists(in.Pid, file)
		if err != nil {
			obs.FactErr = append(obs.FactErr, err.Error())
			continue
		}
		obs.Created[dir] = ok
		if ok {
			if err := removeInContainer(in.Pid, file); err != nil {
				obs.FactErr = append(obs.FactErr, err.Error())
			}
		}
	}
	obs.Masked, obs.Present, obs.HostDigest = map[string]bool{}, map[string]bool{}, map[string]string{}
	mounts, mErr := f.Mounts(in.Pid)
	for _, p := range in.Plan.MaskedRead {
		if mErr == nil {
			obs.Masked[p] = isMaskMount(mounts, p)
		}
		if ok, err := f.Exists(in.Pid, p); err == nil {
			obs.Present[p] = ok
		}
		if in.Rootfs != "" {
			if d, n, err := f.FileDigest(in.Rootfs, p); err == nil && n > 0 {
				obs.HostDigest[p] = d
			}
		}
	}
	if mErr != nil {
		obs.FactErr = append(obs.FactErr, mErr.Error())
	}
	return JudgeCanaries(in.Plan, obs)
}

// Observation is everything RunCanaries gathered: the probe's report and
// the host's own facts.
type Observation struct {
	Nonce    string
	Report   ProbeReport
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
	// all would pass every negative check.
	control := true
	for _, dir := range p.WriteInside {
		r := Result{Check: "P3/write-inside" + dir, Evidence: HostFact, Expected: "the probe creates " + CanaryFile(dir, "<nonce>")}
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
			a, _ := o.Report.attempt(o.Report.Writes, dir)
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
		r := Result{Check: "P3/write-outside" + dir, Evidence: HostFact, Expected: "no " + CanaryFile(dir, "<nonce>")}
		created, known := o.Created[dir]
		a, attempted := o.Report.attempt(o.Report.Writes, dir)
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
		a, attempted := o.Report.attempt(o.Report.Reads, mp)
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

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func newNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
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
func isMaskMount(mounts []Mount, p string) bool {
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
	if m.Root != "/null" && !(m.FSType == "tmpfs" && m.ReadOnly) {
		return false
	}
	for _, later := range mounts[last+1:] {
		if later.Point == "/" || strings.HasPrefix(p+"/", strings.TrimSuffix(later.Point, "/")+"/") {
			return false
		}
	}
	return true
}
