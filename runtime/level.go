package runtime

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// Level is how much enforcement a launch demands (DESIGN.md §4).
type Level int

const (
	// LevelDegraded runs with what the host can give; every missing piece
	// is named on the launch line, in state and in the audit log.
	LevelDegraded Level = iota
	// LevelStandard applies everything the bundle asks for, exactly; a
	// missing piece is refused unless --allow-degraded names it.
	LevelStandard
	// LevelStrict also demands the full sandbox of DESIGN.md §4 and allows
	// no degradation at all.
	LevelStrict
)

var levelNames = map[Level]string{LevelDegraded: "degraded", LevelStandard: "standard", LevelStrict: "strict"}

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
	return 0, Errorf(ErrInvalidInput, "unknown security level %q (want strict, standard or degraded)", s)
}

// Annotations vetto-runtime reads from a bundle, as the policy compiler
// writes them. The OCI spec has no fields for these; other runtimes ignore
// them, which is why vetto verifies.
const (
	AnnotationLevel         = spec.AnnotationLevel
	AnnotationNet           = spec.AnnotationNet
	AnnotationLandlock      = spec.AnnotationLandlock
	AnnotationAllowDegraded = spec.AnnotationAllowDegraded
)

// Degradable features, as named by --allow-degraded.
const (
	FeatureLandlock   = "landlock"
	FeatureNetwork    = "network"
	FeatureLimits     = "limits"
	FeatureCgroupKill = "cgroup-kill"
)

var knownFeatures = map[string]string{
	FeatureLandlock:   "Landlock rights (dev.vetto.landlock) the host's Landlock ABI cannot enforce; the rest is enforced",
	FeatureNetwork:    "a network allowlist (dev.vetto.net) that needs the relay; the container gets no network instead",
	FeatureLimits:     "memory/pids limits the cgroup does not show",
	FeatureCgroupKill: "cgroup.kill for teardown (kernel < 5.14 or no cgroup v2)",
}

// ParseFeatures reads --allow-degraded values (comma-separated, repeatable).
func ParseFeatures(values []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, v := range values {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if _, ok := knownFeatures[f]; !ok {
				names := make([]string, 0, len(knownFeatures))
				for n := range knownFeatures {
					names = append(names, n)
				}
				sort.Strings(names)
				return nil, Errorf(ErrInvalidInput, "--allow-degraded: unknown feature %q (known: %s)", f, strings.Join(names, ", "))
			}
			out[f] = true
		}
	}
	return out, nil
}

// Security is what the caller asked of a launch.
type Security struct {
	// Level from --security-level; LevelSet says the flag was given.
	Level    Level
	LevelSet bool
	// AllowDegraded names features that may be missing at standard.
	AllowDegraded map[string]bool
	// DryRun compiles and checks everything and creates nothing.
	DryRun bool
	// NoVerify skips post-launch verification (for measuring its cost):
	// refused at strict, recorded as a degradation elsewhere.
	NoVerify bool
}

// decideLevel combines the flag and the bundle's annotation. Where both
// are set the stricter wins: a bundle may raise its own bar but cannot
// lower one the caller set, and a caller's "degraded" does not lower a
// bundle that asks for strict.
func decideLevel(sec Security, annotations map[string]string) (Level, error) {
	level := LevelStandard
	if sec.LevelSet {
		level = sec.Level
	}
	if a, ok := annotations[AnnotationLevel]; ok {
		al, err := ParseLevel(a)
		if err != nil {
			return 0, Errorf(ErrInvalidInput, "annotation %s: %w", AnnotationLevel, err)
		}
		if !sec.LevelSet || al > level {
			level = al
		}
	}
	return level, nil
}
