package hooks

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// The canaries are P3 of the post-launch verification (docs/verification.md):
// attempts made by the container's own process, in the very domain its
// program will run in, judged from the host. This file is what they
// try, derived from the spec (canary_plan.go); canary_judge.go the host's
// verdicts. What the host and the process say to each other, and the
// attempts themselves, made in the container, are hooks/canary.

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
	// A read-only root with no writable mount of its own (runc's starter
	// spec) still has /dev/shm, a tmpfs meant for writing: without a
	// positive control the negative checks would prove nothing.
	if len(p.WriteInside) == 0 && slices.Contains(roots, "/dev/shm") {
		p.WriteInside = []string{"/dev/shm"}
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
		rs, err := landlock.Parse(a)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", spec.AnnotationLandlock, err)
		}
		var out []string
		for _, r := range rs.Rules.PathBeneath {
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
