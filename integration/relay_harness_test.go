//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	binenc "encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The relay tests' world: test upstreams in a network namespace the test
// creates (ip netns add, a veth pair to the host), which the relay reaches
// only because the operator's runtime.toml says so ([relay] test_hosts,
// exempt, resolvers) — never the bundle. Every server counts what reaches
// it, so that the tests can say from the host what got through.
//
//	10.213.K.1   the host's end of the veth (a host address: denied)
//	10.213.K.2   the upstream: HTTP :80, HTTPS :443 and :8443, DNS :53 (exempt)
//	10.213.K.3   a server in a private range, not exempt: nothing may reach it

// upstream is one test's upstream namespace and servers.
type upstream struct {
	t                            *testing.T
	ns, hostIf                   string
	hostAddr, upAddr, privAddr   string
	caPEM                        []byte
	leaf                         tls.Certificate
	handler                      *http.ServeMux
	mu                           sync.Mutex
	httpByHost, tlsBySNI, dnsByQ map[string]int
	privateConns                 int
	rebindAnswers                int
	listeners                    []interface{ Close() error }
}

// upstreamHosts are the names the operator's test_hosts map to the
// upstream; the rest of the upstream's names come from its DNS server.
var upstreamHosts = []string{"up.vetto.test", "curl-http.vetto.test", "curl-https.vetto.test", "curl-tp.vetto.test", "curl-tp-http.vetto.test",
	"git.vetto.test", "npm.vetto.test", "pip.vetto.test", "goproxy.vetto.test", "node-env.vetto.test", "node-plain.vetto.test", "java.vetto.test"}

// newUpstream makes the namespace, the veth pair and the servers, and
// removes all of it when the test ends, pass or fail.
func newUpstream(t *testing.T) *upstream {
	t.Helper()
	for _, tool := range []string{"ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (apt-get install iproute2): %v", tool, err)
		}
	}
	tag := fmt.Sprintf("%06x", mrand.IntN(1<<24))
	k := 0
	for try := 0; try < 50 && k == 0; try++ {
		c := 10 + mrand.IntN(240)
		out, _ := exec.Command("ip", "-4", "addr", "show").Output()
		if !bytes.Contains(out, []byte(fmt.Sprintf("10.213.%d.", c))) {
			k = c
		}
	}
	if k == 0 {
		t.Fatal("no free 10.213.K.0/24 for the upstream")
	}
	u := &upstream{
		t: t, ns: "vr" + tag, hostIf: "vrh" + tag,
		hostAddr: fmt.Sprintf("10.213.%d.1", k), upAddr: fmt.Sprintf("10.213.%d.2", k), privAddr: fmt.Sprintf("10.213.%d.3", k),
		httpByHost: map[string]int{}, tlsBySNI: map[string]int{}, dnsByQ: map[string]int{},
	}
	t.Cleanup(u.close)
	nsIf := "vrn" + tag
	for _, args := range [][]string{
		{"netns", "add", u.ns},
		{"link", "add", u.hostIf, "type", "veth", "peer", "name", nsIf},
		{"link", "set", nsIf, "netns", u.ns},
		{"addr", "add", u.hostAddr + "/24", "dev", u.hostIf},
		{"link", "set", u.hostIf, "up"},
		{"-n", u.ns, "addr", "add", u.upAddr + "/24", "dev", nsIf},
		{"-n", u.ns, "addr", "add", u.privAddr + "/24", "dev", nsIf},
		{"-n", u.ns, "link", "set", nsIf, "up"},
		{"-n", u.ns, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	u.makeCerts()
	u.handler = http.NewServeMux()
	u.handler.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s%s\n", hostOnly(r.Host), r.URL.Path)
	})
	u.handler.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n > 0 {
			m := min(n, len(chunk))
			w.Write(chunk[:m])
			n -= m
		}
	})
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS == nil {
				u.mu.Lock()
				u.httpByHost[hostOnly(r.Host)]++
				u.mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}
	tlsConfig := &tls.Config{
		Certificates: []tls.Certificate{u.leaf},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			u.mu.Lock()
			u.tlsBySNI[hello.ServerName]++
			u.mu.Unlock()
			return nil, nil
		},
	}
	serve := func(l net.Listener) {
		srv := &http.Server{Handler: count(u.handler), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(l)
	}
	serve(u.listen("tcp", u.upAddr+":80"))
	serve(tls.NewListener(u.listen("tcp", u.upAddr+":443"), tlsConfig))
	serve(tls.NewListener(u.listen("tcp", u.upAddr+":8443"), tlsConfig))
	// The private server: counts connections, answers nothing.
	priv := u.listen("tcp", u.privAddr+":80")
	go func() {
		for {
			c, err := priv.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.privateConns++
			u.mu.Unlock()
			c.Close()
		}
	}()
	u.serveDNS(u.listenPacket(u.upAddr + ":53"))
	return u
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(hostport)
}

// inNetns runs f on a thread in the upstream's network namespace; the
// thread is never switched back and dies with its goroutine.
func (u *upstream) inNetns(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		ns, err := os.Open("/run/netns/" + u.ns)
		if err != nil {
			errc <- err
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", u.ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

func (u *upstream) listen(network, addr string) net.Listener {
	u.t.Helper()
	var l net.Listener
	if err := u.inNetns(func() (err error) { l, err = net.Listen(network, addr); return err }); err != nil {
		u.t.Fatalf("listen %s in %s: %v", addr, u.ns, err)
	}
	u.listeners = append(u.listeners, l)
	return l
}

func (u *upstream) listenPacket(addr string) net.PacketConn {
	u.t.Helper()
	var pc net.PacketConn
	if err := u.inNetns(func() (err error) { pc, err = net.ListenPacket("udp", addr); return err }); err != nil {
		u.t.Fatalf("listen %s in %s: %v", addr, u.ns, err)
	}
	u.listeners = append(u.listeners, pc)
	return pc
}

// close stops the servers and removes the namespace and the veth pair.
func (u *upstream) close() {
	for _, l := range u.listeners {
		l.Close()
	}
	exec.Command("ip", "link", "del", u.hostIf).Run()
	if out, err := exec.Command("ip", "netns", "del", u.ns).CombinedOutput(); err != nil {
		u.t.Errorf("ip netns del %s: %v: %s", u.ns, err, out)
	}
	if _, err := os.Stat("/run/netns/" + u.ns); err == nil {
		u.t.Errorf("leak: network namespace %s left", u.ns)
	}
	if out, _ := exec.Command("ip", "link", "show", u.hostIf).CombinedOutput(); !bytes.Contains(out, []byte("does not exist")) && len(bytes.TrimSpace(out)) > 0 {
		u.t.Errorf("leak: veth %s left: %s", u.hostIf, out)
	}
}

// makeCerts makes a throwaway CA and a leaf for every upstream name.
func (u *upstream) makeCerts() {
	u.t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		u.t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vetto relay test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		u.t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		u.t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "up.vetto.test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames:    []string{"*.vetto.test", "*.wild.vetto.test"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		u.t.Fatal(err)
	}
	u.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	u.leaf = tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

// dnsAnswer is the upstream DNS server's table: name → A or AAAA records.
func (u *upstream) dnsAnswer(name string, qtype uint16) []netip.Addr {
	a := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, x := range s {
			out = append(out, netip.MustParseAddr(x))
		}
		return out
	}
	var v4, v6 []netip.Addr
	switch {
	case name == "dns-up.vetto.test", strings.HasSuffix(name, ".wild.vetto.test"):
		v4 = a(u.upAddr)
	case name == "meta.vetto.test":
		v4 = a("169.254.169.254")
	case name == "private.vetto.test":
		v4 = a(u.privAddr)
	case name == "loop.vetto.test":
		v4 = a("127.0.0.1")
	case name == "loop2.vetto.test":
		v4 = a("127.9.9.9")
	case name == "cgnat.vetto.test":
		v4 = a("100.64.0.1")
	case name == "ali.vetto.test":
		v4 = a("100.100.100.200")
	case name == "ula.vetto.test":
		v6 = a("fd00::1")
	case name == "hostaddr.vetto.test":
		v4 = a(u.hostAddr)
	case name == "mapped.vetto.test":
		v6 = a("::ffff:127.0.0.1")
	case name == "nat64.vetto.test":
		v6 = a("64:ff9b::a9fe:a9fe")
	case name == "rebind.vetto.test":
		// TTL 0, an allowed answer first and the metadata endpoint
		// after: the relay pins the first.
		if qtype == 1 {
			u.mu.Lock()
			u.rebindAnswers++
			first := u.rebindAnswers == 1
			u.mu.Unlock()
			if first {
				return a(u.upAddr)
			}
			return a("169.254.169.254")
		}
	}
	if qtype == 1 {
		return v4
	}
	if qtype == 28 {
		return v6
	}
	return nil
}

// serveDNS answers A and AAAA from dnsAnswer, with TTL 0, and counts every
// question by name: a name the stub refuses must never show up here.
func (u *upstream) serveDNS(pc net.PacketConn) {
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := append([]byte(nil), buf[:n]...)
			if len(q) < 12 {
				continue
			}
			name, off := readQName(q, 12)
			if off+4 > len(q) {
				continue
			}
			qtype := binenc.BigEndian.Uint16(q[off:])
			u.mu.Lock()
			u.dnsByQ[name]++
			u.mu.Unlock()
			answers := u.dnsAnswer(name, qtype)
			resp := append([]byte(nil), q[:2]...)
			resp = append(resp, 0x81, 0x80, 0, 1)
			resp = binenc.BigEndian.AppendUint16(resp, uint16(len(answers)))
			resp = append(resp, 0, 0, 0, 0)
			resp = append(resp, q[12:off+4]...)
			for _, a := range answers {
				typ := uint16(1)
				if a.Is6() {
					typ = 28
				}
				resp = append(resp, 0xc0, 0x0c)
				resp = binenc.BigEndian.AppendUint16(resp, typ)
				resp = append(resp, 0, 1, 0, 0, 0, 0)
				raw := a.AsSlice()
				resp = binenc.BigEndian.AppendUint16(resp, uint16(len(raw)))
				resp = append(resp, raw...)
			}
			pc.WriteTo(resp, from)
		}
	}()
}

func readQName(b []byte, off int) (string, int) {
	var labels []string
	for off < len(b) {
		l := int(b[off])
		off++
		if l == 0 {
			break
		}
		if off+l > len(b) {
			return "", len(b)
		}
		labels = append(labels, strings.ToLower(string(b[off:off+l])))
		off += l
	}
	return strings.Join(labels, "."), off
}

// runtimeConfig writes the operator's runtime.toml that lets the relay
// reach the upstream: its DNS server as the resolver, its address exempt
// from the deny set, and the test names answered from the table.
func (u *upstream) runtimeConfig(dir string) string {
	u.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "[relay]\nresolvers = [%q]\nexempt = [%q]\n[relay.test_hosts]\n", u.upAddr+":53", u.upAddr+"/32")
	for _, h := range upstreamHosts {
		fmt.Fprintf(&b, "%q = [%q]\n", h, u.upAddr)
	}
	path := filepath.Join(dir, "runtime.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		u.t.Fatal(err)
	}
	return path
}

func (u *upstream) counts() (httpByHost, tlsBySNI, dnsByQ map[string]int, private int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	cp := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(u.httpByHost), cp(u.tlsBySNI), cp(u.dnsByQ), u.privateConns
}

// relayEvent is one relay audit line (relay.Event's fields, with the
// container's id and spec hash).
type relayEvent struct {
	ID       string   `json:"id"`
	Spec     string   `json:"spec"`
	Event    string   `json:"event"`
	Protocol string   `json:"protocol"`
	Client   string   `json:"client"`
	Host     string   `json:"host"`
	Port     int      `json:"port"`
	QType    string   `json:"qtype"`
	SNI      string   `json:"sni"`
	Answers  []string `json:"answers"`
	Addr     string   `json:"addr"`
	Verdict  string   `json:"verdict"`
	Rule     string   `json:"rule"`
	Reason   string   `json:"reason"`
	Up       int64    `json:"bytes_up"`
	Down     int64    `json:"bytes_down"`
}

// auditFile is what every line of an audit log says about itself.
type auditLine struct {
	ID      string          `json:"id"`
	Event   string          `json:"event"`
	Results json.RawMessage `json:"results"`
	Receipt json.RawMessage `json:"receipt"`
}

// relayEvents reads the relay's lines of an audit log for container id.
func relayEvents(t *testing.T, path, id string) []relayEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []relayEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ev relayEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.Event == "relay" && ev.ID == id {
			out = append(out, ev)
		}
	}
	return out
}

// auditOf returns the lines of an audit log for id with event name ev.
func auditOf(t *testing.T, path, id, ev string) []auditLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l auditLine
		if json.Unmarshal(line, &l) == nil && l.ID == id && l.Event == ev {
			out = append(out, l)
		}
	}
	return out
}

// relayProcesses lists the host's relay processes serving containers
// under state root (argv: vetto-runtime relay <root>/<id>).
func relayProcesses(root string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
		if len(args) == 3 && args[1] == "relay" && strings.HasPrefix(args[2], root+"/") {
			out = append(out, filepath.Base(filepath.Dir(p))+" "+args[2])
		}
	}
	sort.Strings(out)
	return out
}

// checkNoRelayLeft fails the test for any relay still running under the
// env's state root, and kills it.
func (e *env) checkNoRelayLeft() {
	e.t.Helper()
	if left := relayProcesses(e.root); len(left) > 0 {
		e.t.Errorf("leak: relay processes still running: %v", left)
		for _, l := range left {
			pid, _ := strconv.Atoi(strings.Fields(l)[0])
			unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// relayEnv is a test's env with the relay leak check at its end.
func relayEnv(t *testing.T) *env {
	// Registered first, so it runs last: after env's cleanup deleted
	// what the test left.
	var e *env
	t.Cleanup(func() {
		if e != nil {
			e.checkNoRelayLeft()
		}
	})
	e = newEnv(t)
	return e
}
