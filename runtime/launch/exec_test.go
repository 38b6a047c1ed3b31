package launch

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

func intp(v int) *int { return &v }

// The container's process: uid 1000, CAP_KILL in bounding only, AppArmor
// and SELinux confined, one rlimit.
func execBase() *specs.Process {
	return &specs.Process{
		User: specs.User{UID: 1000, GID: 1000}, Cwd: "/", NoNewPrivileges: true,
		Capabilities:    &specs.LinuxCapabilities{Bounding: []string{"CAP_KILL", "CAP_CHOWN"}, Effective: []string{"CAP_CHOWN"}, Permitted: []string{"CAP_CHOWN"}},
		ApparmorProfile: "vetto-default", SelinuxLabel: "system_u:system_r:container_t:s0",
		Rlimits:     []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
		OOMScoreAdj: intp(100),
	}
}

// TestExec pins 13.5: an exec'd process never gets more than the
// container's own.
func TestExec(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(p *specs.Process)
		rules []RuleID
	}{
		{"the container's own process", nil, nil},
		{"caps unset inherit the container's", func(p *specs.Process) { p.Capabilities = nil }, nil},
		{"--cap of a bounding-only capability (13.5)", func(p *specs.Process) {
			p.Capabilities.Effective = append(p.Capabilities.Effective, "CAP_KILL")
			p.Capabilities.Permitted = append(p.Capabilities.Permitted, "CAP_KILL")
		}, []RuleID{RuleExecCapabilities}},
		{"a capability outside every set", func(p *specs.Process) { p.Capabilities.Ambient = []string{"CAP_SYS_ADMIN"} }, []RuleID{RuleExecCapabilities}},
		{"fewer capabilities", func(p *specs.Process) { p.Capabilities.Effective = nil }, nil},
		{"drops no_new_privs", func(p *specs.Process) { p.NoNewPrivileges = false }, []RuleID{RuleExecNoNewPrivs}},
		{"--user 0 (13.5)", func(p *specs.Process) { p.User.UID = 0 }, []RuleID{RuleExecUser}},
		{"gid 0 through additional gids", func(p *specs.Process) { p.User.AdditionalGids = []uint32{0} }, []RuleID{RuleExecUser}},
		{"another unprivileged user", func(p *specs.Process) { p.User = specs.User{UID: 1001, GID: 1001} }, nil},
		{"--apparmor unconfined (13.5)", func(p *specs.Process) { p.ApparmorProfile = "unconfined" }, []RuleID{RuleExecAppArmor}},
		{"--process-label (13.5)", func(p *specs.Process) { p.SelinuxLabel = "system_u:system_r:spc_t:s0" }, []RuleID{RuleExecSELinux}},
		{"higher rlimit (13.5)", func(p *specs.Process) { p.Rlimits[0].Hard, p.Rlimits[0].Soft = 1<<20, 1<<20 }, []RuleID{RuleExecRlimits}},
		{"an rlimit the container does not set", func(p *specs.Process) {
			p.Rlimits = append(p.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_MEMLOCK", Hard: 1 << 40, Soft: 1 << 40})
		}, []RuleID{RuleExecRlimits}},
		{"lower rlimit", func(p *specs.Process) { p.Rlimits[0].Soft = 10 }, nil},
		{"oom_score_adj below the container's", func(p *specs.Process) { p.OOMScoreAdj = intp(-1000) }, []RuleID{RuleExecRlimits}},
		{"realtime scheduler", func(p *specs.Process) { p.Scheduler = &specs.Scheduler{Policy: "SCHED_FIFO", Priority: 99} }, []RuleID{RuleExecRlimits}},
		{"real-time I/O priority", func(p *specs.Process) { p.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_RT} }, []RuleID{RuleExecRlimits}},
		{"cwd through /proc/self/fd (CVE-2024-21626)", func(p *specs.Process) { p.Cwd = "/proc/self/fd/7" }, []RuleID{RuleExecCwd}},
		{"relative cwd", func(p *specs.Process) { p.Cwd = "../x" }, []RuleID{RuleExecCwd}},
		{"everything at once", func(p *specs.Process) {
			p.User.UID = 0
			p.NoNewPrivileges = false
			p.ApparmorProfile = "unconfined"
		}, []RuleID{RuleExecNoNewPrivs, RuleExecUser, RuleExecAppArmor}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := execBase()
			proc := execBase()
			if tt.edit != nil {
				tt.edit(proc)
			}
			vs := Exec(base, proc)
			var got []string
			for _, v := range vs {
				got = append(got, string(v.Rule))
			}
			if strings.Join(got, ",") != strings.Join(ids(tt.rules), ",") {
				t.Fatalf("violations %v, want %v", vs, tt.rules)
			}
			if proc.Capabilities == nil {
				t.Fatal("capabilities left unset: libcontainer would give the runtime's own")
			}
		})
	}
}

// A container whose process has no capabilities (unset means none) gives
// an exec none either.
func TestExecUnsetBase(t *testing.T) {
	base := &specs.Process{Cwd: "/"}
	proc := &specs.Process{Cwd: "/", Capabilities: &specs.LinuxCapabilities{Bounding: []string{"CAP_KILL"}}}
	if vs := Exec(base, proc); len(vs) != 1 || vs[0].Rule != RuleExecCapabilities {
		t.Fatalf("violations %v, want exec.capabilities", vs)
	}
	proc = &specs.Process{Cwd: "/"}
	if vs := Exec(base, proc); len(vs) != 0 {
		t.Fatal(vs)
	}
	if c := proc.Capabilities; c == nil || len(c.Bounding)+len(c.Effective)+len(c.Permitted) != 0 {
		t.Fatalf("capabilities %+v, want an empty set", c)
	}
}

// TestUpdate pins 13.4: an update may change a limit but not remove one.
func TestUpdate(t *testing.T) {
	had := Limits{Memory: i64(1 << 30), Pids: i64(100)}
	removeBoth := &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(-1)}, Pids: &specs.LinuxPids{Limit: i64(-1)}}
	tests := []struct {
		name     string
		level    Level
		allow    map[Feature]bool
		current  Limits
		res      *specs.LinuxResources
		floor    func(*Floor)
		rules    []RuleID
		degraded int
	}{
		{"raise at strict", Strict, nil, had, &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(2 << 30)}}, nil, nil, 0},
		{"remove at strict (13.4)", Strict, map[Feature]bool{FeatureLimits: true}, had, removeBoth, nil, []RuleID{RuleUpdateRemovesLimit, RuleUpdateRemovesLimit}, 0},
		{"remove at standard", Standard, nil, had, removeBoth, nil, []RuleID{RuleUpdateRemovesLimit, RuleUpdateRemovesLimit}, 0},
		{"remove at standard, accepted", Standard, map[Feature]bool{FeatureLimits: true}, had, removeBoth, nil, nil, 2},
		{"remove at degraded", Degraded, nil, had, removeBoth, nil, nil, 2},
		{"remove at degraded, floor forbids", Degraded, nil, had, removeBoth, func(f *Floor) { f.Forbid.Degradations = []string{"limits"} }, []RuleID{RuleFloorDegradations, RuleFloorDegradations}, 0},
		{"unlimited stays unlimited", Strict, nil, Limits{}, removeBoth, nil, nil, 0},
		// cgroup v2's unified files are written after the typed fields:
		// "max" there removes the limit whatever memory.limit says.
		{"remove through unified at strict", Strict, nil, had, &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(2 << 30)},
			Unified: map[string]string{"memory.max": "max", "pids.max": "max"}}, nil, []RuleID{RuleUpdateRemovesLimit, RuleUpdateRemovesLimit}, 0},
		{"remove through unified at standard", Standard, nil, had, &specs.LinuxResources{Unified: map[string]string{"pids.max": "max"}}, nil, []RuleID{RuleUpdateRemovesLimit}, 0},
		{"a memory limit no machine reaches at strict", Strict, nil, had, &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(9223372036854775807)}}, nil, []RuleID{RuleUpdateRemovesLimit}, 0},
		{"a pids limit no machine reaches at standard", Standard, nil, had, &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(4194304)}}, nil, []RuleID{RuleUpdateRemovesLimit}, 0},
		{"a limit no machine reaches, accepted at standard", Standard, map[Feature]bool{FeatureLimits: true}, had, &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(1 << 62)}}, nil, nil, 1},
		{"unified moves a process in", Degraded, nil, had, &specs.LinuxResources{Unified: map[string]string{"cgroup.procs": "1"}}, nil, []RuleID{RuleUnifiedInterface}, 0},
		{"raise through unified at strict", Strict, nil, had, &specs.LinuxResources{Unified: map[string]string{"memory.max": "2G"}}, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var floor *Floor
			if tt.floor != nil {
				floor = mustFloor(t, tt.floor)
			}
			d, next := Update(UpdateRequest{Level: tt.level, Allow: tt.allow, Current: tt.current, New: tt.res}, floor)
			var got []string
			for _, v := range d.Violations {
				got = append(got, string(v.Rule))
			}
			if strings.Join(got, ",") != strings.Join(ids(tt.rules), ",") || len(d.Degraded) != tt.degraded {
				t.Fatalf("violations %v degraded %v, want %v and %d", d.Violations, d.Degraded, tt.rules, tt.degraded)
			}
			if want, _ := spec.MemoryLimit(tt.res); want != nil && (next.Memory == nil || *next.Memory != *want) {
				t.Errorf("next memory %v, want %d", next.Memory, *want)
			}
			if want, _ := spec.PidsLimit(tt.res); want != nil && (next.Pids == nil || *next.Pids != *want) {
				t.Errorf("next pids %v, want %d", next.Pids, *want)
			}
		})
	}
}

func TestExecPassed(t *testing.T) {
	pipe := hooks.PassedFD{FD: 3, What: "a pipe", Channel: true}
	dir := hooks.PassedFD{FD: 4, What: "the directory /srv"}
	tests := []struct {
		name   string
		level  Level
		passed []hooks.PassedFD
		rules  []RuleID
		note   string
	}{
		{"nothing passed", Strict, nil, nil, ""},
		{"a pipe at strict", Strict, []hooks.PassedFD{pipe}, nil, ""},
		{"a directory at strict", Strict, []hooks.PassedFD{pipe, dir}, []RuleID{RuleStrictPassedFDs}, ""},
		{"a directory at standard is named", Standard, []hooks.PassedFD{pipe, dir}, nil, "host objects passed in: fd 4 (the directory /srv)"},
		{"a directory at degraded is named", Degraded, []hooks.PassedFD{dir}, nil, "host objects passed in: fd 4 (the directory /srv)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad, note := ExecPassed(tt.level, tt.passed)
			var got []string
			for _, v := range bad {
				got = append(got, string(v.Rule))
			}
			if strings.Join(got, ",") != strings.Join(ids(tt.rules), ",") || note != tt.note {
				t.Fatalf("ExecPassed: violations %v note %q, want %v and %q", bad, note, tt.rules, tt.note)
			}
		})
	}
}

// A typed limit of 0 in an update is what libcontainer makes of it: no
// write for memory (runc's "unchanged"), pids.max 1 for pids. Recorded as
// 0, the next verification dropped the limit's check while the cgroup
// kept a limit.
func TestUpdateZeroLimits(t *testing.T) {
	had := Limits{Memory: i64(1 << 28), Pids: i64(64)}
	tests := []struct {
		name      string
		res       *specs.LinuxResources
		mem, pids int64
	}{
		{"typed memory 0 leaves the limit", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(0)}}, 1 << 28, 64},
		{"typed pids 0 is pids.max 1", &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(0)}}, 1 << 28, 1},
		{"unified 0 is written as it is", &specs.LinuxResources{Unified: map[string]string{"memory.max": "0", "pids.max": "0"}}, 0, 0},
		{"a raise is recorded", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(1 << 30)}, Pids: &specs.LinuxPids{Limit: i64(128)}}, 1 << 30, 128},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, next := Update(UpdateRequest{Level: Strict, Current: had, New: tt.res}, nil)
			if len(d.Violations) > 0 {
				t.Fatalf("violations %v", d.Violations)
			}
			if next.Memory == nil || *next.Memory != tt.mem || next.Pids == nil || *next.Pids != tt.pids {
				t.Errorf("next limits memory %v pids %v, want %d and %d", optInt64(next.Memory), optInt64(next.Pids), tt.mem, tt.pids)
			}
		})
	}
}

func optInt64(p *int64) any {
	if p == nil {
		return "(unset)"
	}
	return *p
}

// exec's pid file where the container could write it is refused, as
// create's is.
func TestExecPidFile(t *testing.T) {
	bind := func(src, opt string) specs.Mount {
		return specs.Mount{Destination: "/m", Type: "bind", Source: src, Options: []string{"bind", opt}}
	}
	tests := []struct {
		name    string
		mounts  []specs.Mount
		rootRW  bool
		pidFile string
		links   []HookFile
		bad     bool
	}{
		{"out of every bind", []specs.Mount{bind("/srv/data", "rw")}, false, "/run/shim/exec.pid", nil, false},
		{"in a read-write bind", []specs.Mount{bind("/srv/data", "rw")}, false, "/srv/data/exec.pid", nil, true},
		{"in a read-only bind", []specs.Mount{bind("/srv/data", "ro")}, false, "/srv/data/exec.pid", nil, false},
		{"through a symlink in a read-write bind", []specs.Mount{bind("/srv/data", "rw")}, false, "/run/shim/exec.pid",
			[]HookFile{{What: "pid file (through the symlink /srv/data/ctr)", Real: "/srv/data/ctr"}}, true},
		{"in a writable root filesystem", nil, true, "/srv/box/run/exec.pid", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &specs.Spec{Root: &specs.Root{Path: "/srv/box", Readonly: !tt.rootRW}, Mounts: tt.mounts}
			bad := ExecPidFile(s, tt.pidFile, tt.links, map[string]Source{}, "/srv/box")
			if got := len(bad) > 0; got != tt.bad {
				t.Fatalf("ExecPidFile = %v, want refused %v", bad, tt.bad)
			}
			for _, v := range bad {
				if v.Rule != RuleRuntimeStateWrite {
					t.Errorf("rule %s, want %s", v.Rule, RuleRuntimeStateWrite)
				}
			}
		})
	}
}
