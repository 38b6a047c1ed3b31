//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The attack: the runtime runs a bundle's hooks on the host as root
// (poststop once the container is gone), and the container rewrites what
// such a hook runs — its executable, a symlink on its path, the
// interpreter of its #! line, the script an interpreter hook is given
// (made by the container, not there at create), the command an sh -c
// string or a wrapper (env) runs, a command found through the hook's
// PATH, a file its environment has it load (BASH_ENV, LD_PRELOAD), or a
// hook inside a writable root filesystem. The launch is
// refused at every level (bundle.hook-writable), and nothing of the
// container's runs on the host.
func TestHookWritableByContainerRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup makes the hook files in dir (bound into the container at
		// /hk) and returns the hooks; rootfs is a writable copy of the
		// rootfs for the case that needs one, else "".
		setup  func(t *testing.T, dir, marker string) (hooks *specs.Hooks, rootfs string)
		script string // what the container does, with MARKER replaced
		rw     bool   // /hk read-write
		ok     bool   // the control: the launch runs
	}{
		{"the executable in a writable bind", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			writeExec(t, filepath.Join(dir, "hook.sh"), "#!/bin/sh\ntrue\n")
			return &specs.Hooks{Poststop: []specs.Hook{{Path: filepath.Join(dir, "hook.sh")}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/hook.sh`, true, false},
		{"a symlink on the hook's path, in a writable bind", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			// The hook is /hk's "hook", a symlink to a file out of reach;
			// the container points the name at a file of its own.
			safe := filepath.Join(filepath.Dir(dir), "safe")
			if err := os.MkdirAll(safe, 0o755); err != nil {
				t.Fatal(err)
			}
			writeExec(t, filepath.Join(safe, "hook.sh"), "#!/bin/sh\ntrue\n")
			if err := os.Symlink(filepath.Join(safe, "hook.sh"), filepath.Join(dir, "hook")); err != nil {
				t.Fatal(err)
			}
			return &specs.Hooks{Poststop: []specs.Hook{{Path: filepath.Join(dir, "hook")}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/evil; chmod +x /hk/evil; ln -sfn HOOKDIR/evil /hk/hook`, true, false},
		{"the #! interpreter in a writable bind", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			writeExec(t, filepath.Join(dir, "interp"), "#!/bin/sh\nexec /bin/sh \"$@\"\n")
			safe := filepath.Join(filepath.Dir(dir), "safe")
			if err := os.MkdirAll(safe, 0o755); err != nil {
				t.Fatal(err)
			}
			writeExec(t, filepath.Join(safe, "hook.sh"), "#!"+filepath.Join(dir, "interp")+"\ntrue\n")
			return &specs.Hooks{Poststart: []specs.Hook{{Path: filepath.Join(safe, "hook.sh")}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/interp`, true, false},
		{"the script of an interpreter hook, made by the container", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			return &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", filepath.Join(dir, "cleanup.sh")}}}}, ""
		}, `printf 'touch MARKER\n' > /hk/cleanup.sh`, true, false},
		{"the command of an sh -c hook", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			return &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-ec", "cd / && " + filepath.Join(dir, "cleanup.sh") + " --all >/dev/null"}}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/cleanup.sh; chmod +x /hk/cleanup.sh`, true, false},
		{"the script behind a wrapper", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			return &specs.Hooks{Poststop: []specs.Hook{{Path: "/usr/bin/env", Args: []string{"env", "LC_ALL=C", "sh", filepath.Join(dir, "cleanup.sh")}}}}, ""
		}, `printf 'touch MARKER\n' > /hk/cleanup.sh`, true, false},
		{"a command found through the hook's PATH", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			return &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", "cleanup-tool || true"}, Env: []string{"PATH=" + dir + ":/usr/bin:/bin"}}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/cleanup-tool; chmod +x /hk/cleanup-tool`, true, false},
		{"the interpreter #!/usr/bin/env finds through the hook's PATH", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			safe := filepath.Join(filepath.Dir(dir), "safe")
			if err := os.MkdirAll(safe, 0o755); err != nil {
				t.Fatal(err)
			}
			writeExec(t, filepath.Join(safe, "hook"), "#!/usr/bin/env hookshell\ntrue\n")
			return &specs.Hooks{Poststop: []specs.Hook{{Path: filepath.Join(safe, "hook"), Env: []string{"PATH=" + dir + ":/usr/bin:/bin"}}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/hookshell; chmod +x /hk/hookshell`, true, false},
		{"a file the hook's environment has it load (BASH_ENV)", func(t *testing.T, dir, _ string) (*specs.Hooks, string) {
			return &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/bash", Args: []string{"bash", "-c", "true"}, Env: []string{"BASH_ENV=" + filepath.Join(dir, "env.sh")}}}}, ""
		}, `printf 'touch MARKER\n' > /hk/env.sh`, true, false},
		{"a hook in a writable root filesystem", func(t *testing.T, _, _ string) (*specs.Hooks, string) {
			root := clientRootfs(t, t.TempDir())
			writeExec(t, filepath.Join(root, "hook.sh"), "#!/bin/sh\ntrue\n")
			return &specs.Hooks{Poststop: []specs.Hook{{Path: filepath.Join(root, "hook.sh")}}}, root
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hook.sh`, false, false},
		{"control: the hook's directory bound read-only", func(t *testing.T, dir, marker string) (*specs.Hooks, string) {
			writeExec(t, filepath.Join(dir, "hook.sh"), "#!/bin/sh\ntouch "+marker+".ran\n")
			return &specs.Hooks{Poststop: []specs.Hook{{Path: filepath.Join(dir, "hook.sh")}}}, ""
		}, `printf '#!/bin/sh\ntouch MARKER\n' > /hk/hook.sh 2>/dev/null; true`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.tmp, "hooks")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(e.tmp, "PWNED")
			hooks, root := tc.setup(t, dir, marker)
			opt := "ro"
			if tc.rw {
				opt = "rw"
			}
			script := strings.NewReplacer("MARKER", marker, "HOOKDIR", dir).Replace(tc.script)
			bundle := e.bundle([]string{"sh", "-c", script}, func(s *specs.Spec) {
				s.Hooks = hooks
				s.Mounts = append(s.Mounts, specs.Mount{Destination: "/hk", Type: "bind", Source: dir, Options: []string{"bind", opt}})
				if root != "" {
					s.Root = &specs.Root{Path: root, Readonly: false}
				}
			})
			id := e.id()
			r := e.vetto("run", "--bundle", bundle, id)
			if tc.ok {
				if r.code != 0 || !fileExists(marker+".ran") {
					t.Fatalf("control run: %s (hook ran: %v)", r, fileExists(marker+".ran"))
				}
				return
			}
			if r.code != 125 || !strings.Contains(r.stderr, "[bundle.hook-writable]") {
				t.Errorf("run: %s; want exit 125 naming bundle.hook-writable", r)
			}
			if fileExists(marker) {
				t.Errorf("the container's code ran on the host as a hook")
			}
			if _, err := os.Stat(filepath.Join(e.root, id)); !os.IsNotExist(err) {
				t.Errorf("state left after the refusal: %v", err)
			}
		})
	}
}

func writeExec(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The attack: the runtime's own executable is in a directory the container
// may write. It puts its program there; the runtime's next start of itself
// (the monitor once the workload runs, the client's next delete) runs it as
// root. Refused at every level (bundle.runtime-state-writable).
func TestRuntimeExecutableWritableByContainerRefused(t *testing.T) {
	e := newEnv(t)
	tools := filepath.Join(e.tmp, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(tools, "vetto-runtime")
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.tmp, "PWNED")
	bundle := e.bundle([]string{"sh", "-c", `printf '#!/bin/sh\ntouch ` + marker + `\n' > /t/.x; chmod +x /t/.x; mv /t/.x /t/vetto-runtime; sleep 1.5`},
		func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/t", Type: "bind", Source: tools, Options: []string{"bind", "rw"}})
		})
	id := e.id()
	r := e.runCmd(exec.Command(self, "--root", e.root, "run", "--bundle", bundle, id))
	if r.code != 125 || !strings.Contains(r.stderr, "[bundle.runtime-state-writable]") || !strings.Contains(r.stderr, "executable") {
		t.Errorf("run: %s; want exit 125 naming the runtime's executable", r)
	}
	if fileExists(marker) {
		t.Error("the container's program ran on the host as the runtime")
	}
	// Whatever the run did, the next command runs the file at that path:
	// it must still be the runtime.
	if got, _ := os.ReadFile(self); string(got) != string(data) {
		t.Error("the runtime's executable was replaced")
	}

	// The client calls the runtime by a symlink in a directory the
	// container may write (containerd's BinaryName = /ci/bin/runc): the
	// container points the name at its own program, which the client's
	// next call runs as root.
	ci := filepath.Join(e.tmp, "ci")
	if err := os.MkdirAll(ci, 0o755); err != nil {
		t.Fatal(err)
	}
	runc := filepath.Join(ci, "runc")
	if err := os.Symlink(binary, runc); err != nil {
		t.Fatal(err)
	}
	bundle = e.bundle([]string{"sh", "-c", `printf '#!/bin/sh
touch ` + marker + `
' > /ci/evil; chmod +x /ci/evil; ln -sfn ` + filepath.Join(ci, "evil") + ` /ci/runc`},
		func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/ci", Type: "bind", Source: ci, Options: []string{"bind", "rw"}})
		})
	r = e.runCmd(exec.Command(runc, "--root", e.root, "run", "--bundle", bundle, e.id()))
	if r.code != 125 || !strings.Contains(r.stderr, "through the symlink "+runc) {
		t.Errorf("run by a symlink in a writable bind: %s; want exit 125 naming the symlink", r)
	}
	_ = e.runCmd(exec.Command(runc, "--root", e.root, "list"))
	if fileExists(marker) {
		t.Error("the client's next call ran the container's program as the runtime")
	}
}

// The attack: the operator's config (its floor) is in a directory the
// container may write; it lowers the floor of every later launch (a
// min_level of degraded, credentials allowed). Refused at every level.
func TestOperatorConfigWritableByContainerRefused(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.tmp, "etc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "runtime.toml")
	floor := "min_level = \"standard\"\n"
	if err := os.WriteFile(config, []byte(floor), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := e.bundle([]string{"sh", "-c", `echo 'min_level = "degraded"' > /cfg/runtime.toml`}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/cfg", Type: "bind", Source: dir, Options: []string{"bind", "rw"}})
	})
	r := e.vetto("--config", config, "run", "--bundle", bundle, e.id())
	if r.code != 125 || !strings.Contains(r.stderr, "operator config") || !strings.Contains(r.stderr, "[bundle.runtime-state-writable]") {
		t.Errorf("run: %s; want exit 125 naming the operator config", r)
	}
	if got, _ := os.ReadFile(config); string(got) != floor {
		t.Errorf("the operator's config was rewritten: %q", got)
	}
	// The extra audit log is evidence too: the container would write
	// the verdicts that judge it.
	audit := filepath.Join(dir, "audit.jsonl")
	bundle = e.bundle([]string{"sh", "-c", `echo '{"event":"receipt","clean":true}' >> /cfg/audit.jsonl`}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/cfg", Type: "bind", Source: dir, Options: []string{"bind", "rw"}})
	})
	r = e.vetto("--audit-log", audit, "run", "--bundle", bundle, e.id())
	if r.code != 125 || !strings.Contains(r.stderr, "audit log") || !strings.Contains(r.stderr, "[bundle.runtime-state-writable]") {
		t.Errorf("run with --audit-log in a writable bind: %s; want exit 125 naming the audit log", r)
	}
	// The runtime's --log is the error line containerd and podman read
	// back after a failure: the container would write it for them.
	logFile := filepath.Join(dir, "log.json")
	bundle = e.bundle([]string{"sh", "-c", `echo '{"level":"error","msg":"the runtime says: all is well"}' >> /cfg/log.json`}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/cfg", Type: "bind", Source: dir, Options: []string{"bind", "rw"}})
	})
	r = e.vetto("--log", logFile, "--log-format", "json", "run", "--bundle", bundle, e.id())
	if r.code != 125 {
		got, _ := os.ReadFile(logFile)
		t.Errorf("run with --log in a writable bind: %s; the log now reads %q", r, got)
	} else if got, _ := os.ReadFile(logFile); !strings.Contains(string(got), "[bundle.runtime-state-writable]") || !strings.Contains(string(got), " log ") {
		t.Errorf("run with --log in a writable bind: the log reads %q; want the refusal naming the log", got)
	}
}

// The attack: the pid file a client (containerd's shim, conmon) reads to
// learn the container's init, and then signals, waits for and kills, is in
// a directory the container may write — or is reached through a symlink
// there. The container writes the pid of its choosing (the host's init) in
// its place. Refused at every level (bundle.runtime-state-writable).
func TestPidFileWritableByContainerRefused(t *testing.T) {
	for _, through := range []bool{false, true} {
		name := "the pid file in a writable bind"
		if through {
			name = "a symlink on the pid file's path, in a writable bind"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.tmp, "run")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(dir, "init.pid")
			script := `sleep 0.3; echo 1 > /r/init.pid.new; mv /r/init.pid.new /r/init.pid; sleep 100`
			if through {
				// The client's path runs through /run/ctr, a symlink the
				// container can point at a directory of its own.
				safe := filepath.Join(e.tmp, "safe")
				if err := os.MkdirAll(safe, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(safe, filepath.Join(dir, "ctr")); err != nil {
					t.Fatal(err)
				}
				pidFile = filepath.Join(dir, "ctr", "init.pid")
				script = `sleep 0.3; mkdir /r/own; echo 1 > /r/own/init.pid; ln -sfn HOSTDIR/own /r/ctr.new; mv -T /r/ctr.new /r/ctr; sleep 100`
			}
			script = strings.ReplaceAll(script, "HOSTDIR", dir)
			bundle := e.bundle([]string{"sh", "-c", script}, func(s *specs.Spec) {
				s.Mounts = append(s.Mounts, specs.Mount{Destination: "/r", Type: "bind", Source: dir, Options: []string{"bind", "rw"}})
			})
			id := e.id()
			r := e.vetto("run", "-d", "--pid-file", pidFile, "--bundle", bundle, id)
			if r.code == 0 {
				defer e.vetto("delete", "--force", id)
				time.Sleep(time.Second)
				got, _ := os.ReadFile(pidFile)
				t.Fatalf("run -d with the pid file where the container writes: %s; the client now reads pid %q", r, strings.TrimSpace(string(got)))
			}
			if r.code != 125 || !strings.Contains(r.stderr, "pid file") || !strings.Contains(r.stderr, "[bundle.runtime-state-writable]") {
				t.Errorf("run: %s; want exit 125 naming the pid file", r)
			}
			if _, err := os.Stat(filepath.Join(e.root, id)); !os.IsNotExist(err) {
				t.Errorf("state left after the refusal: %v", err)
			}
		})
	}
}

// The same for exec: the exec'd process runs before the client reads its
// pid file, so a container that can write the file gives the client the
// pid of its choosing. exec --pid-file there is refused.
func TestExecPidFileWritableByContainerRefused(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.tmp, "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bundle := e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/r", Type: "bind", Source: dir, Options: []string{"bind", "rw"}})
	})
	id := e.id()
	e.mustVetto("run", "-d", "--bundle", bundle, id)
	defer e.vetto("delete", "--force", id)
	pidFile := filepath.Join(dir, "exec.pid")
	r := e.vetto("exec", "-d", "--pid-file", pidFile, id, "sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do echo 1 > /r/exec.pid.new; mv /r/exec.pid.new /r/exec.pid; sleep 0.05; done; sleep 100")
	if r.code == 0 {
		time.Sleep(500 * time.Millisecond)
		got, _ := os.ReadFile(pidFile)
		t.Fatalf("exec -d with the pid file where the container writes: %s; the client now reads pid %q", r, strings.TrimSpace(string(got)))
	}
	if r.code != 125 || !strings.Contains(r.stderr, "pid file") || !strings.Contains(r.stderr, "[bundle.runtime-state-writable]") {
		t.Errorf("exec: %s; want exit 125 naming the pid file", r)
	}
	// Out of the container's reach it works.
	ok := filepath.Join(e.tmp, "exec.pid")
	e.mustVetto("exec", "-d", "--pid-file", ok, id, "true")
	if data, err := os.ReadFile(ok); err != nil || strings.TrimSpace(string(data)) == "" {
		t.Errorf("exec --pid-file out of reach: %q, %v", data, err)
	}
}
