//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Isolation-breaking flags of the clients (21): each runs at the default
// level with a weakened posture that names what it gives away — never a
// clean PASS — and the operator floor rule for it refuses it with 126.
// On ac83dfa each ran VerifiedRuntime/PASS with nothing said.
func TestClientPodmanPostureAndFloor(t *testing.T) {
	p := clientStartPodman(t)
	cases := []struct {
		name  string
		flags []string
		floor string // runtime.toml that refuses it
		rule  string
	}{
		{"privileged", []string{"--privileged"}, "[forbid]\nprivileged = true\n", "floor.forbid.privileged"},
		{"seccomp unconfined", []string{"--security-opt", "seccomp=unconfined"}, "[forbid]\nno_seccomp = true\n", "floor.forbid.no-seccomp"},
		{"cap-add ALL", []string{"--cap-add", "ALL"}, "[forbid]\nprivileged = true\n", "floor.forbid.privileged"},
		{"host pid", []string{"--pid", "host"}, "[forbid]\nhost_namespaces = true\n", "floor.forbid.host-namespaces"},
		{"host network", []string{"--network", "host"}, "[forbid]\nhost_namespaces = true\n", "floor.forbid.host-namespaces"},
		{"bind of /", []string{"-v", "/:/host"}, "[allow]\nbind_sources = [\"/srv/vetto-none\"]\n", "floor.allow.bind-sources"},
		{"unmask=ALL", []string{"--security-opt", "unmask=ALL"}, "[require]\ndefault_masks = true\n", "floor.require.default-masks"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.TrimSpace(p.mustPodman(append(append([]string{"--runtime", binary, "run", "-d"}, tc.flags...), "--rootfs", p.rootfs, "sleep", "100")...).stdout)
			st := clientVettoState(t, p.dir, "", id)
			v, _ := st["vetto"].(map[string]any)
			line, _ := v["launchLine"].(string)
			if v["posture"] != "weakened" || len(fmt.Sprint(v["weakened"])) < 3 || !strings.Contains(line, "posture=weakened") {
				t.Errorf("podman run %v: posture %v %v, launch line %q; want weakened, named", tc.flags, v["posture"], v["weakened"], line)
			}
			p.mustPodman("rm", "-f", "-t", "0", id)

			dir := filepath.Join(p.dir, fmt.Sprint("floor-", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			rt := configuredRuntime(t, dir, tc.floor)
			r := p.podman(append(append([]string{"--runtime", rt, "run", "--rm"}, tc.flags...), "--rootfs", p.rootfs, "true")...)
			if r.code != 126 || !strings.Contains(r.stderr, "["+tc.rule+"]") {
				t.Errorf("podman run %v under a floor with %q: %s; want 126 naming [%s]", tc.flags, tc.floor, r, tc.rule)
			}
		})
	}
}

// The same under containerd: ctr run --privileged and a read-write bind
// of / are weakened, and refused by the floor.
func TestClientContainerdPostureAndFloor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		floor string
		rule  string
	}{
		{"privileged", []string{"--privileged"}, "[forbid]\nprivileged = true\n", "floor.forbid.privileged"},
		{"bind of /", []string{"--mount", "type=bind,src=/,dst=/host,options=rbind:rw"}, "[allow]\nbind_sources = [\"/srv/vetto-none\"]\n", "floor.allow.bind-sources"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clientStartContainerd(t, "")
			id := c.newID("weak")
			c.mustCtr(c.run(append([]string{"-d"}, tc.flags...), id, "sleep", "100")...)
			st := clientVettoState(t, c.dir, c.vettoRoot(c.ns), id)
			if v, _ := st["vetto"].(map[string]any); v["posture"] != "weakened" {
				t.Errorf("ctr run %v: posture %v, want weakened", tc.flags, v["posture"])
			}
			c.mustCtr("task", "kill", "-s", "KILL", id)
			c.waitTask(id, "STOPPED")
			c.mustCtr("task", "rm", id)
			c.mustCtr("containers", "rm", id)

			c.runtime = configuredRuntime(t, c.dir, tc.floor)
			refused := c.newID("refused")
			r := c.ctr(c.run(append([]string{"--rm"}, tc.flags...), refused, "true")...)
			if r.code == 0 || !strings.Contains(r.stderr, "["+tc.rule+"]") {
				t.Errorf("ctr run %v under a floor: %s; want a refusal naming [%s]", tc.flags, r, tc.rule)
			}
			c.assertDeleted(refused)
		})
	}
}

// One reading of config.json (21): duplicate keys and keys that differ
// from the spec's only by case are refused at every level, naming the key,
// with nothing left. On ac83dfa both ran (Go's decoder took the last, and
// the case-variant key as the field).
func TestConfigKeysReadOneWay(t *testing.T) {
	for _, tc := range []struct{ name, edit, want string }{
		{"duplicate key", `"noNewPrivileges": true, "noNewPrivileges": false,`, "process.noNewPrivileges appears twice"},
		{"case-variant key", `"NoNewPrivileges": false,`, "process.NoNewPrivileges is the spec's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b := e.bundle([]string{"true"}, nil)
			cfg := filepath.Join(b, "config.json")
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Replace(string(data), `"process": {`, `"process": {`+tc.edit, 1)
			if text == string(data) {
				t.Fatal("the bundle has no process object to edit")
			}
			if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			id := e.id()
			r := e.vetto("run", "-b", b, id)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("run: %s; want exit 1, one line naming %q", r, tc.want)
			}
			e.assertNothingLeft(id)
		})
	}
}

// A config.json over the bound is refused before it is read (21: 256 MiB
// cost 4.25 GB and 35 s).
func TestConfigTooLarge(t *testing.T) {
	e := newEnv(t)
	b := e.bundle([]string{"true"}, nil)
	f, err := os.OpenFile(filepath.Join(b, "config.json"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	r := e.vetto("run", "-b", b, e.id())
	if r.code != 1 || !strings.Contains(r.stderr, "over the") {
		t.Fatalf("run of a 256 MiB config.json: %s; want exit 1 naming the bound", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusing a 256 MiB config.json took %s", d)
	}
}

// The runtime's own files cannot be turned against it (21): a state root
// another user can write is refused before any record in it is believed,
// and --log and --audit-log do not follow a symlink planted at their name.
// On ac83dfa root trusted the planted record and appended to the victim.
func TestRuntimeFilesNotTurnedAgainstIt(t *testing.T) {
	e := newEnv(t)
	// A root owned by another user (uid 4242), holding a planted record.
	root := filepath.Join(e.tmp, "userroot")
	planted := filepath.Join(root, "planted")
	if err := os.MkdirAll(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{"id": "planted", "state": "Running", "bundle": "/", "backend": "linux"})
	if err := os.WriteFile(filepath.Join(planted, "vetto.json"), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{root, planted, filepath.Join(planted, "vetto.json")} {
		if err := os.Chown(p, 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"state", "planted"}, {"delete", "--force", "planted"}, {"list"}} {
		r := e.runCmd(exec.Command(binary, append([]string{"--root", root}, args...)...))
		if r.code != 1 || !strings.Contains(r.stderr, "owned by uid 4242") {
			t.Errorf("%v in a root uid 4242 owns: %s; want exit 1 refusing the root", args, r)
		}
	}
	// A root others may write.
	open := filepath.Join(e.tmp, "openroot")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(open, 0o777)
	if r := e.runCmd(exec.Command(binary, "--root", open, "list")); r.code != 1 || !strings.Contains(r.stderr, "others could plant records") {
		t.Errorf("list in a 0777 root: %s; want exit 1", r)
	}

	// --log and --audit-log planted as symlinks to a victim file.
	victim := filepath.Join(e.tmp, "victim")
	if err := os.WriteFile(victim, []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--log", "--audit-log"} {
		link := filepath.Join(e.tmp, "link"+flag)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		id := e.id()
		r := e.vetto(flag, link, "run", "-b", e.bundle([]string{"true"}, nil), id)
		if r.code == 0 {
			t.Errorf("run %s <symlink>: %s; want a refusal", flag, r)
		}
		e.vetto("delete", "--force", id)
	}
	if data, _ := os.ReadFile(victim); string(data) != "untouched\n" {
		t.Fatalf("the victim behind the planted symlinks was written: %q", data)
	}
}

// A container that can write the runtime's own state root rewrites its
// record, and the runtime's later commands, run as root, act on what it
// wrote: here the cgroup paths of its record name a host cgroup holding a
// victim process, and root's delete --force kills the victim (cgroup.kill)
// and removes its cgroup. The bundle's bind looks innocuous (a directory
// above a custom --root, or the root itself), so the posture said nothing.
// On 824f1a7 the victim was killed; every level refuses such a bundle now,
// before anything is built.
func TestRuntimeStateNotWritableByContainer(t *testing.T) {
	unified := "/sys/fs/cgroup"
	if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.procs"); err == nil {
		unified = "/sys/fs/cgroup/unified"
	}
	for _, tc := range []struct {
		name   string
		source func(e *env) string
	}{
		{"the state root", func(e *env) string { return e.root }},
		{"a directory above it", func(e *env) string { return filepath.Dir(e.root) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			// A --root of its own, below a directory the bundle is not in.
			e.root = filepath.Join(e.tmp, "runtime", "state")
			if err := os.MkdirAll(e.root, 0o700); err != nil {
				t.Fatal(err)
			}
			victimCg := filepath.Join(unified, "vetto-victim-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(int(time.Now().UnixNano()%100000)))
			if err := os.Mkdir(victimCg, 0o755); err != nil {
				t.Skipf("no cgroup for the victim: %v", err)
			}
			victim := exec.Command("sleep", "600")
			if err := victim.Start(); err != nil {
				t.Fatal(err)
			}
			died := make(chan struct{})
			go func() { _ = victim.Wait(); close(died) }()
			dead := func() bool {
				select {
				case <-died:
					return true
				case <-time.After(200 * time.Millisecond):
					return false
				}
			}
			t.Cleanup(func() {
				_ = victim.Process.Kill()
				<-died
				_ = os.Remove(victimCg)
			})
			if err := os.WriteFile(filepath.Join(victimCg, "cgroup.procs"), []byte(strconv.Itoa(victim.Process.Pid)), 0o644); err != nil {
				t.Fatal(err)
			}
			id := e.id()
			src := tc.source(e)
			rel, err := filepath.Rel(src, e.root)
			if err != nil {
				t.Fatal(err)
			}
			state := filepath.Join("/mnt", rel, id)
			// Rewritten again and again: the runtime's own rounds write the
			// record back.
			script := fmt.Sprintf(`while :; do sed -i "s#%[2]s/vetto-runtime/%[3]s#%[4]s#g" %[1]s/vetto.json %[1]s/backend/state.json 2>/dev/null; sleep 0.1; done`, state, unified, id, victimCg)
			b := e.bundle([]string{"sh", "-c", script}, func(s *specs.Spec) {
				s.Mounts = append(s.Mounts, specs.Mount{Destination: "/mnt", Type: "bind", Source: src, Options: []string{"rbind", "rw"}})
			})
			r := e.vetto("run", "-d", "-b", b, id)
			if r.code == 0 {
				// The attack goes ahead: the container rewrites its
				// record, then root deletes it.
				time.Sleep(3 * time.Second)
				d := e.vetto("delete", "--force", id)
				if dead() {
					t.Errorf("root's delete of a container that rewrote its own record killed a host process in %s (%s)", victimCg, d)
				}
				t.Fatalf("run with a read-write bind of %s (%s): %s; want a refusal", tc.name, src, r)
			}
			if r.code != 125 || !strings.Contains(r.stderr, "[bundle.runtime-state-writable]") || !strings.Contains(r.stderr, "state root") {
				t.Errorf("run: %s; want 125 naming [bundle.runtime-state-writable] and the state root", r)
			}
			e.assertNothingLeft(id)
			if dead() {
				t.Errorf("the victim died")
			}
		})
	}
}

// state of a container whose process exited says so (21: it kept saying
// VerifiedRuntime).
func TestStateOfExitedContainer(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "0.3"}, nil), id)
	defer e.vetto("delete", "--force", id)
	e.waitStatus(id, "stopped")
	st := e.vettoState(id)
	if st["state"] != "Exited" || st["lastState"] != "VerifiedRuntime" {
		t.Fatalf("state of an exited container: %v; want Exited, lastState VerifiedRuntime", st)
	}
}

// strict means isolated by itself (21): each isolation-breaking field on
// an otherwise strict bundle is refused at strict with its rule (125),
// and by the matching floor rule at standard (126); nothing is left. On
// ac83dfa the proc2 mount, the block device and the hooks ran at strict
// under every floor rule there was.
func TestStrictRefusals(t *testing.T) {
	major, minor := int64(7), int64(0) // loop0: a host block device
	cases := []struct {
		name        string
		edit        func(*specs.Spec)
		rule, floor string
		floorRule   string
	}{
		{"second proc mount", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/proc2", Type: "proc", Source: "proc"})
		}, "strict.mounts.kernel", "[forbid]\nextra_kernel_mounts = true\n", "floor.forbid.extra-kernel-mounts"},
		{"host block device", func(s *specs.Spec) {
			s.Linux.Devices = append(s.Linux.Devices, specs.LinuxDevice{Path: "/dev/hostdisk", Type: "b", Major: major, Minor: minor})
			s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, specs.LinuxDeviceCgroup{Allow: true, Type: "b", Major: &major, Minor: &minor, Access: "rw"})
		}, "strict.devices", "[forbid]\ndevices = true\n", "floor.forbid.devices"},
		{"bind of host /etc", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/host-etc", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro"}})
		}, "strict.mounts.bind-source", "[allow]\nbind_sources = [\"/srv/vetto-none\"]\n", "floor.allow.bind-sources"},
		{"bundle hook", func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/true"}}}
		}, "strict.hooks", "[forbid]\nhooks = true\n", "floor.forbid.hooks"},
		{"fewer masks", func(s *specs.Spec) { s.Linux.MaskedPaths = nil }, "strict.masks.default", "[require]\ndefault_masks = true\n", "floor.require.default-masks"},
		{"host sysctl", func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"kernel.core_pattern": "|/tmp/x"}
		}, "strict.sysctl.host", "[forbid]\nhost_sysctls = true\n", "floor.forbid.host-sysctls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b := e.bundle([]string{"true"}, edits(strictSpec, tc.edit))
			id := e.id()
			r := e.vetto("run", "--security-level", "strict", "-b", b, id)
			if r.code != 125 || !strings.Contains(r.stderr, "["+tc.rule+"]") {
				t.Fatalf("strict run: %s; want 125 naming [%s]", r, tc.rule)
			}
			e.assertNothingLeft(id)
			conf := filepath.Join(e.tmp, "floor.toml")
			if err := os.WriteFile(conf, []byte(tc.floor), 0o644); err != nil {
				t.Fatal(err)
			}
			id = e.id()
			r = e.vetto("--config", conf, "run", "-b", b, id)
			if r.code != 126 || !strings.Contains(r.stderr, "["+tc.floorRule+"]") {
				t.Fatalf("run under a floor with %q: %s; want 126 naming [%s]", tc.floor, r, tc.floorRule)
			}
			e.assertNothingLeft(id)
		})
	}
}

// A strict bundle whose filter hands keyctl, bpf and userfaultfd to a
// seccomp notify agent: libcontainer sends the filter's fd to the host
// socket linux.seccomp.listenerPath names, and that agent may let the
// calls run (SECCOMP_USER_NOTIF_FLAG_CONTINUE) — strict's filter rules
// counted only allow rules, and passed it. The agent here is the test's
// own listener: at strict it must get nothing; at standard the run goes
// ahead and the posture names the agent.
func TestStrictSeccompAgentRefused(t *testing.T) {
	e := newEnv(t)
	sock := filepath.Join(e.tmp, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan bool, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			got <- true
			// Take the message (the state and the filter's fd) before
			// closing: the runtime's send fails on a closed socket.
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	b := e.bundle([]string{"true"}, edits(strictSpec, func(s *specs.Spec) {
		s.Linux.Seccomp.ListenerPath = sock
		// A copy: the profile's syscalls are shared with every test.
		s.Linux.Seccomp.Syscalls = append(slices.Clone(s.Linux.Seccomp.Syscalls),
			specs.LinuxSyscall{Names: []string{"keyctl", "bpf", "userfaultfd"}, Action: specs.ActNotify})
	}))
	id := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", b, id)
	if r.code != 125 || !strings.Contains(r.stderr, "[strict.seccomp.notify]") {
		t.Errorf("strict run with a seccomp agent: %s; want 125 naming [strict.seccomp.notify]", r)
	}
	select {
	case <-got:
		t.Error("the runtime connected to the bundle's seccomp agent at strict")
	case <-time.After(200 * time.Millisecond):
	}
	e.assertNothingLeft(id)

	id = e.id()
	r = e.vetto("run", "-b", b, id)
	if r.code != 0 || !strings.Contains(r.stderr, "posture=weakened") || !strings.Contains(r.stderr, "seccomp calls decided by the agent at "+sock) {
		t.Errorf("standard run with a seccomp agent: %s; want it run, the posture naming the agent", r)
	}
	e.assertNothingLeft(id)
}

// A strict bundle that mounts binfmt_misc: the runtime makes the mount
// as root before the container starts, and without a user namespace it
// is the host's own binfmt_misc, whose register file the container's root
// may write — a handler the host's kernel then runs for every matching
// exec on the host. strict's mount rules knew only binds and the
// standard kernel filesystems; 67fa8d4 ran it with posture isolated. The
// handler here names an extension nothing uses and is removed after.
func TestStrictMountTypesRefused(t *testing.T) {
	e := newEnv(t)
	name := "vettotest" + strconv.Itoa(int(time.Now().UnixNano()%1000000))
	host := filepath.Join(e.tmp, "binfmt")
	if err := os.Mkdir(host, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("binfmt_misc", host, "binfmt_misc", 0, ""); err != nil {
		t.Skipf("binfmt_misc cannot be mounted on this host: %v", err)
	}
	registered := filepath.Join(host, name)
	t.Cleanup(func() {
		if fileExists(registered) {
			_ = os.WriteFile(registered, []byte("-1"), 0o200)
		}
		_ = unix.Unmount(host, unix.MNT_DETACH)
	})
	b := e.bundle([]string{"sh", "-c", "echo ':" + name + ":E::" + name + "::/bin/true:' > /binfmt/register"}, edits(strictSpec, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/binfmt", Type: "binfmt_misc", Source: "binfmt_misc"})
	}))
	id := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", b, id)
	if r.code != 125 || !strings.Contains(r.stderr, "[strict.mounts.type]") {
		t.Errorf("strict run mounting binfmt_misc: %s; want 125 naming [strict.mounts.type]", r)
	}
	if fileExists(registered) {
		t.Errorf("the container registered a binfmt_misc handler on the host (%s)", registered)
	}
	e.assertNothingLeft(id)

	// At standard it is the bundle's to ask for; the posture says so.
	id = e.id()
	b = e.bundle([]string{"true"}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/binfmt", Type: "binfmt_misc", Source: "binfmt_misc"})
	})
	r = e.vetto("run", "-b", b, id)
	if !strings.Contains(r.stderr, "mounts of other filesystems: binfmt_misc binfmt_misc at /binfmt") {
		t.Errorf("standard run mounting binfmt_misc: %s; want the posture to name the mount", r)
	}
	e.assertNothingLeft(id)
}

// A strict bundle in a user namespace that keeps host root unmapped, with
// a read-only bind of the host's /etc that is id-mapped: the mount hands
// the files' on-disk owners (root, the shadow group) to the container's
// own ids, so its root reads /etc/shadow as host root would. Either way
// of asking: mappings on the mount, or the idmap option that reuses the
// container's. Strict refuses both; at standard the posture names them.
func TestStrictIDMappedSystemBindRefused(t *testing.T) {
	const base, size = 100000, 65536
	userns := func(s *specs.Spec) {
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: base, Size: size}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: base, Size: size}}
	}
	mapped := []specs.LinuxIDMapping{{ContainerID: 0, HostID: base, Size: size}}
	for _, tc := range []struct {
		name  string
		mount specs.Mount
	}{
		{"mappings on the mount", specs.Mount{Destination: "/mnt", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro"}, UIDMappings: mapped, GIDMappings: mapped}},
		{"the idmap option", specs.Mount{Destination: "/mnt", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro", "idmap"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			bind := func(s *specs.Spec) { s.Mounts = append(s.Mounts, tc.mount) }
			script := "head -c 5 /mnt/shadow && echo READ-SHADOW; true"
			id := e.id()
			b := e.bundle([]string{"sh", "-c", script}, edits(strictSpec, userns, bind))
			r := e.vetto("run", "--security-level", "strict", "-b", b, id)
			if strings.Contains(r.stdout, "READ-SHADOW") {
				t.Errorf("a strict container read the host's /etc/shadow: %s", r)
			}
			if r.code != 125 || !strings.Contains(r.stderr, "[strict.mounts.bind-source]") || !strings.Contains(r.stderr, "id-mapped") {
				t.Errorf("strict run: %s; want 125 naming [strict.mounts.bind-source] and the id-mapping", r)
			}
			e.assertNothingLeft(id)
			// The same bind without the id-mapping is what strict allows:
			// the container's root is no one on host files.
			id = e.id()
			plain := tc.mount
			plain.UIDMappings, plain.GIDMappings, plain.Options = nil, nil, []string{"rbind", "ro"}
			b = e.bundle([]string{"sh", "-c", script}, edits(strictSpec, userns, func(s *specs.Spec) { s.Mounts = append(s.Mounts, plain) }))
			if r := e.vetto("run", "--security-level", "strict", "-b", b, id); r.code != 0 || strings.Contains(r.stdout, "READ-SHADOW") {
				t.Errorf("strict run of the unmapped read-only /etc: %s; want it to run without reading shadow", r)
			}
			// At standard it is the bundle's to ask for; the posture says so.
			id = e.id()
			b = e.bundle([]string{"true"}, edits(userns, bind))
			if r := e.vetto("run", "-b", b, id); !strings.Contains(r.stderr, "id-mapped") {
				t.Errorf("standard run with the id-mapped /etc: %s; want the posture to name it", r)
			}
		})
	}
}

// A strict bundle whose standard sysfs or cgroup mount is read-write: the
// container's root is host root on them (no user namespace), and the
// files are root's, so it writes the host's kernel settings through
// /sys (here transparent hugepages, set back to what they were) and
// raises its own memory limit through /sys/fs/cgroup. Strict refuses
// both; at standard the posture names them.
func TestStrictWritableKernelFilesystemsRefused(t *testing.T) {
	const thp = "/sys/kernel/mm/transparent_hugepage/enabled"
	before, err := os.ReadFile(thp)
	if err != nil {
		t.Skipf("%s: %v", thp, err)
	}
	mode := strings.Trim(strings.Fields(string(before[strings.Index(string(before), "["):]))[0], "[]")
	t.Cleanup(func() { _ = os.WriteFile(thp, []byte(mode), 0o644) })
	for _, tc := range []struct {
		name, typ, script string
	}{
		{"sysfs", "sysfs", "echo " + mode + " > " + thp + " && echo WROTE-HOST-SYSFS; true"},
		{"cgroup", "cgroup", `for f in /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/memory.max; do [ -f "$f" ] && echo 1073741824 2>/dev/null > "$f" && echo RAISED-OWN-LIMIT; done; true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rw := func(s *specs.Spec) {
				for i, m := range s.Mounts {
					if m.Type == tc.typ {
						s.Mounts[i].Options = slices.DeleteFunc(slices.Clone(m.Options), func(o string) bool { return o == "ro" })
						s.Mounts[i].Options = append(s.Mounts[i].Options, "rw")
					}
				}
			}
			id := e.id()
			b := e.bundle([]string{"sh", "-c", tc.script}, edits(strictSpec, rw))
			r := e.vetto("run", "--security-level", "strict", "-b", b, id)
			if strings.Contains(r.stdout, "WROTE-HOST-SYSFS") || strings.Contains(r.stdout, "RAISED-OWN-LIMIT") {
				t.Errorf("a strict container wrote through its %s mount: %s", tc.typ, r)
			}
			if r.code != 125 || !strings.Contains(r.stderr, "[strict.mounts.kernel-writable]") {
				t.Errorf("strict run: %s; want 125 naming [strict.mounts.kernel-writable]", r)
			}
			e.assertNothingLeft(id)
			// At standard it is the bundle's to ask for; the posture says so.
			id = e.id()
			b = e.bundle([]string{"true"}, rw)
			if r := e.vetto("run", "-b", b, id); !strings.Contains(r.stderr, "kernel filesystems writable as host root: "+tc.typ+" at /sys") {
				t.Errorf("standard run with a writable %s: %s; want the posture to name it", tc.typ, r)
			}
		})
	}
}

// A strict bundle that asks for a priority over the host: the runtime
// sets process.scheduler and process.ioPriority while it holds every
// capability, so a workload with none gets a nice of -20 and the
// real-time I/O class (a real-time CPU policy too, where the host's
// cgroups give it a budget), and runs ahead of the host's own processes.
// 824f1a7 ran it at strict with posture isolated; strict refuses it, and
// at standard the posture names it.
func TestStrictHostPriorityRefused(t *testing.T) {
	e := newEnv(t)
	prio := func(s *specs.Spec) {
		s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: -20}
		s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_RT, Priority: 0}
	}
	// Field 19 of /proc/self/stat is the nice value.
	script := `set -- $(cat /proc/self/stat); [ "${19}" = "-20" ] && echo GOT-NICE-MINUS-20; ionice 2>/dev/null | grep -q realtime && echo GOT-REALTIME-IO; true`
	id := e.id()
	b := e.bundle([]string{"sh", "-c", script}, edits(strictSpec, prio))
	r := e.vetto("run", "--security-level", "strict", "-b", b, id)
	if strings.Contains(r.stdout, "GOT-") {
		t.Errorf("a strict container runs above the host's processes: %s", r)
	}
	if r.code != 125 || !strings.Contains(r.stderr, "[strict.priority.host]") {
		t.Errorf("strict run: %s; want 125 naming [strict.priority.host]", r)
	}
	e.assertNothingLeft(id)
	id = e.id()
	b = e.bundle([]string{"true"}, prio)
	if r := e.vetto("run", "-b", b, id); r.code != 0 || !strings.Contains(r.stderr, "a priority above the host's processes: nice -20, real-time I/O priority") {
		t.Errorf("standard run: %s; want it to run with the posture naming the priorities", r)
	}
	// The same taken by the workload itself, with no capability: a
	// RLIMIT_NICE of 40 lets it renice itself to -20.
	id = e.id()
	b = e.bundle([]string{"sh", "-c", `renice -n -20 -p $$ >/dev/null 2>&1; set -- $(cat /proc/self/stat); [ "${19}" = "-20" ] && echo GOT-NICE-MINUS-20; true`}, edits(strictSpec, func(s *specs.Spec) {
		s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_NICE", Hard: 40, Soft: 40})
	}))
	r = e.vetto("run", "--security-level", "strict", "-b", b, id)
	if strings.Contains(r.stdout, "GOT-") || r.code != 125 || !strings.Contains(r.stderr, "RLIMIT_NICE 40") {
		t.Errorf("strict run with RLIMIT_NICE 40: %s; want 125 naming it, and no nice -20", r)
	}
	e.assertNothingLeft(id)
}

// A strict bundle whose linux.netDevices names a host interface:
// libcontainer moves it into the container's network namespace, so the
// container has the host's network beside its own (none here), and the
// host loses the interface — a virtual one for good, when the namespace
// goes.
func TestStrictNetDevicesRefused(t *testing.T) {
	e := newEnv(t)
	dev := "vtnd" + strconv.Itoa(int(time.Now().UnixNano()%100000))
	// A veth pair: both ends go when the namespace holding one goes.
	if out, err := exec.Command("ip", "link", "add", dev, "type", "veth", "peer", "name", dev+"p").CombinedOutput(); err != nil {
		t.Fatalf("ip link add %s type veth: %v: %s", dev, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", dev).Run() })
	b := e.bundle([]string{"true"}, edits(strictSpec, func(s *specs.Spec) {
		s.Linux.NetDevices = map[string]specs.LinuxNetDevice{dev: {}}
	}))
	id := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", b, id)
	if r.code != 125 || !strings.Contains(r.stderr, "[strict.netdevices]") {
		t.Errorf("strict run moving %s in: %s; want 125 naming [strict.netdevices]", dev, r)
	}
	if err := exec.Command("ip", "link", "show", dev).Run(); err != nil {
		t.Errorf("the host lost %s: %v", dev, err)
	}
	e.assertNothingLeft(id)
}

// A strict bundle whose root filesystem is a host system tree, writable:
// root.path /usr here. pivot_root takes it like any rootfs, so the
// container's root writes the host's programs. strict judged the binds,
// not the root; 67fa8d4 ran it with posture isolated and the probe file
// appeared in the host's /usr. The test removes only what it made there:
// the probe, and the empty mount points the runtime made.
func TestStrictRootfsHostTreeRefused(t *testing.T) {
	e := newEnv(t)
	const tree = "/usr"
	if !fileExists(filepath.Join(tree, "bin", "sh")) {
		t.Skipf("no %s/bin/sh here", tree)
	}
	probe := ".vetto-rootfs-probe-" + strconv.Itoa(int(time.Now().UnixNano()%1000000))
	before := map[string]bool{}
	entries, err := os.ReadDir(tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		before[en.Name()] = true
	}
	t.Cleanup(func() {
		_ = os.Remove(filepath.Join(tree, probe))
		after, _ := os.ReadDir(tree)
		for _, en := range after {
			if !before[en.Name()] && en.IsDir() {
				_ = os.Remove(filepath.Join(tree, en.Name())) // only if empty
			}
		}
	})
	b := e.bundle([]string{"/bin/sh", "-c", "touch /" + probe}, edits(strictSpec, func(s *specs.Spec) {
		s.Root.Path, s.Root.Readonly = tree, false
	}))
	id := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", b, id)
	if r.code != 125 || !strings.Contains(r.stderr, "[strict.rootfs.host]") {
		t.Errorf("strict run with root.path %s: %s; want 125 naming [strict.rootfs.host]", tree, r)
	}
	if fileExists(filepath.Join(tree, probe)) {
		t.Errorf("the container wrote %s on the host", filepath.Join(tree, probe))
	}
	e.assertNothingLeft(id)
}

// A bundle that claims an isolated posture it lacks is refused at every
// level (posture.annotation).
func TestPostureAnnotation(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	r := e.vetto("run", "-b", e.bundle([]string{"true"}, edits(withoutNamespace(specs.PIDNamespace), func(s *specs.Spec) {
		s.Annotations = map[string]string{"dev.vetto.posture": "isolated"}
	})), id)
	if r.code != 125 || !strings.Contains(r.stderr, "[posture.annotation]") {
		t.Fatalf("run of a host-pid bundle annotated isolated: %s; want 125 naming [posture.annotation]", r)
	}
	e.assertNothingLeft(id)
}

// An open file keeps the access it was opened with wherever it goes: the
// container's mounts, namespaces, devices cgroup and Landlock are checked
// when a file is opened, not when it is used. --preserve-fds of a host
// directory handed a strict container the host's tree (it read a host
// file through /proc/self/fd/3/), an O_PATH descriptor the file itself
// (reopened through /proc/self/fd), and a pidfd, an inet socket or a
// proc file reach the host's processes, network and kernel settings the
// same way. 60620e7 ran each at strict with posture isolated. Strict
// refuses them at create, run and exec; at standard the posture names
// them; data channels still pass at strict.
func TestStrictPassedHostHandlesRefused(t *testing.T) {
	e := newEnv(t)
	hostDir := filepath.Join(e.tmp, "host-dir")
	writeTree(t, hostDir, map[string]string{"secret": "HOST-SECRET\n"}, 0o755)
	script := `cat /proc/self/fd/3/secret /proc/self/fd/3 2>/dev/null; true`
	handles := []struct {
		name, what string
		open       func(t *testing.T) *os.File
	}{
		{"directory", "the directory " + hostDir, func(t *testing.T) *os.File { return openFile(t, hostDir) }},
		{"O_PATH", "an O_PATH descriptor of " + filepath.Join(hostDir, "secret"), func(t *testing.T) *os.File {
			fd, err := unix.Open(filepath.Join(hostDir, "secret"), unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return os.NewFile(uintptr(fd), "o_path")
		}},
		{"pidfd", "[pidfd]", func(t *testing.T) *os.File {
			fd, err := unix.PidfdOpen(os.Getpid(), 0)
			if err != nil {
				t.Skipf("pidfd_open: %v", err)
			}
			return os.NewFile(uintptr(fd), "pidfd")
		}},
		{"tcp listener", "an inet tcp socket", func(t *testing.T) *os.File { return listenerFile(t, "tcp", "127.0.0.1:0") }},
		{"proc file", "a file of the kernel's proc: /proc/sys/kernel/core_pattern", func(t *testing.T) *os.File {
			return openFile(t, "/proc/sys/kernel/core_pattern")
		}},
	}
	for _, h := range handles {
		t.Run(h.name, func(t *testing.T) {
			f := h.open(t)
			defer f.Close()
			id := e.id()
			r := badVettoFiles(e, []*os.File{f}, "run", "--security-level", "strict", "--preserve-fds", "1", "-b", e.bundle([]string{"sh", "-c", script}, strictSpec), id)
			if strings.Contains(r.stdout, "HOST-SECRET") {
				t.Errorf("a strict container read the host's file through the passed %s: %s", h.name, r)
			}
			if r.code != 125 || !strings.Contains(r.stderr, "[strict.passed-fds]") || !strings.Contains(r.stderr, h.what) {
				t.Errorf("strict run passed a %s: %s; want 125 naming [strict.passed-fds] and %q", h.name, r, h.what)
			}
			e.assertNothingLeft(id)
		})
	}

	// At standard it is the caller's to pass; the posture names it.
	dir := openFile(t, hostDir)
	defer dir.Close()
	r := badVettoFiles(e, []*os.File{dir}, "run", "--preserve-fds", "1", "-b", e.bundle([]string{"sh", "-c", script}, strictSpec), e.id())
	if r.code != 0 || !strings.Contains(r.stderr, "posture=weakened") || !strings.Contains(r.stderr, "host objects passed in: fd 3 (the directory "+hostDir+")") {
		t.Errorf("standard run passed a directory: %s; want it run with the posture naming it", r)
	}

	// Data channels pass at strict: a pipe, then a file with a unix socket.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if _, err := pw.WriteString("DATA-PIPE\n"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	file := openFile(t, filepath.Join(hostDir, "secret"))
	defer file.Close()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock, peer := os.NewFile(uintptr(pair[0]), "sock"), os.NewFile(uintptr(pair[1]), "peer")
	defer sock.Close()
	defer peer.Close()
	r = badVettoFiles(e, []*os.File{pr, file, sock}, "run", "--security-level", "strict", "--preserve-fds", "3", "-b",
		e.bundle([]string{"sh", "-c", "cat <&3; cat <&4; echo THROUGH-SOCKET >&5"}, strictSpec), e.id())
	if r.code != 0 || !strings.Contains(r.stdout, "DATA-PIPE\nHOST-SECRET\n") || !strings.Contains(r.stderr, "posture=isolated") {
		t.Errorf("strict run passed a pipe, a file and a unix socket pair: %s; want them read, posture isolated", r)
	}

	// exec into a strict container judges its --preserve-fds the same.
	id := e.id()
	e.mustVetto("run", "-d", "--security-level", "strict", "-b", e.bundle([]string{"sleep", "1000"}, strictSpec), id)
	r = badVettoFiles(e, []*os.File{dir}, "exec", "--preserve-fds", "1", id, "sh", "-c", script)
	if strings.Contains(r.stdout, "HOST-SECRET") || r.code != 125 || !strings.Contains(r.stderr, "[strict.passed-fds]") {
		t.Errorf("exec into a strict container passed a directory: %s; want 125 naming [strict.passed-fds], nothing read", r)
	}
	file2 := openFile(t, filepath.Join(hostDir, "secret"))
	defer file2.Close()
	if r := badVettoFiles(e, []*os.File{file2}, "exec", "--preserve-fds", "1", id, "sh", "-c", "cat <&3"); r.code != 0 || r.stdout != "HOST-SECRET\n" {
		t.Errorf("exec into a strict container passed a file: %s; want it read", r)
	}
	e.mustVetto("delete", "-f", id)
}

// Socket activation (systemd's LISTEN_FDS, for the runtime's own pid):
// the sockets go to the container as fds 3.., before --preserve-fds's,
// and its process gets LISTEN_FDS and LISTEN_PID=1, as runc passes them.
// A LISTEN_PID that is not the runtime's passes nothing. At strict a
// listening unix socket passes and an inet one is refused like any
// handle on the host.
func TestSocketActivation(t *testing.T) {
	e := newEnv(t)
	listener := listenerFile(t, "unix", filepath.Join(e.tmp, "activation.sock"))
	defer listener.Close()
	extra := e.tempFile()
	defer extra.Close()
	if _, err := extra.WriteString("PRESERVED\n"); err != nil {
		t.Fatal(err)
	}
	activated := func(pid string, files []*os.File, args ...string) result {
		t.Helper()
		// LISTEN_PID is the runtime's own pid: the shell's, which exec keeps.
		cmd := exec.Command("sh", append([]string{"-c", `LISTEN_PID=` + pid + ` exec "$0" "$@"`, binary, "--root", e.root}, args...)...)
		cmd.Env = append(os.Environ(), "LISTEN_FDS=1")
		cmd.ExtraFiles = files
		return e.runCmd(cmd)
	}
	script := `echo "LISTEN_FDS=$LISTEN_FDS LISTEN_PID=$LISTEN_PID"; [ -S /proc/self/fd/3 ] && echo FD3-SOCKET; cat <&4 2>/dev/null; true`
	for _, level := range []string{"standard", "strict"} {
		if _, err := extra.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		r := activated("$$", []*os.File{listener, extra}, "run", "--security-level", level, "--preserve-fds", "1", "-b", e.bundle([]string{"sh", "-c", script}, strictSpec), e.id())
		if r.code != 0 || !strings.Contains(r.stdout, "LISTEN_FDS=1 LISTEN_PID=1\nFD3-SOCKET\nPRESERVED\n") {
			t.Errorf("%s run under socket activation: %s; want the listener at fd 3 with LISTEN_FDS=1 LISTEN_PID=1, the preserved file at fd 4", level, r)
		}
	}
	r := activated("1", []*os.File{listener}, "run", "-b", e.bundle([]string{"sh", "-c", script}, strictSpec), e.id())
	if r.code != 0 || !strings.Contains(r.stdout, "LISTEN_FDS= LISTEN_PID=\n") || strings.Contains(r.stdout, "FD3-SOCKET") {
		t.Errorf("run with another process's LISTEN_PID: %s; want nothing passed", r)
	}
	tf := listenerFile(t, "tcp", "127.0.0.1:0")
	defer tf.Close()
	id := e.id()
	if r := activated("$$", []*os.File{tf}, "run", "--security-level", "strict", "-b", e.bundle([]string{"true"}, strictSpec), id); r.code != 125 || !strings.Contains(r.stderr, "fd 3 (an inet tcp socket") {
		t.Errorf("strict run activated with a tcp listener: %s; want 125 naming it", r)
	}
	e.assertNothingLeft(id)
}

// listenerFile is a listening socket as socket activation hands one over:
// the file alone (a copy of the listener's descriptor), the listener
// closed.
func listenerFile(t *testing.T, network, addr string) *os.File {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := l.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// What vetto prints for a person quotes the bundle's own text. A mount
// destination with a carriage return and an erase-line sequence rewrote
// the launch line on the operator's terminal to read "posture=isolated"
// and hid the rest (60620e7 wrote it raw); the same text reached the
// terminal raw in a strict refusal (logrus writes a message as it is when
// stderr is a terminal), in verify's table and in report's story. Each is
// now written with the control characters escaped.
func TestTerminalOutputCannotBeForged(t *testing.T) {
	e := newEnv(t)
	forged := "/dev/h\r\x1b[Ksandbox: linux tier=full net=none level=standard posture=isolated\x1b[8m"
	bindForged := func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: forged, Type: "bind", Source: "/", Options: []string{"rbind", "ro"}})
	}
	clean := func(what, out string) {
		t.Helper()
		if strings.Contains(out, "\x1b[K") || strings.Contains(out, "\x1b[8m") || strings.Contains(out, "h\rsandbox") {
			t.Errorf("%s wrote the bundle's control characters raw: %q", what, out)
		}
		if !strings.Contains(out, `/dev/h\r\x1b[Ksandbox`) {
			t.Errorf("%s does not show the destination escaped: %q", what, out)
		}
	}
	audit := filepath.Join(e.tmp, "audit.jsonl")

	// The launch line.
	r := e.vetto("--audit-log", audit, "run", "-b", e.bundle([]string{"true"}, bindForged), e.id())
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	clean("the launch line", r.stderr)

	// A refusal, on a terminal.
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script(1) from util-linux is needed to give the runtime a terminal: %v", err)
	}
	refused := e.id()
	inner := strings.Join([]string{consoleQuote(binary), "--root", consoleQuote(e.root), "run", "--security-level", "strict", "-b", consoleQuote(e.bundle([]string{"true"}, bindForged)), refused}, " ")
	out := e.tempFile()
	defer out.Close()
	cmd := exec.Command(script, "-qec", inner, "/dev/null")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != 125 {
		t.Errorf("strict run on a terminal: exit %d, want 125: %q", code, readAll(t, out))
	}
	clean("a refusal on a terminal", readAll(t, out))
	e.assertNothingLeft(refused)

	// verify's table, and report's story.
	id := e.id()
	e.mustVetto("--audit-log", audit, "run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, bindForged), id)
	clean("verify", e.vetto("verify", id).stdout)
	e.mustVetto("delete", "-f", id)
	clean("report", e.mustVetto("report", audit).stdout)
}
