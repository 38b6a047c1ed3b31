package runtime

import (
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Level is a security level; the launch evaluator (runtime/launch) owns
// what each level demands.
type Level = launch.Level

const (
	LevelDegraded = launch.Degraded
	LevelStandard = launch.Standard
	LevelStrict   = launch.Strict
)

// ParseLevel reads "strict", "standard" or "degraded".
func ParseLevel(s string) (Level, error) {
	l, err := launch.ParseLevel(s)
	if err != nil {
		return 0, WithKind(ErrInvalidInput, err)
	}
	return l, nil
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
	FeatureLandlock   = launch.FeatureLandlock
	FeatureNetwork    = launch.FeatureNetwork
	FeatureLimits     = launch.FeatureLimits
	FeatureCgroupKill = launch.FeatureCgroupKill
	FeatureVerify     = launch.FeatureVerify
	FeatureCleanup    = launch.FeatureCleanup
	FeatureNoNewPrivs = launch.FeatureNoNewPrivs
)

// ParseFeatures reads --allow-degraded values (comma-separated, repeatable).
func ParseFeatures(values []string) (map[launch.Feature]bool, error) {
	fs, err := launch.ParseFeatures(values)
	if err != nil {
		return nil, Errorf(ErrInvalidInput, "--allow-degraded: %w", err)
	}
	return fs, nil
}

// Security is what the caller asked of a launch.
type Security struct {
	// Level from --security-level; LevelSet says the flag was given.
	Level    Level
	LevelSet bool
	// AllowDegraded names features that may be missing at standard.
	AllowDegraded map[launch.Feature]bool
	// DryRun compiles and checks everything and creates nothing.
	DryRun bool
	// NoVerify skips post-launch verification: a degradation of
	// FeatureVerify, refused at strict, at standard only when accepted.
	NoVerify bool
}
