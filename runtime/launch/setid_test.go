package launch

import (
	goruntime "runtime"
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// Which seccomp filters let a call set a set-id mode.
func TestSetIDUnguarded(t *testing.T) {
	allow := func(names []string, args ...specs.LinuxSeccompArg) specs.LinuxSyscall {
		return specs.LinuxSyscall{Names: names, Action: specs.ActAllow, Args: args}
	}
	modeMasked := func(i uint) specs.LinuxSeccompArg {
		return specs.LinuxSeccompArg{Index: i, Value: 0o6000, ValueTwo: 0, Op: specs.OpMaskedEqual}
	}
	guarded := []specs.LinuxSyscall{
		allow([]string{"chmod", "fchmod", "creat", "mknod"}, modeMasked(1)),
		allow([]string{"fchmodat", "fchmodat2", "mknodat"}, modeMasked(2)),
		allow([]string{"open"}, modeMasked(2)), allow([]string{"openat"}, modeMasked(3)),
		allow([]string{"openat"}, specs.LinuxSeccompArg{Index: 2, Value: 0o20000100, ValueTwo: 0, Op: specs.OpMaskedEqual}),
		{Names: []string{"openat2"}, Action: specs.ActErrno},
	}
	deny := func(rules ...specs.LinuxSyscall) *specs.LinuxSeccomp {
		return &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: rules}
	}
	tests := []struct {
		name string
		sc   *specs.LinuxSeccomp
		want []string
	}{
		{"no filter", nil, []string{"every call (no seccomp filter)"}},
		{"deny by default, none of them listed", deny(), nil},
		{"every call guarded", deny(guarded...), nil},
		{"allow by default: a guard on an allow rule guards nothing", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: guarded},
			[]string{"chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mknod", "mknodat", "open", "openat"}},
		{"allow by default, each refused outright", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mknod", "mknodat", "open", "openat", "openat2"}, Action: specs.ActErrno}}}, nil},
		{"chmod allowed outright", deny(append(slices.Clone(guarded), allow([]string{"chmod"}))...), []string{"chmod"}},
		{"a second condition on the mode is an alternative", deny(allow([]string{"fchmod"}, modeMasked(1), specs.LinuxSeccompArg{Index: 1, Value: 0, Op: specs.OpGreaterEqual})), []string{"fchmod"}},
		{"a condition on another argument does not guard the mode", deny(allow([]string{"fchmodat"}, modeMasked(1))), []string{"fchmodat"}},
		{"a mask without S_ISGID", deny(allow([]string{"chmod"}, specs.LinuxSeccompArg{Index: 1, Value: 0o4000, Op: specs.OpMaskedEqual})), []string{"chmod"}},
		{"an exact harmless mode", deny(allow([]string{"chmod"}, specs.LinuxSeccompArg{Index: 1, Value: 0o644, Op: specs.OpEqualTo})), nil},
		{"a mode below S_ISGID", deny(allow([]string{"chmod"}, specs.LinuxSeccompArg{Index: 1, Value: 0o2000, Op: specs.OpLessThan})), nil},
		{"a mode below S_ISUID lets S_ISGID through", deny(allow([]string{"chmod"}, specs.LinuxSeccompArg{Index: 1, Value: 0o4000, Op: specs.OpLessThan})), []string{"chmod"}},
		{"openat whose flags create nothing", deny(allow([]string{"openat"}, specs.LinuxSeccompArg{Index: 2, Value: 0o100, Op: specs.OpLessThan})), nil},
		{"openat2 allowed", deny(allow([]string{"openat2"})), []string{"openat2"}},
		{"logged is permitted", deny(specs.LinuxSyscall{Names: []string{"creat"}, Action: specs.ActLog}), []string{"creat"}},
		{"notified is permitted (the agent decides)", deny(specs.LinuxSyscall{Names: []string{"mknodat"}, Action: specs.ActNotify}), []string{"mknodat"}},
		{"errno is refused", deny(specs.LinuxSyscall{Names: []string{"chmod", "openat2"}, Action: specs.ActErrno}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := setIDUnguarded(tt.sc)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("setIDUnguarded = %q, want %q", got, tt.want)
			}
		})
	}
}

// vetto's own profile is the guard the rule asks for.
func TestVettoProfileGuardsSetID(t *testing.T) {
	sc, err := spec.SeccompProfile(goruntime.GOARCH)
	if err != nil {
		t.Skip(err)
	}
	if got := setIDUnguarded(sc); len(got) > 0 {
		t.Fatalf("vetto's profile lets %q set a set-id mode", got)
	}
}
