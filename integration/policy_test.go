//go:build linux

package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Policy bundles are compiled by the binary (`spec --policy`) and run for
// real; every check is made from outside: the host's files, the host's
// listener, what the container printed about itself.

// runFlags are what a policy bundle needs from `run`: nothing. The
// compiler writes Landlock rules (dev.vetto.landlock) for every fs right up
// to ABI 5, and on a host whose ABI enforces them all the launch at level
// standard applies them exactly; on an older kernel it is refused (125),
// which is the point (TestLandlockHostABI), so there these tests accept
// the degradation (landlock_abi_test.go sets --allow-degraded=landlock).
var runFlags []string

// policyProject makes a project directory with a planted secret in .env
// and in a denied directory, and a file to be read.
func policyProject(e *env) string {
	e.t.Helper()
	p := filepath.Join(e.tmp, "project")
	writeTree(e.t, p, map[string]string{
		"README":          "hello from the project\n",
		".env":            "API_TOKEN=planted-dotenv-secret\n",
		"secrets/key.pem": "planted-dir-secret\n",
	}, 0o755)
	return p
}

// writeTree writes each file (path below root: content) 0600, making its
// directories with dirMode.
func writeTree(t *testing.T, root string, files map[string]string, dirMode os.FileMode) {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), dirMode); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// compilePolicy writes policy to a file and compiles it with the binary
// into a fresh bundle for project, running `sh -c script`.
func (e *env) compilePolicy(policy, project, script string) (bundle string, r result) {
	e.t.Helper()
	file := filepath.Join(e.tmp, "policy.toml")
	if err := os.WriteFile(file, []byte(policy), 0o644); err != nil {
		e.t.Fatal(err)
	}
	bundle, err := os.MkdirTemp(e.tmp, "bundle-")
	if err != nil {
		e.t.Fatal(err)
	}
	r = e.mustVetto("spec", "--policy", file, "--bundle", bundle, "--project", project, "--", "sh", "-c", script)
	return bundle, r
}

// runPolicy compiles and runs script, and returns what it printed.
func (e *env) runPolicy(policy, project, script string) result {
	e.t.Helper()
	bundle, _ := e.compilePolicy(policy, project, script)
	return e.vetto(append(append([]string{"run"}, runFlags...), "--bundle", bundle, e.id())...)
}

// Secrets in masked paths cannot be read, not even by root in the sandbox
// (the process is uid 0 with CAP_DAC_OVERRIDE here: the masks, not file
// modes, keep it out). The project's other files are readable.
func TestPolicyMasksSecrets(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	script := `
id -u
cat README
if cat .env; then echo "READ .env"; fi
if cat secrets/key.pem; then echo "READ secrets/key.pem"; fi
echo "secrets/ holds: [$(ls -A secrets)]"
if cat /etc/shadow; then echo "READ /etc/shadow"; fi
# Unmasking is not possible either: no CAP_SYS_ADMIN, and seccomp refuses.
umount secrets 2>/dev/null && echo "UNMOUNTED secrets"
mv .env stolen 2>/dev/null && echo "MOVED .env"
true`
	r := e.runPolicy(`extends = "default"
[filesystem]
deny = ["$PROJECT/secrets"]
`, p, script)
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	if !strings.HasPrefix(r.stdout, "0\nhello from the project\n") {
		t.Errorf("want uid 0 and the README first; got %q", r.stdout)
	}
	for _, bad := range []string{"planted-dotenv-secret", "planted-dir-secret", "READ ", "UNMOUNTED", "MOVED", "root:"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("sandbox output contains %q:\n%s", bad, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "secrets/ holds: []") {
		t.Errorf("denied directory not empty inside: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, ".env: Permission denied") {
		t.Errorf("reading .env: want EACCES from the nodev /dev/null mask; stderr %q", r.stderr)
	}
	// And the host's files are untouched.
	if data, err := os.ReadFile(filepath.Join(p, ".env")); err != nil || string(data) != "API_TOKEN=planted-dotenv-secret\n" {
		t.Errorf("host .env now %q, %v", data, err)
	}
}

// A write inside the project lands on the host; writes anywhere else fail
// and leave the host as it was.
func TestPolicyWrites(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	ro := filepath.Join(e.tmp, "readonly")
	if err := os.MkdirAll(ro, 0o777); err != nil {
		t.Fatal(err)
	}
	roFile := filepath.Join(ro, "data")
	if err := os.WriteFile(roFile, []byte("original\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`
echo built > out.txt && echo "WROTE project"
echo changed > %[1]s && echo "WROTE readonly"
touch %[2]s/new && echo "CREATED in readonly"
touch /usr/vetto-test && echo "WROTE /usr"
touch /etc/vetto-test && echo "WROTE /etc"
touch /vetto-test && echo "WROTE /"
echo scratch > /tmp/scratch && echo "WROTE /tmp"
true`, roFile, ro)
	r := e.runPolicy(fmt.Sprintf(`[filesystem]
allow_read = [%q]
`, ro), p, script)
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	if !strings.Contains(r.stdout, "WROTE project") || !strings.Contains(r.stdout, "WROTE /tmp") {
		t.Errorf("writes to the project and /tmp should succeed: %s", r)
	}
	for _, bad := range []string{"WROTE readonly", "CREATED in readonly", "WROTE /usr", "WROTE /etc", "WROTE /\n"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("%s: %s", bad, r)
		}
	}
	if data, err := os.ReadFile(filepath.Join(p, "out.txt")); err != nil || string(data) != "built\n" {
		t.Errorf("project write not on the host: %q, %v", data, err)
	}
	if data, _ := os.ReadFile(roFile); string(data) != "original\n" {
		t.Errorf("read-only host file changed to %q", data)
	}
	for _, path := range []string{filepath.Join(ro, "new"), "/usr/vetto-test", "/etc/vetto-test"} {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			os.Remove(path)
			t.Errorf("%s exists on the host after the run", path)
		}
	}
}

// No network: only lo in the sandbox, and a listener on the host's
// loopback is unreachable (the sandbox's 127.0.0.1 is its own).
func TestPolicyNoNetwork(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`
echo "devices: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED' 2>&1
true`, port)
	r := e.runPolicy(`[network]
mode = "off"
`, p, script)
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	if !strings.Contains(r.stdout, "devices: lo \n") {
		t.Errorf("want only lo: %q", r.stdout)
	}
	// "Connection refused" (not "command not found"): the connect
	// itself was made, inside the sandbox's own network namespace.
	if strings.Contains(r.stdout, "CONNECTED") || !strings.Contains(r.stdout, "Connection refused") {
		t.Errorf("connect to the host's loopback: %q", r.stdout)
	}
	select {
	case <-accepted:
		t.Error("the host listener accepted a connection from the sandbox")
	case <-time.After(200 * time.Millisecond):
	}
}

// The environment is rebuilt: PATH, HOME, TERM, LANG and what the policy
// passes; a secret-looking name never, even when listed (and `spec` says
// so on stderr).
func TestPolicyEnvironment(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	t.Setenv("FOO_TOKEN", "planted-env-secret")
	t.Setenv("VETTO_TEST_PASSED", "yes")
	t.Setenv("VETTO_TEST_UNLISTED", "no")
	t.Setenv("LANG", "C.UTF-8")
	policy := `[environment]
pass_through = ["VETTO_TEST_PASSED", "FOO_TOKEN"]
`
	// The init's own environment, exactly as the runtime set it (a
	// shell would add PWD, SHLVL, _).
	script := `tr '\0' '\n' < /proc/1/environ | cut -d= -f1 | sort | tr '\n' ' '; echo; tr '\0' '\n' < /proc/1/environ | grep -c planted-env-secret`
	bundle, compiled := e.compilePolicy(policy, p, script)
	if !strings.Contains(compiled.stderr, "FOO_TOKEN is not passed") {
		t.Errorf("spec did not warn about FOO_TOKEN: %q", compiled.stderr)
	}
	r := e.vetto(append(append([]string{"run"}, runFlags...), "--bundle", bundle, e.id())...)
	if r.code != 1 { // grep -c found nothing: exit 1, count 0
		t.Fatalf("run: %s", r)
	}
	lines := strings.Split(r.stdout, "\n")
	want := "HOME LANG PATH VETTO_TEST_PASSED "
	if os.Getenv("TERM") != "" {
		want = "HOME LANG PATH TERM VETTO_TEST_PASSED "
	}
	if lines[0] != want || lines[1] != "0" {
		t.Errorf("environment names %q (secret count %q), want %q and 0", lines[0], lines[1], want)
	}
}

// The compiled bundle is what the issue promises, read back from
// config.json: every namespace, a host-root rootfs, seccomp, annotations.
func TestPolicyBundle(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	bundle, _ := e.compilePolicy(`extends = "strict"`, p, "true")
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Root.Path != "rootfs" || !s.Root.Readonly {
		t.Errorf("root %+v, want the bundle's empty rootfs, read-only", s.Root)
	}
	// The rootfs holds the mount points and nothing else: empty
	// directories (and files) owned by root, which the sandbox's root —
	// an unprivileged host uid in its own user namespace — could not have
	// made and cannot change.
	err = filepath.WalkDir(filepath.Join(bundle, "rootfs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("rootfs entry %s: owner %d mode %v", p, st.Uid, fi.Mode())
		}
		if !d.IsDir() && fi.Size() != 0 {
			t.Errorf("rootfs file %s is not an empty mount point", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if u := s.Linux.UIDMappings; !hasNamespaceType(s, specs.UserNamespace) || len(u) != 1 || u[0].HostID == 0 {
		t.Errorf("user namespace mappings %+v: the sandbox's root must not be host root", u)
	}
	if len(s.Linux.Namespaces) < 6 || s.Linux.Seccomp == nil || !s.Process.NoNewPrivileges {
		t.Errorf("namespaces %v seccomp %v nnp %v", s.Linux.Namespaces, s.Linux.Seccomp != nil, s.Process.NoNewPrivileges)
	}
	if c := s.Process.Capabilities; len(c.Bounding)+len(c.Effective)+len(c.Permitted) != 0 {
		t.Errorf("strict bundle has capabilities %+v", c)
	}
	for _, k := range []string{"dev.vetto.level", "dev.vetto.net", "dev.vetto.landlock"} {
		if s.Annotations[k] == "" {
			t.Errorf("annotation %s missing", k)
		}
	}
	if s.Annotations["dev.vetto.level"] != "strict" || s.Annotations["dev.vetto.net"] != "off" {
		t.Errorf("annotations %v", s.Annotations)
	}
	// A second spec into the same bundle refuses to overwrite it.
	if r := e.vetto("spec", "--profile", "default", "--bundle", bundle, "--project", p); r.code != 1 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("spec over an existing config.json: %s", r)
	}
}

// A bad policy is refused by spec and by policy check, with file, line
// and key, and writes nothing.
func TestPolicyErrors(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	file := filepath.Join(e.tmp, "bad.toml")
	if err := os.WriteFile(file, []byte("extends = \"default\"\n[filesystem]\nallow_write = [\"src\"]\nallow_red = [\"/x\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(e.tmp, "bundle")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.vetto("spec", "--policy", file, "--bundle", bundle, "--project", p, "--", "true")
	if r.code != 1 {
		t.Fatalf("spec of a bad policy: %s; want exit 1", r)
	}
	// (The error line is logrus's, which quotes the message: match the
	// parts without quotes.)
	for _, want := range []string{file + ":3: filesystem.allow_write[0]: not an absolute path", file + ":4: filesystem.allow_red: unknown key", "did you mean"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	if entries, _ := os.ReadDir(bundle); len(entries) != 0 {
		t.Errorf("a failed spec left %d files in the bundle", len(entries))
	}
	r = e.vetto("policy", "check", "--project", p, file)
	// policy check prints one problem a line, as written.
	if r.code != 1 || !strings.Contains(r.stderr, file+":3: filesystem.allow_write[0]: not an absolute path: \"src\"") ||
		!strings.Contains(r.stderr, file+`:4: filesystem.allow_red: unknown key: "allow_red" is not a policy key (did you mean "allow_read"?)`) {
		t.Errorf("policy check: %s; want exit 1 and both problems", r)
	}
	// A symlink out of the project is caught against the real host.
	if err := os.Symlink("/etc", filepath.Join(p, "etc-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("[filesystem]\nallow_write = [\"$PROJECT/etc-link\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.vetto("policy", "check", "--project", p, file); r.code != 1 || !strings.Contains(r.stderr, file+":2: filesystem.allow_write[0]: path escapes its root") {
		t.Errorf("symlink escape: %s", r)
	}
	// One pass: a key the parser refuses and a value only the compiler
	// judges unsafe are both named, with the bad size, in file order.
	if err := os.WriteFile(file, []byte("extends = \"strict\"\nbogus = 1\n[filesystem]\nallow_write = [\"/\"]\n[limits]\nmemory = \"lots\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.vetto("policy", "check", "--project", p, file)
	if r.code != 1 || !strings.Contains(r.stderr, file+": 3 problem(s)") {
		t.Errorf("policy check of three problems: %s; want all three in one pass", r)
	}
	for i, want := range []string{file + ":2: bogus: unknown key", file + `:4: filesystem.allow_write[0]: unsafe for the host: "/"`, file + ":6: limits.memory: invalid value"} {
		at := strings.Index(r.stderr, want)
		if at < 0 {
			t.Errorf("policy check: stderr %q lacks problem %d, %q", r.stderr, i+1, want)
		}
	}
	if r := e.mustVetto("policy", "explain", "--project", p, "--profile", "default"); !strings.Contains(r.stdout, p+"/.env") {
		t.Errorf("explain does not list the masked .env: %s", r.stdout)
	}
}

// vetto's seccomp profile, the default capability set and the policy's
// Landlock rules run ordinary toolchains: a shell and coreutils, make and
// gcc with threads, go build and a Go program that forks, git, python with
// subprocesses and a process pool, and node with a child process.
func TestPolicyToolchains(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.tmp, "project")
	files := map[string]string{
		"Makefile":  "all:\n\tgcc -pthread -o hello hello.c && ./hello\n",
		"hello.c":   "#include <stdio.h>\n#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); puts(\"gcc ok\"); return 0; }\n",
		"g/go.mod":  "module example.com/toolchain\n\ngo 1.21\n",
		"g/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os/exec\"\n)\n\nfunc main() {\n\tout, err := exec.Command(\"sh\", \"-c\", \"echo forked\").Output()\n\tfmt.Printf(\"go ok %s %v\\n\", out, err)\n}\n",
	}
	for name, content := range files {
		path := filepath.Join(p, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Go may live outside the host-root binds (~/sdk, /opt): the policy
	// then reads its GOROOT, which is what a user would write.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not found: %v", err)
	}
	goroot, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	// One command a line: set -e does not stop inside an && list.
	script := fmt.Sprintf(`set -e
make -s
cd g
GOTOOLCHAIN=local %s build -o prog .
./prog
cd ..
git init -q repo
cd repo
git config user.email a@b
git config user.name a
echo x > f
git add f
git commit -qm first
echo "git ok $(git log --oneline | wc -l)"
cd ..
if [ -x /usr/bin/node ]; then
  /usr/bin/node -e 'console.log("node ok", require("child_process").execSync("echo child").toString().trim())'
else
  echo "node ok (not installed on this host)"
fi
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 -c 'import subprocess, multiprocessing as m; subprocess.run(["true"], check=True); print("python ok", m.Pool(2).map(abs, [-1, -2]))'
else
  echo "python ok (not installed on this host)"
fi
echo done`, goBin)
	bundle, _ := e.compilePolicy(fmt.Sprintf("[filesystem]\nallow_read = [%q]\n", strings.TrimSpace(string(goroot))), p, script)
	audit := filepath.Join(e.tmp, "audit.jsonl")
	r := e.vetto(append(append([]string{"--audit-log", audit, "run"}, runFlags...), "--bundle", bundle, e.id())...)
	if r.code != 0 {
		t.Fatalf("toolchains in the sandbox: %s", r)
	}
	t.Logf("toolchains under the profile and Landlock:\n%s", r.stdout)
	for _, want := range []string{"gcc ok", "go ok forked", "git ok 1", "python ok", "node ok", "done"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q: %s", want, r)
		}
	}
	// And they ran under Landlock: the shim was in place and the process
	// got past it.
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"landlock/shim", "landlock/past-shim"} {
		if !strings.Contains(string(data), `"check":"`+want+`","verdict":"PASS"`) {
			t.Errorf("audit log has no %s PASS", want)
		}
	}
}

func hasNamespaceType(s specs.Spec, t specs.LinuxNamespaceType) bool {
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == t {
			return true
		}
	}
	return false
}
