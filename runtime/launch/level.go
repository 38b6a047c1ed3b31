// Package launch is vetto-runtime's one launch-policy evaluator: whether a
// launch, an exec or an update may go ahead, at which security level, with
// which named degradations, and what its spec gives away (its posture).
//
// It is a pure function of its inputs — the spec, the caller's request,
// facts the runtime read from the host, and the operator's floor — and
// returns every rule the request breaks, not the first: no syscalls, no
// files, no clock, no environment of its own. Every rule has a stable ID
// (Rules lists them; `vetto-runtime policy rules` prints them and
// docs/security-levels.md is checked against them), a one-line reason and
// a remedy. The runtime maps a Decision to exit codes: a floor violation is
// 126, a level violation 125, bad input 1.
package launch

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Level is how much enforcement a launch demands (docs/security-levels.md).
type Level int

const (
	// Degraded runs with what the host can give; every missing piece is
	// named on the launch line, in state and in the audit log.
	Degraded Level = iota
	// Standard applies everything the bundle asks for, exactly; a missing
	// piece is refused unless the caller accepts it by name.
	Standard
	// Strict also demands an isolated sandbox by itself and allows no
	// degradation at all.
	Strict
)

var levelNames = map[Level]string{Degraded: "degraded", Standard: "standard", Strict: "strict"}

func (l Level) String() string {
	if n, ok := levelNames[l]; ok {
		return n
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// MarshalText makes levels read as their names in JSON.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses a level name.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// ParseLevel reads "strict", "standard" or "degraded".
func ParseLevel(s string) (Level, error) {
	for l, n := range levelNames {
		if n == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown security level %q (want strict, standard or degraded)", s)
}

// Feature is a part of the sandbox that may be missing as a named,
// recorded degradation where the level allows it: never at strict, at
// standard only when the caller names it (--allow-degraded), always at
// degraded.
type Feature string

const (
	// FeatureLandlock: Landlock rights the host's ABI cannot enforce.
	FeatureLandlock Feature = "landlock"
	// FeatureNetwork: a network mode that needs the egress relay.
	FeatureNetwork Feature = "network"
	// FeatureLimits: memory or pids limits that are not applied or were
	// removed by an update.
	FeatureLimits Feature = "limits"
	// FeatureCgroupKill: no cgroup.kill for teardown.
	FeatureCgroupKill Feature = "cgroup-kill"
	// FeatureVerify: no post-launch verification (--no-verify), or no
	// host facts to verify with on this platform.
	FeatureVerify Feature = "verify"
	// FeatureCleanup: a teardown that cannot prove every process gone (no
	// pid namespace and no cgroup: darwin kills the process group and the
	// descendants it finds).
	FeatureCleanup Feature = "cleanup"
	// FeatureNoNewPrivs: noNewPrivileges or nosuid binds the platform
	// cannot honour (darwin): a set-id program runs with its owner's ids,
	// inside the same sandbox.
	FeatureNoNewPrivs Feature = "no-new-privs"
)

// features describes each feature, for --help and errors.
var features = map[Feature]string{
	FeatureLandlock:   "Landlock rights (dev.vetto.landlock) the host's Landlock ABI cannot enforce; the rest is enforced",
	FeatureNetwork:    "a network allowlist (dev.vetto.net) that needs the egress relay; the container gets no network instead",
	FeatureLimits:     "memory/pids limits that are not applied, or that an update removes",
	FeatureCgroupKill: "cgroup.kill for teardown (kernel < 5.14 or no cgroup v2)",
	FeatureVerify:     "post-launch verification (--no-verify, or no host facts on this platform)",
	FeatureCleanup:    "a teardown that proves every process gone (darwin: no pid namespace or cgroup; a process that left the process group is not found)",
	FeatureNoNewPrivs: "noNewPrivileges and nosuid binds (darwin has neither: a set-id program gains its owner's ids, inside the same sandbox)",
}

// bundleFeatures are the features a bundle may accept for itself
// (dev.vetto.allow-degraded): each weakens only something the same bundle
// asks for, which it could as well not ask for. Verification and
// cgroup.kill are the runtime's own guarantees, never the bundle's to give
// up; only the caller can (--allow-degraded), and the floor can forbid it.
var bundleFeatures = map[Feature]bool{FeatureLandlock: true, FeatureNetwork: true, FeatureLimits: true, FeatureNoNewPrivs: true}

// FeatureNames lists the known features, sorted.
func FeatureNames() []string {
	out := make([]string, 0, len(features))
	for f := range features {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}

// DescribeFeature says what a feature's absence means.
func DescribeFeature(f Feature) string { return features[f] }

// ParseFeatures reads --allow-degraded values (comma-separated, repeatable).
func ParseFeatures(values []string) (map[Feature]bool, error) {
	out := map[Feature]bool{}
	for _, v := range values {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if _, ok := features[Feature(f)]; !ok {
				return nil, fmt.Errorf("unknown feature %q (known: %s)", f, strings.Join(FeatureNames(), ", "))
			}
			out[Feature(f)] = true
		}
	}
	return out, nil
}

// sortedFeatures lists a feature set in a stable order.
func sortedFeatures(set map[Feature]bool) []Feature {
	out := make([]Feature, 0, len(set))
	for f, ok := range set {
		if ok {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}
