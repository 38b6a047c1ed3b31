//go:build linux

package integration

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Credentials the sandbox may use but never read (docs/network.md,
// "Credentials"), judged from the host: the workload hunts for the token
// everywhere it can look, and the upstream says what it received.

// credUpstream records what /cred received: the Authorization headers and
// whether it came over TLS. It answers whether the header was the token,
// never the header itself.
type credUpstream struct {
	mu   sync.Mutex
	seen []credSeen
}

type credSeen struct {
	auth []string
	tls  bool
}

func (c *credUpstream) install(u *upstream, want string) {
	u.handler.HandleFunc("/cred", func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Values("Authorization")
		c.mu.Lock()
		c.seen = append(c.seen, credSeen{auth: auth, tls: r.TLS != nil})
		c.mu.Unlock()
		ok := len(auth) == 1 && auth[0] == want
		fmt.Fprintf(w, "cred ok=%v tls=%v\n", ok, r.TLS != nil)
	})
}

func (c *credUpstream) requests() []credSeen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]credSeen(nil), c.seen...)
}

// credConfig is the upstream's runtime.toml with the upstream's CA as the
// relay's roots and dir as the one credential directory.
func credConfig(t *testing.T, e *env, u *upstream, dir string) string {
	t.Helper()
	cfg := u.runtimeConfig(e.tmp)
	ca := filepath.Join(e.tmp, "relay-ca.pem")
	if err := os.WriteFile(ca, u.caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "[relay]\n", fmt.Sprintf("[relay]\nca_file = %q\ncredential_dirs = [%q]\n", ca, dir), 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// credDir makes the credential directory (0700) and a token file (0600)
// in it, holding a fresh random token.
func credDir(t *testing.T, e *env) (dir, file, token string) {
	t.Helper()
	dir = filepath.Join(e.tmp, "creds")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	rand.Read(b)
	token = "vtok-" + hex.EncodeToString(b)
	file = filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, file, token
}

func credPolicy(source string) string {
	return relayPolicy("up.vetto.test") + "\n[[credentials]]\nhost = \"up.vetto.test\"\nheader = \"Authorization\"\nvalue_prefix = \"Bearer \"\n" + source + "\n"
}

// grepHost fails when token is in any file under dir (the state, the
// bundle) or in file.
func grepHost(t *testing.T, token, what string, paths ...string) {
	t.Helper()
	for _, root := range paths {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(data), token) {
				t.Errorf("the token is in %s: %s", what, p)
			}
			return nil
		})
	}
}

func TestCredentialUsedNeverRead(t *testing.T) {
	e := relayEnv(t)
	u := newUpstream(t)
	dir, file, token := credDir(t, e)
	var up credUpstream
	up.install(u, "Bearer "+token)
	cfg := credConfig(t, e, u, dir)
	p := policyProject(e)
	// The workload knows the token's two halves apart (so that no
	// process's argv or environment holds it whole, which would be the
	// test's own leak) and hunts for them together: its environment,
	// every process's environment and argv it can see, every file it
	// can read that is not a kernel interface, the source file itself.
	h1, h2 := token[:len(token)/2], token[len(token)/2:]
	pat := h1 + ".?" + h2
	script := fmt.Sprintf(`
out=$PWD/out.txt
: > $out
env | grep -E %[1]q >/dev/null && echo "FOUND in env" >> $out
grep -E %[1]q /proc/self/environ >/dev/null 2>&1 && echo "FOUND in /proc/self/environ" >> $out
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
  grep -aE %[1]q "$f" >/dev/null 2>&1 && echo "FOUND in $f" >> $out
done
grep -rsaE %[1]q /etc /tmp "$HOME" "$PWD" /run /var /dev/shm 2>/dev/null | grep -v '^'"$out" | head -3 | sed 's/^/FOUND in file: /' >> $out
cat %[2]q >/dev/null 2>&1 && echo "READ the source file" >> $out
echo searched >> $out
# Use it: through the proxy, with a header of the workload's own, and
# through the transparent port 80 (no proxy: the stub's address).
curl -sS -m 10 -H "Authorization: Bearer chosen-by-workload" http://up.vetto.test/cred >> $out 2>&1
curl -sS -m 10 --noproxy '*' http://up.vetto.test/cred >> $out 2>&1
`, pat, file)
	bundle, _ := e.compilePolicy(credPolicy(fmt.Sprintf("from_file = %q", file)), p, script)
	audit := filepath.Join(e.tmp, "audit.jsonl")
	id := e.id()
	state := filepath.Join(e.root, id)

	r := e.vetto("--config", cfg, "--audit-log", audit, "create", "-b", bundle, id)
	if r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	if st := e.mustVetto("state", id); strings.Contains(st.stdout, token) {
		t.Error("the token is in `state`")
	}
	grepHost(t, token, "the state directory after create", state)
	e.mustVetto("--config", cfg, "--audit-log", audit, "start", id)
	e.waitStatus(id, "stopped")
	if st := e.mustVetto("state", id); strings.Contains(st.stdout, token) {
		t.Error("the token is in `state`")
	}
	grepHost(t, token, "the state directory", state)
	grepHost(t, token, "the bundle", bundle)
	e.mustVetto("--config", cfg, "--audit-log", audit, "delete", id)
	grepHost(t, token, "the audit logs", audit, "/var/lib/vetto-runtime/audit.jsonl")

	out, err := os.ReadFile(filepath.Join(p, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if strings.Contains(got, "FOUND") || strings.Contains(got, "READ") || !strings.Contains(got, "searched") {
		t.Errorf("the workload found the token:\n%s", got)
	}
	if strings.Contains(got, token) {
		t.Errorf("the token reached the workload:\n%s", got)
	}
	if n := strings.Count(got, "cred ok=true tls=true"); n != 2 {
		t.Errorf("workload's output:\n%s\nwant two requests answered as carrying the token over TLS", got)
	}
	seen := up.requests()
	if len(seen) != 2 {
		t.Fatalf("upstream got %d requests on /cred, want 2: %+v", len(seen), seen)
	}
	for i, s := range seen {
		if !s.tls || len(s.auth) != 1 || s.auth[0] != "Bearer "+token {
			t.Errorf("request %d: TLS %v, %d Authorization headers (token: %v); want TLS and exactly the token", i, s.tls, len(s.auth), len(s.auth) == 1 && s.auth[0] == "Bearer "+token)
		}
	}
	data, _ := os.ReadFile(audit)
	if !strings.Contains(string(data), `"check":"relay/credentials","verdict":"PASS"`) {
		t.Error("no relay/credentials PASS among the audited pre-launch verdicts")
	}
	if !strings.Contains(string(data), `"credentialed":2`) {
		t.Error("the receipt does not count 2 credentialed requests")
	}
	if !strings.Contains(string(data), `"credential":"Authorization"`) {
		t.Error("no relay audit line names the credential's header")
	}
}

// A credential that cannot be read refuses the launch: 125, one line
// naming the host and the source, nothing left behind, the program never
// run, the relay never started.
func TestCredentialSourceMissingIsFatal(t *testing.T) {
	tests := []struct {
		name   string
		source func(file string) string
		break_ func(t *testing.T, file string)
		want   string
	}{
		{"file missing", func(f string) string { return fmt.Sprintf("from_file = %q", f) },
			func(t *testing.T, f string) { os.Remove(f) }, "no such file"},
		{"file readable by others", func(f string) string { return fmt.Sprintf("from_file = %q", f) },
			func(t *testing.T, f string) { os.Chmod(f, 0o644) }, "group or others may read it"},
		{"file empty", func(f string) string { return fmt.Sprintf("from_file = %q", f) },
			func(t *testing.T, f string) { os.WriteFile(f, nil, 0o600) }, "empty"},
		{"env unset", func(string) string { return `from_env = "VETTO_TEST_TOKEN_UNSET"` },
			func(*testing.T, string) {}, "not set in the runtime's environment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := relayEnv(t)
			u := newUpstream(t)
			dir, file, token := credDir(t, e)
			cfg := credConfig(t, e, u, dir)
			p := policyProject(e)
			bundle, _ := e.compilePolicy(credPolicy(tt.source(file)), p, "touch RAN")
			tt.break_(t, file)
			audit := filepath.Join(e.tmp, "audit.jsonl")
			id := e.id()
			r := e.vetto("--config", cfg, "--audit-log", audit, "run", "-b", bundle, id)
			src := "file " + file
			if strings.HasPrefix(tt.name, "env") {
				src = "env VETTO_TEST_TOKEN_UNSET"
			}
			msg := strings.TrimSpace(r.stderr)
			if r.code != 125 || !strings.Contains(msg, "credential for up.vetto.test ("+src+")") || !strings.Contains(msg, tt.want) {
				t.Fatalf("run: %s; want exit 125 naming the host, %s and %q", r, src, tt.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("more than one line on stderr: %q", msg)
			}
			if strings.Contains(r.stderr+r.stdout, token) {
				t.Error("the refusal carries the token")
			}
			e.assertNothingLeft(id)
			if _, err := os.Stat(filepath.Join(e.root, id)); err == nil {
				t.Errorf("state directory of %s left", id)
			}
			if _, err := os.Stat(filepath.Join(p, "RAN")); err == nil {
				t.Error("the refused container's program ran")
			}
			if left := relayProcesses(e.root); len(left) > 0 {
				t.Errorf("relay left after a refused launch: %v", left)
			}
			grepHost(t, token, "the audit logs", audit, "/var/lib/vetto-runtime/audit.jsonl")
		})
	}
}

// A bundle from someone else names the operator's credential for a host
// it chose: the relay read the token from the credential directory and
// sent it there, at every level (the bundle's annotation is all it
// takes). At strict that is refused unless the operator allows the pair
// (allow.credentials = ["HOST file /path"]); the floor can refuse it at
// any level (forbid.credentials). The upstream here stands for the
// bundle author's collector: it must not see the token unless allowed.
func TestBundleCredentialNeedsTheOperator(t *testing.T) {
	e := relayEnv(t)
	u := newUpstream(t)
	dir, file, token := credDir(t, e)
	var up credUpstream
	up.install(u, "Bearer "+token)
	cfg := credConfig(t, e, u, dir)
	p := policyProject(e)
	bundle, _ := e.compilePolicy(credPolicy(fmt.Sprintf("from_file = %q", file)), p,
		`curl -sS -m 10 http://up.vetto.test/cred`)
	withFloor := func(floor string) string {
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.CreateTemp(e.tmp, "runtime-*.toml")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(append(data, []byte("\n"+floor)...)); err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	sent := func() bool {
		for _, s := range up.requests() {
			if len(s.auth) == 1 && s.auth[0] == "Bearer "+token {
				return true
			}
		}
		return false
	}

	// refused runs the bundle under config with args and wants exit code
	// naming rule, and the token sent nowhere.
	refused := func(what, config string, code int, rule string, args ...string) {
		t.Helper()
		id := e.id()
		r := e.vetto(append(append([]string{"--config", config, "run"}, args...), "-b", bundle, id)...)
		if r.code != code || !strings.Contains(r.stderr, "["+rule+"]") {
			t.Errorf("%s: %s; want %d naming [%s]", what, r, code, rule)
		}
		if sent() {
			t.Fatalf("%s: the token reached the host the bundle chose", what)
		}
		e.assertNothingLeft(id)
	}
	refused("strict run of a bundle naming a credential", cfg, 125, "strict.credentials", "--security-level", "strict")
	refused("run under forbid.credentials", withFloor("[forbid]\ncredentials = true\n"), 126, "floor.forbid.credentials")

	// At standard the bundle's credential runs, and the posture says
	// what the spec hands the workload.
	id := e.id()
	r := e.vetto("--config", cfg, "run", "-b", bundle, id)
	if r.code != 0 || !strings.Contains(r.stderr, "posture=weakened") || !strings.Contains(r.stderr, "host credentials: Authorization for up.vetto.test from file "+file) {
		t.Errorf("standard run of a bundle naming a credential: %s; want it run with the credential in a weakened posture", r)
	}
	e.assertNothingLeft(id)

	// The operator allows exactly this pair: the relay uses it, under
	// forbid.credentials at standard; at strict the credential rule lets
	// it through (a guest whose Landlock ABI is below the policy's still
	// refuses strict, for that).
	allow := fmt.Sprintf("[allow]\ncredentials = [%q]\n", "up.vetto.test file "+file)
	id = e.id()
	r = e.vetto("--config", withFloor("[forbid]\ncredentials = true\n"+allow), "run", "-b", bundle, id)
	if r.code != 0 || !strings.Contains(r.stdout, "cred ok=true") {
		t.Errorf("run under forbid.credentials with the pair allowed: %s; want it used", r)
	}
	e.assertNothingLeft(id)
	id = e.id()
	r = e.vetto("--config", withFloor(allow), "run", "--security-level", "strict", "-b", bundle, id)
	switch {
	case strings.Contains(r.stderr, "[strict.credentials]"):
		t.Errorf("strict run with the pair allowed: %s; want no strict.credentials", r)
	case r.code == 0 && !strings.Contains(r.stdout, "cred ok=true"):
		t.Errorf("strict run with the pair allowed: %s; want the credential used", r)
	case r.code != 0 && !strings.Contains(r.stderr, "Landlock ABI"):
		t.Errorf("strict run with the pair allowed: %s; want it to run (or a Landlock ABI refusal on an old kernel)", r)
	}
	e.assertNothingLeft(id)
}
