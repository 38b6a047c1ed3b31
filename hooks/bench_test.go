//go:build linux

package hooks

// Benchmarks of the pre-launch verification (issue 8): the host facts it
// reads from /proc and cgroupfs, and its judgement. They measure, never
// assert a time; `make bench` puts their numbers in docs/performance.md.
//
// The live process is a child of the test (sleep), read through ProcFacts
// as create reads a container's init. Run as root, the child gets a fresh
// cgroup in every hierarchy this process is in, as a container's init
// does, so cgroup.procs holds one pid; otherwise it stays in the test's
// cgroups, whose cgroup.procs list every process there and make the
// figure err high (the benchmark says so in its log). The child's
// capability sets and no_new_privs are copied into the spec so those
// checks pass as in a real launch. Its namespaces are the host's, so the
// five namespace checks say FAIL; that costs the same two stat(2) calls
// per namespace as a PASS.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func BenchmarkPreLaunch(b *testing.B) {
	pid, cgroups := liveInit(b)
	in := PreLaunchInput{Pid: pid, Spec: liveSpec(b, pid), CgroupPaths: cgroups}
	f := ProcFacts{}
	b.ReportAllocs()
	for b.Loop() {
		if res := PreLaunch(in, f); len(res) == 0 {
			b.Fatal("PreLaunch returned no results")
		}
	}
	b.ReportMetric(float64(len(PreLaunch(in, f))), "checks/op")
}

// BenchmarkProcStatus reads and parses /proc/<pid>/status, once per launch.
func BenchmarkProcStatus(b *testing.B) {
	pid := os.Getpid()
	f := ProcFacts{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Status(pid); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseStatus(b *testing.B) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseStatus(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckNamespaces is the namespace part of PreLaunch alone: two
// stat(2) calls per namespace, the host's on a locked thread.
func BenchmarkCheckNamespaces(b *testing.B) {
	pid := os.Getpid()
	want := liveSpec(b, pid).Linux.Namespaces
	f := ProcNamespaces{}
	b.ReportAllocs()
	for b.Loop() {
		if res := CheckNamespaces(pid, want, f); len(res) != len(want) {
			b.Fatalf("got %d results, want %d", len(res), len(want))
		}
	}
}

// liveSpec is the part of runc's default spec (what `vetto-runtime spec`
// writes, and what `make bench` runs) that PreLaunch reads, with pid's own
// capabilities and no_new_privs.
func liveSpec(tb testing.TB, pid int) *specs.Spec {
	tb.Helper()
	st, err := ProcFacts{}.Status(pid)
	if err != nil {
		tb.Fatal(err)
	}
	return &specs.Spec{
		Process: &specs.Process{
			NoNewPrivileges: st.NoNewPrivs == 1,
			Capabilities: &specs.LinuxCapabilities{
				Bounding: CapNames(st.CapBnd), Effective: CapNames(st.CapEff), Permitted: CapNames(st.CapPrm),
				Inheritable: CapNames(st.CapInh), Ambient: CapNames(st.CapAmb),
			},
		},
		Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{
			{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace},
			{Type: specs.UTSNamespace}, {Type: specs.MountNamespace},
		}},
	}
}

// liveInit starts a child that stands in for a container's init and
// returns its pid and cgroup directories. As root it moves the child into
// a fresh cgroup in each hierarchy, vetto-bench-<test pid>; the child and
// the cgroups go when the benchmark ends (scripts/bench.sh removes the
// empty ones of a benchmark that was killed).
func liveInit(b *testing.B) (int, map[string]string) {
	b.Helper()
	cmd := exec.Command("sleep", "3600")
	// If the benchmark is killed, the stand-in goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start stand-in init: %v", err)
	}
	pid := cmd.Process.Pid
	var made []string
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for i := len(made) - 1; i >= 0; i-- {
			if err := os.Remove(made[i]); err != nil {
				b.Errorf("remove benchmark cgroup: %v", err)
			}
		}
	})
	parents := selfCgroupPaths(b)
	if os.Geteuid() != 0 {
		b.Logf("not root: the stand-in init stays in the test's cgroups (cgroup.procs larger than a container's)")
		return pid, parents
	}
	fresh := map[string]string{}
	name := fmt.Sprintf("vetto-bench-%d", os.Getpid())
	for c, parent := range parents {
		dir := filepath.Join(parent, name)
		if _, ok := fresh[c]; ok {
			continue
		}
		if err := joinFreshCgroup(parent, dir, pid, &made); err != nil {
			b.Fatalf("cgroup %q: %v", c, err)
		}
		// Controllers mounted together (cpu,cpuacct) share a directory.
		for c2, p2 := range parents {
			if p2 == parent {
				fresh[c2] = dir
			}
		}
	}
	return pid, fresh
}

// joinFreshCgroup makes dir under parent (once) and moves pid into it. A
// v1 cpuset cgroup takes no task until it has cpus and mems, which it
// copies from its parent, as libcontainer does.
func joinFreshCgroup(parent, dir string, pid int, made *[]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		if !os.IsExist(err) {
			return err
		}
	} else {
		*made = append(*made, dir)
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		if v, err := os.ReadFile(filepath.Join(parent, f)); err == nil {
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// selfCgroupPaths maps each controller of /proc/self/cgroup to its
// directory, the shape CgroupPaths has for a container: v1 controllers by
// name (name=systemd as "systemd"), the v2 hierarchy as "".
func selfCgroupPaths(tb testing.TB) map[string]string {
	tb.Helper()
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		tb.Fatal(err)
	}
	const root = "/sys/fs/cgroup"
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls, path := parts[1], parts[2]
		if ctrls == "" {
			for _, mnt := range []string{filepath.Join(root, "unified"), root} {
				if _, err := os.Stat(filepath.Join(mnt, "cgroup.controllers")); err == nil {
					out[""] = filepath.Join(mnt, path)
					break
				}
			}
			continue
		}
		joined := strings.TrimPrefix(ctrls, "name=")
		for _, c := range strings.Split(joined, ",") {
			mnt := filepath.Join(root, c)
			if _, err := os.Stat(mnt); err != nil {
				mnt = filepath.Join(root, joined)
			}
			out[c] = filepath.Join(mnt, path)
		}
	}
	if len(out) == 0 {
		tb.Fatalf("no cgroup directory found for this process in %s", root)
	}
	return out
}
