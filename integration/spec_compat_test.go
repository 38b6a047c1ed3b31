//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// A seccomp profile that refuses statx, close_range and getcwd (an old
// allowlist knows none of the first two) still starts containers, with and
// without no_new_privs, and exec works in them. libcontainer v1.5.3 needs
// those calls after it has loaded the container's filter (fd cleanup,
// re-opening the exec fifo, the cwd check) and fails every create;
// third_party/runc's patch does that work before the filter.
func TestSeccompProfileWithoutModernSyscalls(t *testing.T) {
	eperm := uint(1)
	oldProfile := func(nnp bool) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Process.NoNewPrivileges = nnp
			s.Linux.Seccomp = &specs.LinuxSeccomp{
				DefaultAction: specs.ActAllow,
				Architectures: []specs.Arch{specs.ArchX86_64, specs.ArchAARCH64},
				Syscalls: []specs.LinuxSyscall{{
					Names:    []string{"statx", "close_range", "getcwd"},
					Action:   specs.ActErrno,
					ErrnoRet: &eperm,
				}},
			}
		}
	}
	for _, nnp := range []bool{false, true} {
		t.Run(map[bool]string{false: "without-nnp", true: "with-nnp"}[nnp], func(t *testing.T) {
			e := newEnv(t)
			r := e.vetto("run", "-b", e.bundle([]string{"echo", "ran"}, oldProfile(nnp)), e.id())
			if r.code != 0 || strings.TrimSpace(r.stdout) != "ran" {
				t.Fatalf("run under an old seccomp profile: %s", r)
			}

			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, oldProfile(nnp)), id)
			if r := e.vetto("exec", id, "echo", "exec ran"); r.code != 0 || strings.TrimSpace(r.stdout) != "exec ran" {
				t.Fatalf("exec under an old seccomp profile: %s", r)
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

// cgroup v1's device rules stand in the order the spec lists them, ahead
// of the defaults (config-linux.md: "The runtime MUST apply entries in the
// listed order").
func TestDeviceRulesInListedOrder(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	major, minor10, minor229 := int64(8), int64(10), int64(229)
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
		s.Linux.Resources.Devices = []specs.LinuxDeviceCgroup{
			{Allow: false, Access: "rwm"},
			{Allow: true, Type: "c", Major: &minor10, Minor: &minor229, Access: "rwm"},
			{Allow: true, Type: "b", Major: &major, Minor: &minor10, Access: "r"},
		}
	}), id)
	defer e.mustVetto("delete", "--force", id)

	dirs, _ := filepath.Glob("/sys/fs/cgroup/devices/vetto-runtime/" + id)
	if len(dirs) == 0 {
		t.Skip("no cgroup v1 devices controller: cgroup v2 keeps device rules in an eBPF program, with no list to order")
	}
	data, err := os.ReadFile(filepath.Join(dirs[0], "devices.list"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 3 || lines[0] != "c 10:229 rwm" || lines[1] != "b 8:10 r" {
		t.Fatalf("devices.list starts %q, want the spec's rules first, in order", lines)
	}
}

// Things the spec allows that libcontainer refuses on its own: a FIFO
// device with a major/minor (optional for "p", ignored by mknod), a bind
// mount with filesystem options (the kernel ignores them), a mount label
// on a host without SELinux.
func TestSpecAllowancesRun(t *testing.T) {
	major, minor := int64(8), int64(666)
	cases := []struct {
		name string
		args []string
		edit func(*specs.Spec)
		skip func() string
	}{
		{"fifo device with numbers", []string{"test", "-p", "/dev/vetto-fifo"}, func(s *specs.Spec) {
			s.Linux.Devices = append(s.Linux.Devices, specs.LinuxDevice{Path: "/dev/vetto-fifo", Type: "p", Major: major, Minor: minor})
		}, nil},
		{"bind mount with data", []string{"test", "-d", "/mnt/etc"}, func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/mnt/etc", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro", "mode=755", "size=1k"}})
		}, nil},
		{"mount label without selinux", []string{"true"}, func(s *specs.Spec) {
			s.Linux.MountLabel = "system_u:object_r:container_file_t:s0:c1,c2"
		}, func() string {
			if _, err := os.Stat("/sys/fs/selinux/enforce"); err == nil {
				return "SELinux is enabled here: the label is applied, not ignored"
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != nil {
				if why := c.skip(); why != "" {
					t.Skip(why)
				}
			}
			e := newEnv(t)
			if r := e.vetto("run", "-b", e.bundle(c.args, c.edit), e.id()); r.code != 0 {
				t.Fatalf("%s", r)
			}
		})
	}
}

// libcontainer drops kernel memory limits with a log line; vetto refuses a
// bundle that asks for one unless the limits degradation is accepted.
func TestKernelMemoryLimitRefused(t *testing.T) {
	e := newEnv(t)
	limit := int64(64 << 20)
	withKernelTCP := func(s *specs.Spec) {
		s.Linux.Resources.Memory = &specs.LinuxMemory{KernelTCP: &limit}
	}
	r := e.vetto("run", "-b", e.bundle([]string{"true"}, withKernelTCP), e.id())
	if r.code != 125 || !strings.Contains(r.stderr, "kernel memory limits requested") {
		t.Fatalf("kernelTCP at standard: %s; want exit 125 naming the limit", r)
	}
	if r := e.vetto("run", "--allow-degraded", "limits", "-b", e.bundle([]string{"true"}, withKernelTCP), e.id()); r.code != 0 {
		t.Fatalf("kernelTCP with --allow-degraded=limits: %s", r)
	}
}

// config.md 1.3: process is "REQUIRED when start is called". create builds
// a container without one; start refuses and stops it; run refuses before
// building anything.
func TestCreateWithoutProcess(t *testing.T) {
	e := newEnv(t)
	noProcess := func(s *specs.Spec) { s.Process = nil }
	id := e.id()
	e.mustVetto("create", "-b", e.bundle(nil, noProcess), id)
	if st := e.state(id); st["status"] != "created" {
		t.Fatalf("after create: %v", st["status"])
	}
	r := e.vetto("start", id)
	if r.code != 1 || !strings.Contains(r.stderr, "sets no process") {
		t.Fatalf("start without process: %s; want exit 1 saying why", r)
	}
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)

	id = e.id()
	if r := e.vetto("run", "-b", e.bundle(nil, noProcess), id); r.code != 1 || !strings.Contains(r.stderr, "process: must be set to run") {
		t.Fatalf("run without process: %s", r)
	}
	if r := e.vetto("state", id); r.code == 0 {
		t.Fatalf("run without process left a container: %s", r.stdout)
	}
}

// RLIMIT_AS below the init's own address space (a Go process reserves
// more than a GiB) together with a seccomp filter: libcontainer set the
// limit before the init built its filter, which then failed with ENOMEM.
// The limit now applies once the filter is loaded, before the process
// runs, and the process sees it.
func TestAddressSpaceLimitWithSeccomp(t *testing.T) {
	e := newEnv(t)
	limit := uint64(64 << 20)
	limited := func(s *specs.Spec) {
		s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_AS", Hard: limit, Soft: limit})
		// A filter of some size for three architectures, as Docker-era
		// profiles are: building it is what needs memory.
		s.Linux.Seccomp = &specs.LinuxSeccomp{
			DefaultAction: specs.ActAllow,
			Architectures: []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32},
			Syscalls:      []specs.LinuxSyscall{{Names: strings.Fields(rarelyUsedSyscalls), Action: specs.ActErrno}},
		}
	}
	r := e.vetto("run", "-b", e.bundle([]string{"sh", "-c", "ulimit -v"}, limited), e.id())
	if r.code != 0 || strings.TrimSpace(r.stdout) != "65536" {
		t.Fatalf("run with RLIMIT_AS 64 MiB and a seccomp filter: %s; want exit 0 and ulimit -v 65536 (KiB)", r)
	}

	// The init waits under the limit between create and start.
	id := e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"sleep", "100"}, limited), id)
	defer e.mustVetto("delete", "--force", id)
	time.Sleep(500 * time.Millisecond)
	e.mustVetto("start", id)
	e.waitStatus(id, "running")
	pid := int(e.state(id)["pid"].(float64))
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil || !strings.Contains(string(data), "Max address space         67108864             67108864") {
		t.Fatalf("limits of the running process (%v):\n%s", err, data)
	}
	// And it was verified (14.1): the canaries ran in the shim before the
	// limit was set, not in a Go probe that cannot start under it.
	if st := e.vettoState(id); st["verification"] != "PASS" || st["state"] != "VerifiedRuntime" {
		t.Fatalf("state %v, want VerifiedRuntime", st)
	}
}

// rarelyUsedSyscalls are refused by TestAddressSpaceLimitWithSeccomp's
// filter: nothing of the runtime's init or of busybox needs them.
const rarelyUsedSyscalls = `acct add_key adjtimex bpf clock_adjtime clock_settime create_module
delete_module finit_module get_kernel_syms get_mempolicy init_module ioperm iopl kcmp
kexec_file_load kexec_load keyctl lookup_dcookie mbind move_pages name_to_handle_at
nfsservctl open_by_handle_at perf_event_open process_vm_readv process_vm_writev ptrace
query_module quotactl reboot request_key set_mempolicy setdomainname settimeofday stime
swapoff swapon _sysctl sysfs uselib userfaultfd ustat vm86 vm86old afs_syscall break
fanotify_init ftime getpmsg gtty idle lock mpx prof profil putpmsg security stty tuxcall
ulimit vserver getegid32 geteuid32 getgid32 getuid32 setfsgid32 setfsuid32 setgid32
setuid32 setregid32 setreuid32 setresgid32 setresuid32 getresgid32 getresuid32 chown32
fchown32 lchown32 getgroups32 setgroups32 io_uring_setup io_uring_enter io_uring_register
fsopen fsmount fsconfig fspick move_mount open_tree mount_setattr pidfd_getfd`

// CVE-2024-21626's class through the patched init path (no no_new_privs,
// a seccomp filter: the cwd check now runs before the filter): an exec or
// a container whose cwd is one of the runtime's leaked fds, /proc/self/fd/N,
// never starts, so it never sees the host's root through "../../..".
func TestLeakedFdCwdRefused(t *testing.T) {
	e := newEnv(t)
	hostOnly := "vetto-host-only-" + e.id()
	if err := os.WriteFile(filepath.Join("/tmp", hostOnly), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join("/tmp", hostOnly))
	withFilter := func(s *specs.Spec) {
		s.Process.NoNewPrivileges = false
		s.Linux.Seccomp = &specs.LinuxSeccomp{
			DefaultAction: specs.ActAllow,
			Architectures: []specs.Arch{specs.ArchX86_64, specs.ArchAARCH64},
			Syscalls:      []specs.LinuxSyscall{{Names: []string{"kexec_load"}, Action: specs.ActErrno}},
		}
	}
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, withFilter), id)
	defer e.mustVetto("delete", "--force", id)
	look := "ls ../../../../tmp; ls ../../../tmp"
	for fd := 3; fd <= 12; fd++ {
		cwd := fmt.Sprintf("/proc/self/fd/%d", fd)
		if r := e.vetto("exec", "--cwd", cwd, id, "sh", "-c", look); r.code == 0 || strings.Contains(r.stdout, hostOnly) {
			t.Errorf("exec with cwd %s: %s; want it refused", cwd, r)
		}
		r := e.vetto("run", "-b", e.bundle([]string{"sh", "-c", look}, func(s *specs.Spec) {
			withFilter(s)
			s.Process.Cwd = cwd
		}), e.id())
		if r.code == 0 || strings.Contains(r.stdout, hostOnly) {
			t.Errorf("run with cwd %s: %s; want it refused", cwd, r)
		}
	}
}
