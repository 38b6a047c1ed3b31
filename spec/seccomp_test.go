package spec

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// allowRules returns every rule that allows name, conditional or not.
func allowRules(s *specs.LinuxSeccomp, name string) []specs.LinuxSyscall {
	var out []specs.LinuxSyscall
	for _, sc := range s.Syscalls {
		if sc.Action == specs.ActAllow && contains(sc.Names, name) {
			out = append(out, sc)
		}
	}
	return out
}

// The syscalls docs/policy.md and the issue name must never be allowed,
// not even under a condition; clone only without namespace flags.
func TestSeccompBlocks(t *testing.T) {
	s, err := SeccompProfile("amd64")
	if err != nil {
		t.Fatal(err)
	}
	named := []string{
		"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "bpf", "perf_event_open",
		"kexec_load", "kexec_file_load", "init_module", "finit_module",
		"mount", "umount2", "pivot_root", "move_mount", "fsopen", "open_tree",
		"unshare", "setns", "keyctl", "add_key", "request_key", "clone3",
	}
	for _, name := range append(named, seccompBlocked...) {
		if rules := allowRules(s, name); len(rules) > 0 {
			t.Errorf("%s is allowed: %+v", name, rules)
		}
	}
	for _, name := range seccompBlocked {
		if contains(seccompAllowed, name) {
			t.Errorf("%s is both allowed and blocked", name)
		}
	}
}

func TestSeccompClone(t *testing.T) {
	s, _ := SeccompProfile("amd64")
	rules := allowRules(s, "clone")
	if len(rules) != 1 || len(rules[0].Args) != 1 {
		t.Fatalf("clone rules %+v, want one with one argument condition", rules)
	}
	a := rules[0].Args[0]
	// CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME.
	for _, flag := range []uint64{0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000, 0x80} {
		if a.Value&flag == 0 {
			t.Errorf("clone mask %#x lacks %#x", a.Value, flag)
		}
	}
	if a.Index != 0 || a.Op != specs.OpMaskedEqual || a.ValueTwo != 0 {
		t.Errorf("clone condition %+v, want arg 0 & mask == 0", a)
	}
	if s390, _ := SeccompProfile("s390x"); allowRules(s390, "clone")[0].Args[0].Index != 1 {
		t.Error("s390x: clone flags are the second argument")
	}
	for _, sc := range s.Syscalls {
		if contains(sc.Names, "clone3") {
			if sc.Action != specs.ActErrno || sc.ErrnoRet == nil || *sc.ErrnoRet != errnoENOSYS {
				t.Errorf("clone3 rule %+v, want ENOSYS so libc falls back to clone", sc)
			}
		}
	}
}

func TestSeccompSockets(t *testing.T) {
	s, _ := SeccompProfile("amd64")
	families := map[uint64]bool{}
	for _, r := range allowRules(s, "socket") {
		if len(r.Args) != 1 || r.Args[0].Op != specs.OpMaskedEqual || r.Args[0].Value != 0xffffffff {
			t.Fatalf("socket rule %+v, want a masked compare of the lower 32 bits", r)
		}
		families[r.Args[0].ValueTwo] = true
	}
	for _, f := range []uint64{1, 2, 10, 16} {
		if !families[f] {
			t.Errorf("family %d not allowed", f)
		}
	}
	for _, f := range []uint64{17, 38, 40} { // AF_PACKET, AF_ALG, AF_VSOCK
		if families[f] {
			t.Errorf("family %d allowed", f)
		}
	}
	if contains(seccompAllowed, "socket") || contains(seccompAllowed, "personality") {
		t.Error("socket or personality allowed without a condition")
	}
}

func TestSeccompProfile(t *testing.T) {
	s, err := SeccompProfile("amd64")
	if err != nil {
		t.Fatal(err)
	}
	if s.DefaultAction != specs.ActErrno || s.DefaultErrnoRet == nil || *s.DefaultErrnoRet != errnoEPERM {
		t.Errorf("default action %s errno %v, want EPERM", s.DefaultAction, s.DefaultErrnoRet)
	}
	if len(s.Architectures) != 1 || s.Architectures[0] != specs.ArchX86_64 {
		t.Errorf("architectures %v, want only x86_64", s.Architectures)
	}
	// What a shell, git, go, python and gcc cannot start without.
	for _, name := range []string{"execve", "read", "write", "openat", "close", "mmap", "mprotect", "brk", "futex",
		"rt_sigaction", "rt_sigreturn", "wait4", "waitid", "pipe2", "dup2", "fcntl", "newfstatat", "statx", "getdents64",
		"exit_group", "sched_getaffinity", "getrandom", "epoll_pwait", "pidfd_open", "prlimit64", "vfork", "connect", "sendto", "restart_syscall"} {
		if len(allowRules(s, name)) == 0 {
			t.Errorf("%s is not allowed", name)
		}
	}
	seen := map[string]bool{}
	for _, name := range seccompAllowed {
		if seen[name] {
			t.Errorf("%s listed twice", name)
		}
		seen[name] = true
	}
	if arm, err := SeccompProfile("arm64"); err != nil || arm.Architectures[0] != specs.ArchAARCH64 {
		t.Errorf("arm64: %v %v", arm, err)
	}
	if _, err := SeccompProfile("mips"); err == nil {
		t.Error("a profile for an unknown architecture")
	}
}

// Every mode-carrying call is allowed only with a mode free of set-id
// bits (and open/openat also whenever they create nothing); none is
// allowed unconditionally, and openat2 is ENOSYS (12.2).
func TestSeccompSetIDModes(t *testing.T) {
	s, _ := SeccompProfile("amd64")
	for _, m := range modeArg {
		rules := allowRules(s, m.name)
		want := 1
		if m.flags >= 0 {
			want = 2
		}
		if len(rules) != want {
			t.Fatalf("%s: %d allow rules, want %d: %+v", m.name, len(rules), want, rules)
		}
		var sawMode bool
		for _, r := range rules {
			if len(r.Args) != 1 || r.Args[0].Op != specs.OpMaskedEqual || r.Args[0].ValueTwo != 0 {
				t.Fatalf("%s: rule %+v, want one masked compare with 0", m.name, r)
			}
			a := r.Args[0]
			switch {
			case int(a.Index) == m.mode && a.Value == 0o6000:
				sawMode = true
			case int(a.Index) == m.flags && a.Value&0o100 != 0 && a.Value&0o20000000 != 0:
			default:
				t.Errorf("%s: condition %+v is neither the mode's set-id bits nor the open flags", m.name, a)
			}
		}
		if !sawMode {
			t.Errorf("%s: no condition on the mode (argument %d)", m.name, m.mode)
		}
	}
	for _, sc := range s.Syscalls {
		if contains(sc.Names, "openat2") && (sc.Action != specs.ActErrno || sc.ErrnoRet == nil || *sc.ErrnoRet != errnoENOSYS) {
			t.Errorf("openat2 rule %+v, want ENOSYS", sc)
		}
	}
}
