//go:build linux

package integration

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The allow side (issue 15): the tools a coding agent runs, inside a real
// policy container with a network allowlist, each reaching an allowed
// upstream (through the proxy variables, or transparently through the DNS
// stub when it ignores them) and failing on a denied one with the reason
// visible. Each tool talks to its own name, so that the relay's audit
// lines for it can be counted against what the upstream saw: exactly one
// line per connection (per request for plain HTTP).
//
// A tool that is not installed fails the test: `make deps` installs them.

// toolCase is one tool run in the container: the shell command, what its
// output must contain, and the name it talks to.
type toolCase struct {
	name, cmd string
	want      []string // every one in the output, and exit 0
	denied    bool     // must exit non-zero
	host      string   // the allowed name it talks to; "" for a denial
	tls       bool     // host is reached over TLS (count the upstream's handshakes)
}

func TestRelayAllowTools(t *testing.T) {
	tools := map[string]string{}
	for _, tool := range []string{"curl", "git", "node", "npm", "python3", "java", "go"} {
		path, err := exec.LookPath(tool)
		if tool == "python3" {
			// The system's: a pyenv or venv shim on the caller's PATH is
			// not in the sandbox (its $HOME is a fresh tmpfs).
			path, err = exec.LookPath("/usr/bin/python3")
		}
		if err != nil {
			t.Fatalf("%s is not installed: the allow-side test needs it (make deps installs it); a skip would be a pass that proves nothing", tool)
		}
		tools[tool] = path
	}
	if out, err := exec.Command(tools["python3"], "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Fatalf("pip is not installed (apt-get install python3-pip): %v: %s", err, out)
	}
	e := relayEnv(t)
	u := newUpstream(t)
	cfg := u.runtimeConfig(e.tmp)
	p := policyProject(e)
	u.serveGit(e.tmp)
	u.serveNPM()
	u.servePip()
	u.serveGoProxy()

	files := map[string]string{
		"ca.pem": string(u.caPEM),
		"fetch.js": `fetch(process.argv[2]).then(async r => console.log("STATUS", r.status, (await r.text()).trim()))
  .catch(e => console.log("ERROR", (e.cause && (e.cause.code || e.cause.message)) || e.message));
`,
		"Fetch.java": `import java.io.*;
import java.net.*;
import java.net.http.*;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import javax.net.ssl.*;

public class Fetch {
  public static void main(String[] a) throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(new FileInputStream(a[0])));
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    // ProxySelector.getDefault() reads https.proxyHost and
    // https.proxyPort, which JAVA_TOOL_OPTIONS sets.
    HttpClient c = HttpClient.newBuilder().sslContext(ctx).proxy(ProxySelector.getDefault()).build();
    try {
      HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(a[1])).build(), HttpResponse.BodyHandlers.ofString());
      System.out.println("STATUS " + r.statusCode() + " " + r.body().trim());
    } catch (IOException e) {
      System.out.println("ERROR " + e);
    }
  }
}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(p, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ca := filepath.Join(p, "ca.pem")
	noProxy := "env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u all_proxy"
	goEnv := fmt.Sprintf("GOSUMDB=off GOTOOLCHAIN=local GOMODCACHE=/tmp/gomod GOCACHE=/tmp/gocache GOPATH=/tmp/gopath GOFLAGS=-modcacherw SSL_CERT_FILE=%s", ca)
	npm := fmt.Sprintf("%s --no-audit --no-fund --no-update-notifier --fetch-retries=0 --cafile %s", tools["npm"], ca)
	pip := fmt.Sprintf("%s -m pip --disable-pip-version-check --no-cache-dir --retries 0", tools["python3"])
	java := tools["java"] + " -Xmx256m -XX:+UseSerialGC " + filepath.Join(p, "Fetch.java") + " " + ca
	node := "NODE_EXTRA_CA_CERTS=" + ca + " " + tools["node"] + " " + filepath.Join(p, "fetch.js")
	cases := []toolCase{
		{name: "curl/proxy-http", cmd: "curl -sS -m 20 http://curl-http.vetto.test/ok", want: []string{"hello from curl-http.vetto.test/ok"}, host: "curl-http.vetto.test"},
		{name: "curl/proxy-https", cmd: "curl -sS -m 20 --cacert " + ca + " https://curl-https.vetto.test/ok", want: []string{"hello from curl-https.vetto.test/ok"}, host: "curl-https.vetto.test", tls: true},
		{name: "curl/transparent-https", cmd: noProxy + " curl -sS -m 20 --cacert " + ca + " https://curl-tp.vetto.test/ok", want: []string{"hello from curl-tp.vetto.test/ok"}, host: "curl-tp.vetto.test", tls: true},
		{name: "curl/transparent-http", cmd: noProxy + " curl -sS -m 20 http://curl-tp-http.vetto.test/ok", want: []string{"hello from curl-tp-http.vetto.test/ok"}, host: "curl-tp-http.vetto.test"},
		{name: "curl/denied-https", cmd: "curl -sS -m 20 --cacert " + ca + " https://evil.example/", want: []string{"CONNECT tunnel failed, response 403"}, denied: true},
		{name: "curl/denied-http", cmd: "curl -sS -m 20 -i --fail-with-body http://evil.example/", want: []string{"403 Forbidden", "X-Vetto-Deny: no-rule", `To allow it, add "evil.example" to network.allow`}, denied: true},
		{name: "curl/denied-transparent", cmd: noProxy + " curl -sS -m 20 https://evil.example/", want: []string{"Could not resolve host: evil.example"}, denied: true},

		{name: "git/clone", cmd: "GIT_SSL_CAINFO=" + ca + " git clone -q https://git.vetto.test/git/repo.git /tmp/clone && cat /tmp/clone/README", want: []string{"cloned through the relay"}, host: "git.vetto.test", tls: true},
		{name: "git/denied", cmd: "GIT_SSL_CAINFO=" + ca + " git clone -q https://evil.example/git/repo.git /tmp/clone2", want: []string{"403"}, denied: true},

		{name: "npm/install", cmd: "mkdir -p /tmp/npmp && cd /tmp/npmp && " + npm + " --registry https://npm.vetto.test/npm/ install vetto-left-pad && " + tools["node"] + ` -e 'console.log("[" + require("vetto-left-pad")("x", 3) + "]")'`, want: []string{"[  x]"}, host: "npm.vetto.test", tls: true},
		{name: "npm/denied", cmd: "cd /tmp && " + npm + " --registry https://evil.example/npm/ view vetto-left-pad", want: []string{"403"}, denied: true},

		{name: "pip/download", cmd: pip + " download --no-deps --index-url https://pip.vetto.test/simple/ --cert " + ca + " -d /tmp/pipdl vetto-hello && ls /tmp/pipdl", want: []string{"vetto_hello-1.0-py3-none-any.whl"}, host: "pip.vetto.test", tls: true},
		// pip says why it found nothing only at -vv.
		{name: "pip/denied", cmd: pip + " -vv download --no-deps --index-url https://evil.example/simple/ --cert " + ca + " -d /tmp/pipdl2 vetto-hello", want: []string{"Tunnel connection failed: 403"}, denied: true},

		{name: "go/mod-download", cmd: "cd /tmp && GOPROXY=https://goproxy.vetto.test/gomod " + goEnv + " " + tools["go"] + " mod download -json vetto.test/hello@v1.0.0", want: []string{`"Version": "v1.0.0"`, `"Zip":`}, host: "goproxy.vetto.test", tls: true},
		{name: "go/denied", cmd: "cd /tmp && GOPROXY=https://evil.example/gomod " + strings.Replace(goEnv, "/tmp/gomod", "/tmp/gomod-denied", 1) + " " + tools["go"] + " mod download -json vetto.test/hello@v1.0.0", want: []string{`v1.0.0.info\": Forbidden`}, denied: true},

		// Node 24 and later honour the proxy variables when
		// NODE_USE_ENV_PROXY is set; older ones go through the DNS stub and
		// the transparent listener either way. Both must work.
		{name: "node/fetch-with-env-proxy", cmd: node + " https://node-env.vetto.test/ok", want: []string{"STATUS 200 hello from node-env.vetto.test/ok"}, host: "node-env.vetto.test", tls: true},
		{name: "node/fetch-without-env-proxy", cmd: "env -u NODE_USE_ENV_PROXY " + node + " https://node-plain.vetto.test/ok", want: []string{"STATUS 200 hello from node-plain.vetto.test/ok"}, host: "node-plain.vetto.test", tls: true},
		// Node 20 resolves through the stub, which refuses the name
		// (glibc reports a REFUSED answer as EAI_AGAIN); a Node that
		// honours the variables gets the proxy's 403.
		{name: "node/denied", cmd: node + " https://evil.example/", want: []string{"ERROR"}},

		{name: "java/httpclient", cmd: java + " https://java.vetto.test/ok", want: []string{"STATUS 200 hello from java.vetto.test/ok"}, host: "java.vetto.test", tls: true},
		{name: "java/denied", cmd: java + " https://evil.example/", want: []string{"ERROR", "403"}},
	}
	var script strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&script, "echo '=== %s'\n( %s ) 2>&1\necho \"=== %s exit $?\"\n", c.name, c.cmd, c.name)
	}
	goroot, err := exec.Command(tools["go"], "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	policy := relayPolicy(append([]string{}, hostsOf(cases)...)...)
	policy = fmt.Sprintf("[filesystem]\nallow_read = [%q]\n", strings.TrimSpace(string(goroot))) + policy
	bundle, _ := e.compilePolicy(policy, p, script.String())
	audit := filepath.Join(e.tmp, "audit.jsonl")
	id := e.id()
	r := e.vetto("--config", cfg, "--audit-log", audit, "run", "-b", bundle, id)
	if r.code != 0 {
		t.Fatalf("run the tools: %s", r)
	}
	sections := map[string]string{}
	codes := map[string]string{}
	var cur string
	var buf strings.Builder
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "=== ") && strings.Contains(line, " exit "):
			f := strings.Fields(line)
			codes[cur], sections[cur] = f[len(f)-1], buf.String()
			buf.Reset()
		case strings.HasPrefix(line, "=== "):
			cur = strings.TrimPrefix(line, "=== ")
		default:
			buf.WriteString(line + "\n")
		}
	}
	events := relayEvents(t, audit, id)
	httpByHost, tlsBySNI, _, _ := u.counts()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := sections[c.name], codes[c.name]
			t.Logf("%s: exit %s\n%s", c.name, code, out)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: output lacks %q", c.name, w)
				}
			}
			if !c.denied && !strings.HasSuffix(c.name, "denied") && code != "0" {
				t.Errorf("%s: exit %s, want 0", c.name, code)
			}
			if c.denied && code == "0" {
				t.Errorf("%s: exit 0 for a denied destination", c.name)
			}
			if c.host == "" {
				return
			}
			// Exactly one audit line per connection (per request, for
			// plain HTTP), all allowed, against the upstream's own count.
			var lines, denied int
			protocols := map[string]int{}
			for _, ev := range events {
				if ev.Host != c.host || ev.Protocol == "dns" {
					continue
				}
				lines++
				protocols[ev.Protocol]++
				if ev.Verdict != "allow" || ev.Rule != c.host {
					denied++
				}
			}
			seen := httpByHost[c.host]
			if c.tls {
				seen = tlsBySNI[c.host]
			}
			if lines == 0 || lines != seen || denied != 0 {
				t.Errorf("%s: %d relay audit lines for %s (%d not allowed by its rule), the upstream saw %d connections/requests: want one line each", c.name, lines, c.host, denied, seen)
			}
			t.Logf("%s: %d connection(s) %v", c.name, lines, protocols)
		})
	}
	// Every denial said why, and which entry would allow it.
	var denials int
	for _, ev := range events {
		if ev.Host != "evil.example" {
			continue
		}
		denials++
		if ev.Verdict != "deny" || ev.Rule != "no-rule" || !strings.Contains(ev.Reason, `add "evil.example" to network.allow`) {
			t.Errorf("denial %+v: want no-rule naming the entry to add", ev)
		}
	}
	if denials == 0 {
		t.Error("no relay audit line for the denied destination")
	}
	if n := httpByHost["evil.example"] + tlsBySNI["evil.example"]; n != 0 {
		t.Errorf("the upstream served evil.example %d time(s)", n)
	}
}

func hostsOf(cases []toolCase) []string {
	var out []string
	for _, c := range cases {
		if c.host != "" {
			out = append(out, c.host)
		}
	}
	return out
}

// serveGit serves a repository over smart HTTP (git http-backend as CGI)
// at /git/repo.git.
func (u *upstream) serveGit(tmp string) {
	u.t.Helper()
	backend := "/usr/lib/git-core/git-http-backend"
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	root := filepath.Join(tmp, "git")
	work := filepath.Join(tmp, "git-work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "README"), []byte("cloned through the relay\n"), 0o644)
	gitIn(u.t, work, "init", "-q", "-b", "main")
	gitIn(u.t, work, "add", "README")
	gitIn(u.t, work, "commit", "-qm", "first")
	gitIn(u.t, tmp, "clone", "-q", "--bare", work, filepath.Join(root, "repo.git"))
	u.handler.Handle("/git/", &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
}

// serveNPM is a registry with one package, enough of the protocol for
// npm install: the packument and the tarball.
func (u *upstream) serveNPM() {
	u.t.Helper()
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for name, content := range map[string]string{
		"package/package.json": `{"name":"vetto-left-pad","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = (s, n) => s.padStart(n);\n",
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))})
		tw.Write([]byte(content))
	}
	tw.Close()
	gz.Close()
	data := tgz.Bytes()
	sha := sha1.Sum(data)
	sri := sha512.Sum512(data)
	u.handler.HandleFunc("/npm/vetto-left-pad", func(w http.ResponseWriter, r *http.Request) {
		doc := map[string]any{
			"name": "vetto-left-pad", "dist-tags": map[string]string{"latest": "1.0.0"},
			"versions": map[string]any{"1.0.0": map[string]any{
				"name": "vetto-left-pad", "version": "1.0.0",
				"dist": map[string]string{
					"tarball":   "https://" + r.Host + "/npm/vetto-left-pad/-/vetto-left-pad-1.0.0.tgz",
					"shasum":    hex.EncodeToString(sha[:]),
					"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sri[:]),
				},
			}},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	})
	u.handler.HandleFunc("/npm/vetto-left-pad/-/vetto-left-pad-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(data)
	})
}

// servePip is a simple index (PEP 503) with one wheel.
func (u *upstream) servePip() {
	u.t.Helper()
	files := []struct{ name, content string }{
		{"vetto_hello/__init__.py", "HELLO = 1\n"},
		{"vetto_hello-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: vetto-hello\nVersion: 1.0\n"},
		{"vetto_hello-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: vetto\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var whl bytes.Buffer
	zw := zip.NewWriter(&whl)
	var record strings.Builder
	for _, f := range files {
		w, _ := zw.Create(f.name)
		w.Write([]byte(f.content))
		sum := sha256.Sum256([]byte(f.content))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.content))
	}
	record.WriteString("vetto_hello-1.0.dist-info/RECORD,,\n")
	w, _ := zw.Create("vetto_hello-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	zw.Close()
	data := whl.Bytes()
	sum := sha256.Sum256(data)
	const wheel = "vetto_hello-1.0-py3-none-any.whl"
	u.handler.HandleFunc("/simple/vetto-hello/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"/files/%s#sha256=%s\">%s</a></body></html>\n", wheel, hex.EncodeToString(sum[:]), wheel)
	})
	u.handler.HandleFunc("/files/"+wheel, func(w http.ResponseWriter, r *http.Request) { w.Write(data) })
}

// serveGoProxy is a module proxy (GOPROXY protocol) with one module.
func (u *upstream) serveGoProxy() {
	u.t.Helper()
	const mod, ver = "vetto.test/hello", "v1.0.0"
	gomod := "module " + mod + "\n\ngo 1.21\n"
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for name, content := range map[string]string{"go.mod": gomod, "hello.go": "package hello\n\nconst Hello = \"hi\"\n"} {
		w, _ := zw.Create(mod + "@" + ver + "/" + name)
		w.Write([]byte(content))
	}
	zw.Close()
	base := "/gomod/" + mod + "/@v/"
	u.handler.HandleFunc(base+"list", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, ver) })
	u.handler.HandleFunc(base+ver+".info", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"Version":%q,"Time":"2024-01-01T00:00:00Z"}`, ver)
	})
	u.handler.HandleFunc(base+ver+".mod", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(gomod)) })
	u.handler.HandleFunc(base+ver+".zip", func(w http.ResponseWriter, r *http.Request) { w.Write(z.Bytes()) })
}
