//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// buildSysprobe builds testdata/sysprobe, static, into dir.
func buildSysprobe(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sysprobe")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./testdata/sysprobe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build sysprobe: %v: %s", err, b)
	}
	return out
}

// parseProbe reads sysprobe's "name RESULT" lines.
func parseProbe(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			got[line[:i]] = line[i+1:]
		}
	}
	return got
}

// capNames are the capabilities by bit number (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// allCaps is every capability the test itself holds (its bounding set):
// what the seccomp control and the Landlock attack containers run with,
// so that neither missing capabilities nor the kernel's own permission
// checks are what stops a call. CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH
// must be among them.
func allCaps(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var bnd uint64
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			if bnd, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out []string
	for bit, name := range capNames {
		if bnd&(1<<bit) != 0 {
			out = append(out, name)
		}
	}
	if !slices.Contains(out, "CAP_SYS_ADMIN") || !slices.Contains(out, "CAP_DAC_READ_SEARCH") {
		t.Fatalf("the test needs CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH; bounding set %#x", bnd)
	}
	return out
}

func withAllCaps(t *testing.T) func(*specs.Spec) {
	caps := allCaps(t)
	return func(s *specs.Spec) {
		s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
	}
}

// vetto's seccomp profile, run for real: each call in the table gets the
// profile's answer inside a container compiled from a policy (with its
// Landlock rules and capabilities). The same program in the same bundle
// without the filter (all capabilities, no Landlock) is the control: there
// every refused call gets another answer from the kernel, so the refusal
// is the filter's, not the kernel's or a missing capability's.
func TestSeccompProfileTable(t *testing.T) {
	table := []struct{ call, want string }{
		{"ptrace", "EPERM"},
		{"process_vm_readv", "EPERM"},
		{"process_vm_writev", "EPERM"},
		{"pidfd_getfd", "EPERM"},
		{"kcmp", "EPERM"},
		{"io_uring_setup", "EPERM"},
		{"io_uring_enter", "EPERM"},
		{"io_uring_register", "EPERM"},
		{"userfaultfd", "EPERM"},
		{"bpf", "EPERM"},
		{"perf_event_open", "EPERM"},
		{"kexec_load", "EPERM"},
		{"kexec_file_load", "EPERM"},
		{"init_module", "EPERM"},
		{"finit_module", "EPERM"},
		{"delete_module", "EPERM"},
		{"mount", "EPERM"},
		{"umount2", "EPERM"},
		{"pivot_root", "EPERM"},
		{"move_mount", "EPERM"},
		{"fsopen", "EPERM"},
		{"fsconfig", "EPERM"},
		{"fsmount", "EPERM"},
		{"fspick", "EPERM"},
		{"open_tree", "EPERM"},
		{"mount_setattr", "EPERM"},
		{"chroot", "EPERM"},
		{"unshare(CLONE_NEWUSER)", "EPERM"},
		{"unshare(CLONE_NEWNS)", "EPERM"},
		{"setns", "EPERM"},
		{"clone(CLONE_NEWNS)", "EPERM"},
		{"clone(CLONE_NEWUSER)", "EPERM"},
		{"clone3", "ENOSYS"},
		{"keyctl", "EPERM"},
		{"add_key", "EPERM"},
		{"request_key", "EPERM"},
		{"open_by_handle_at", "EPERM"},
		{"name_to_handle_at", "EPERM"},
		{"personality(ADDR_NO_RANDOMIZE)", "EPERM"},
		{"socket(AF_VSOCK)", "EPERM"},
		// Allowed: positive controls.
		{"personality(query)", "OK"},
		{"personality(PER_LINUX)", "OK"},
		{"socket(AF_INET)", "OK"},
		{"landlock_create_ruleset(version)", "OK"},
		{"seccomp(GET_ACTION_AVAIL)", "OK"},
		{"getpid", "OK"},
		{"memfd_create", "OK"},
		{"pipe2", "OK"},
	}
	e := newEnv(t)
	p := filepath.Join(e.tmp, "project")
	buildSysprobe(t, p)
	bundle, _ := e.compilePolicy(`extends = "default"`+"\n", p, "./sysprobe syscalls")

	r := e.vetto(append(append([]string{"run"}, runFlags...), "--bundle", bundle, e.id())...)
	if r.code != 0 {
		t.Fatalf("sysprobe under vetto's profile: %s", r)
	}
	profiled := parseProbe(r.stdout)

	// The control: the same bundle, no filter, every capability, no
	// Landlock (which refuses mounts on its own).
	var s specs.Spec
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Linux.Seccomp == nil || s.Annotations["dev.vetto.landlock"] == "" {
		t.Fatalf("the compiled bundle has no seccomp profile or no Landlock rules")
	}
	s.Linux.Seccomp = nil
	delete(s.Annotations, "dev.vetto.landlock")
	delete(s.Annotations, "dev.vetto.level")
	withAllCaps(t)(&s)
	writeSpec(t, bundle, &s)
	r = e.vetto("run", "--bundle", bundle, e.id())
	if r.code != 0 {
		t.Fatalf("sysprobe without a filter: %s", r)
	}
	control := parseProbe(r.stdout)

	refusals, same := 0, []string(nil)
	for _, tt := range table {
		got, ok := profiled[tt.call]
		if !ok {
			t.Errorf("%s: not in sysprobe's output", tt.call)
			continue
		}
		t.Logf("%-34s profile %-7s control %s", tt.call, got, control[tt.call])
		if got != tt.want {
			t.Errorf("%s under vetto's profile: %s, want %s", tt.call, got, tt.want)
		}
		if tt.want != "OK" {
			refusals++
			if control[tt.call] == tt.want {
				// This kernel refuses it anyway (in the bundle's user
				// namespace, under lockdown): the row cannot tell.
				same = append(same, tt.call)
			}
		}
		if tt.want == "OK" && control[tt.call] != "OK" {
			t.Errorf("%s without the filter: %s", tt.call, control[tt.call])
		}
	}
	if len(same) > 0 {
		t.Logf("without the filter this kernel refuses these too, so their rows show nothing: %s", strings.Join(same, " "))
	}
	if refusals > 0 && len(same) > refusals/2 {
		t.Errorf("%d of %d refused calls are refused without the filter too: the table does not show the filter refusing", len(same), refusals)
	}
	if len(profiled) != len(table) {
		t.Errorf("sysprobe printed %d calls, the table has %d: keep them in step", len(profiled), len(table))
	}
}
