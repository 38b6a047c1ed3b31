package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/runtime/sdnotify"
)

// Plan is what a launch will be, decided before anything exists: the
// evaluator's decision (level, degradations, posture, the Landlock
// ruleset) and the frozen spec.
type Plan struct {
	ID       string
	Backend  string
	Decision *launch.Decision
	frozen   *frozenSpec
	// platform is the backend's own translation's account (nil on
	// Linux): Verifies says create judges its containers' verdicts.
	platform *launch.Platform
}

// Level is the launch's security level.
func (p *Plan) Level() Level { return p.Decision.Level }

// Hash is the frozen spec's sha256.
func (p *Plan) Hash() string { return p.frozen.hash }

// LaunchLine is the one line every launch prints before the process runs
// (docs/security-levels.md).
func (p *Plan) LaunchLine() string {
	d := p.Decision
	return launchLine(fmt.Sprintf("sandbox: %s%s tier=%s net=%s level=%s spec=%s posture=%s", p.Backend, rootlessWord(d), d.Tier, d.Net, d.Level, shortHash(p.frozen.hash), postureWord(d.Posture)), d)
}

// DryRunLine is the launch line of a plan nothing enforces: no tier is
// claimed, since no sandbox was built to have one.
func (p *Plan) DryRunLine() string {
	d := p.Decision
	return launchLine(fmt.Sprintf("sandbox: %s%s tier=unknown(dry-run) net=%s level=%s spec=%s posture=%s NOT ENFORCED", p.Backend, rootlessWord(d), d.Net, d.Level, shortHash(p.frozen.hash), postureWord(d.Posture)), d)
}

// rootlessWord marks the launch line of a runtime without root on the
// host.
func rootlessWord(d *launch.Decision) string {
	if d.Rootless {
		return " rootless"
	}
	return ""
}

func postureWord(p launch.Posture) string {
	if p.Isolated() {
		return "isolated"
	}
	return "weakened"
}

func launchLine(head string, d *launch.Decision) string {
	if !d.Posture.Isolated() {
		head += " weakened: " + strings.Join(d.Posture.Weakened, ", ") + ";"
	}
	if len(d.Degraded) > 0 {
		head += " degraded: " + strings.Join(d.DegradedStrings(), "; ")
	}
	if len(d.Notes) > 0 {
		head += " notes: " + strings.Join(d.Notes, "; ")
	}
	return strings.TrimSuffix(head, ";")
}

// plan decides a launch from the effective spec and the caller's request
// through the launch evaluator, and freezes the spec. A refusal is an
// error whose kind is the evaluator's worst violation: ErrFloorForbids
// (126), ErrInvalidInput (1), ErrBackendUnavailable or ErrDegradedRefused
// (125), listing every violation.
func (r *Runtime) plan(opts CreateOptions, bundle string, s *specs.Spec) (*Plan, error) {
	id, sec, systemd := opts.ID, opts.Security, opts.SystemdCgroup
	host, err := r.launchHost(id, bundle, s, systemd)
	if err != nil {
		return nil, err
	}
	if opts.PidFile != "" {
		if abs, err := filepath.Abs(opts.PidFile); err == nil {
			host.PidFile = realAsFar(abs)
			host.ExecutableLinks = append(host.ExecutableLinks, symlinksOnPath("pid file", abs)...)
		}
	}
	if host.Platform, err = r.platformFacts(opts, bundle, s); err != nil {
		return nil, err
	}
	if host.Passed, err = examinePassed(opts.ListenFDs, opts.PreserveFDs); err != nil {
		return nil, err
	}
	// A platform whose containers report host-fact verdicts is verified
	// through them; without any, the evaluator names the verify
	// degradation.
	host.Facts = host.Facts || host.Platform != nil && host.Platform.Verifies
	d := launch.Evaluate(launch.Request{
		Spec: s, Level: sec.Level, LevelSet: sec.LevelSet, Allow: sec.AllowDegraded,
		NoVerify: sec.NoVerify, Environ: r.Environ,
	}, host, r.Config.floor())
	if !d.OK() {
		return nil, refusal(d.Level, d.Violations)
	}
	launch.Normalize(s)
	if opts.notifyDir != "" {
		// After the evaluation: the runtime's own mount (notify.go).
		addNotifySocket(s, opts.notifyDir)
		d.Notes = append(d.Notes, sdnotify.Env+" relayed: "+sdnotify.DirInContainer+" read-only in the container; only READY=1 is passed on")
	}
	frozen, err := freeze(s)
	if err != nil {
		return nil, err
	}
	return &Plan{ID: id, Backend: r.Backend.Name(), Decision: d, frozen: frozen, platform: host.Platform}, nil
}

// platformFacts asks a backend that translates the spec for its own
// platform what it refuses and degrades of this request (nil on Linux).
// Its containers' verdicts count as host facts for the evaluator: a
// backend that reports them is verified, one that does not is the verify
// degradation.
func (r *Runtime) platformFacts(opts CreateOptions, bundle string, s *specs.Spec) (*launch.Platform, error) {
	pb, ok := r.Backend.(PlatformBackend)
	if !ok || r.Facts != nil {
		return nil, nil
	}
	p, err := pb.Platform(&CreateRequest{
		ID: opts.ID, Dir: r.Store.BackendDir(opts.ID), Bundle: bundle, Spec: s,
		ConsoleSocket: opts.ConsoleSocket, ListenFDs: opts.ListenFDs, PreserveFDs: opts.PreserveFDs, SystemdCgroup: opts.SystemdCgroup,
		Foreground: opts.foreground, NoSubreaper: opts.noSubreaper,
	})
	if err != nil {
		return nil, fmt.Errorf("%s translation: %w", r.Backend.Name(), err)
	}
	return p, nil
}

// refusal turns the evaluator's violations into one error of the kind the
// exit-code table maps, naming every rule.
func refusal(level Level, vs launch.Violations) error {
	switch vs.Worst() {
	case launch.KindFloor:
		return Errorf(ErrFloorForbids, "forbidden: %s", vs)
	case launch.KindInput:
		return Errorf(ErrInvalidInput, "%s", vs)
	case launch.KindHost:
		return Errorf(ErrBackendUnavailable, "%s", vs)
	}
	return Errorf(ErrDegradedRefused, "level %s refuses this launch: %s", level, vs)
}

// launchHost gathers the host facts the evaluator needs for s.
func (r *Runtime) launchHost(id, bundle string, s *specs.Spec, systemd bool) (launch.Host, error) {
	h := launch.Host{Facts: r.Facts != nil, Sources: map[string]launch.Source{}}
	_, h.Relay = r.Backend.(RelayBackend)
	if _, ok := s.Annotations[AnnotationLandlock]; ok {
		h.LandlockABI, h.LandlockErr = r.landlockABI()
	}
	if lf, ok := r.Backend.(LaunchFacts); ok {
		h.AppArmor = lf.AppArmorEnabled()
		inUse, err := lf.CgroupInUse(s, id, systemd)
		if err != nil {
			return h, fmt.Errorf("cgroup of %q: %w", id, err)
		}
		h.CgroupInUse = inUse
		h.Cgroups = lf.Cgroups(s, id, systemd)
		if h.Cgroups.Rootless && h.Relay {
			// The relay is made by root: its sockets in the container's
			// network namespace (setns needs CAP_SYS_ADMIN in the
			// runtime's own user namespace) and its drop to an
			// unprivileged uid of the host.
			h.Relay, h.RelayMissing = false, "which a rootless runtime does not start (it needs root to make the relay's sockets and drop it to its own uid)"
		}
		if h.Cgroups.Rootless && launch.HasNewNamespace(s, specs.UserNamespace) {
			h.Userns = lf.UsernsRefusal()
		}
	}
	for _, m := range s.Mounts {
		if !isBindMount(m) || m.Source == "" {
			continue
		}
		h.Sources[m.Source] = sourceFact(m.Source)
	}
	if bundle != "" {
		h.Config = realOrSelf(filepath.Join(bundle, "config.json"))
	}
	if s.Root != nil {
		h.Rootfs = realOrSelf(s.Root.Path)
	}
	var err error
	if h.HookFiles, err = hookFiles(s); err != nil {
		return h, err
	}
	if r.Store.Root != "" {
		h.StateRoot = realOrSelf(r.Store.Root)
	}
	if r.Store.Evidence.Dir != "" {
		h.Evidence = realOrSelf(r.Store.Evidence.Dir)
	}
	if r.Self != "" {
		h.Executable = realOrSelf(r.Self)
	}
	if filepath.IsAbs(r.Invoked) {
		h.ExecutableLinks = symlinksOnPath("executable", r.Invoked)
	}
	if r.ConfigPath != "" {
		h.Floor = realAsFar(r.ConfigPath)
	}
	if r.Store.AuditLog != "" {
		h.AuditLog = realAsFar(r.Store.AuditLog)
	}
	if r.LogPath != "" {
		h.Log = realAsFar(r.LogPath)
		h.ExecutableLinks = append(h.ExecutableLinks, symlinksOnPath("log", r.LogPath)...)
	}
	return h, nil
}

func isBindMount(m specs.Mount) bool {
	if m.Type == "bind" {
		return true
	}
	for _, o := range m.Options {
		if o == "bind" || o == "rbind" {
			return true
		}
	}
	return false
}

// sourceFact reads what a bind source is, without following a final
// symlink for its kind but with every symlink resolved for its real path
// (the mount follows them).
func sourceFact(p string) launch.Source {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return launch.Source{Real: filepath.Clean(p), Kind: launch.SourceMissing}
		}
		return launch.Source{Real: filepath.Clean(p)}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return launch.Source{Real: real}
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return launch.Source{Real: real, Kind: launch.SourceDir}
	case m&os.ModeSocket != 0:
		return launch.Source{Real: real, Kind: launch.SourceSocket}
	case m&os.ModeDevice != 0:
		return launch.Source{Real: real, Kind: launch.SourceDevice}
	}
	return launch.Source{Real: real, Kind: launch.SourceFile}
}

func realOrSelf(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

func (r *Runtime) landlockABI() (int, error) {
	if r.LandlockABI != nil {
		return r.LandlockABI()
	}
	return landlock.HostABI()
}

// maxPassedFDs bounds the fds a caller can pass: a process's fd numbers
// stay below fs.nr_open, whose default is 1048576, and a larger
// --preserve-fds would only have the runtime allocate for fds that
// cannot exist.
const maxPassedFDs = 1 << 20

// examinePassed says what each file passed in besides stdio is: the
// listen fds first, then the preserved ones (hooks.PassedRange). An fd the
// caller did not pass is bad input, named by the flag or variable that
// asked for it.
func examinePassed(listen, preserve int) ([]hooks.PassedFD, error) {
	if listen+preserve == 0 {
		return nil, nil
	}
	if listen > maxPassedFDs || 3+listen > maxPassedFDs {
		return nil, Errorf(ErrInvalidInput, "LISTEN_FDS=%d: more fds than a process can have open (%d, fs.nr_open's default)", listen, maxPassedFDs)
	}
	if preserve > maxPassedFDs || 3+listen+preserve > maxPassedFDs {
		return nil, Errorf(ErrInvalidInput, "--preserve-fds=%d: more fds than a process can have open (%d, fs.nr_open's default)", preserve, maxPassedFDs)
	}
	passed := hooks.ExaminePassed(hooks.PassedRange(listen, preserve))
	for _, p := range passed {
		if !p.NotPassed {
			continue
		}
		if p.FD < 3+listen {
			return nil, Errorf(ErrInvalidInput, "LISTEN_FDS=%d: fd %d is not open", listen, p.FD)
		}
		return nil, Errorf(ErrInvalidInput, "--preserve-fds=%d: fd %d is not open", preserve, p.FD)
	}
	return passed, nil
}
