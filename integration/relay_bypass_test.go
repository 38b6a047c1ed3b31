//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The bypass matrix (issue 15): a real policy container with a network
// allowlist, and every way out of it a hostile workload would try, run
// from inside by testdata/relayprobe. Each case is an assertion on what
// came back and on the relay's audit line for it (found by the client
// port the probe connected from: exactly one per connection, with the
// denial the case expects), and the test's upstreams say from the host
// that nothing reached them that should not have. A few controls first:
// they show the attacks fail because of the relay, not because nothing
// works.

// probeCase is testdata/relayprobe's Case.
type probeCase struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Addr      string `json:"addr,omitempty"`
	Send      string `json:"send,omitempty"`
	Second    string `json:"second,omitempty"`
	Resolve   string `json:"resolve,omitempty"`
	SNI       string `json:"sni,omitempty"`
	NoSNI     bool   `json:"noSni,omitempty"`
	Atyp      int    `json:"atyp,omitempty"`
	Host      string `json:"host,omitempty"`
	Port      int    `json:"port,omitempty"`
	Proto     string `json:"proto,omitempty"`
	QName     string `json:"qname,omitempty"`
	QType     uint16 `json:"qtype,omitempty"`
	LocalPort int    `json:"localPort,omitempty"`
	Local6    bool   `json:"local6,omitempty"`
}

type probeResult struct {
	Name      string   `json:"name"`
	Err       string   `json:"err"`
	Connected bool     `json:"connected"`
	Status    int      `json:"status"`
	Deny      string   `json:"deny"`
	Body      string   `json:"body"`
	Status2   int      `json:"status2"`
	Deny2     string   `json:"deny2"`
	Body2     string   `json:"body2"`
	Socks     int      `json:"socks"`
	Rcode     int      `json:"rcode"`
	Answers   []string `json:"answers"`
	Resolved  string   `json:"resolved"`
}

// bypass is one row: the probe's case, what must come back, and the
// relay's audit rule for each of its connections ("" for none: the
// attempt never reached the relay).
type bypass struct {
	c            probeCase
	check        func(r probeResult) string
	rule, rule2  string
	dnsRule      string // the stub lookup of c.Resolve
	allowed      bool   // a control: the audit verdict is allow
	needsIPv6    bool   // uses ::1, which the namespace may lack
	upstreamAddr string // the audit line's dialled address must be this
}

func httpDeny(status int, id string) func(probeResult) string {
	return func(r probeResult) string {
		if r.Status != status || r.Deny != id {
			return fmt.Sprintf("want HTTP %d with X-Vetto-Deny %s, got %d %q (err %q)", status, id, r.Status, r.Deny, r.Err)
		}
		return ""
	}
}

func httpOK(body string) func(probeResult) string {
	return func(r probeResult) string {
		if r.Status != 200 || !strings.Contains(r.Body, body) {
			return fmt.Sprintf("control: want 200 with %q, got %d %q (err %q)", body, r.Status, r.Body, r.Err)
		}
		return ""
	}
}

func socksReply(code int) func(probeResult) string {
	return func(r probeResult) string {
		if r.Socks != code || !r.Connected {
			return fmt.Sprintf("want SOCKS5 reply %d, got %d (err %q)", code, r.Socks, r.Err)
		}
		return ""
	}
}

const dnsRefused = 5

func dnsRcode(code int) func(probeResult) string {
	return func(r probeResult) string {
		if r.Rcode != code || (code != 0 && len(r.Answers) > 0) || r.Err != "" {
			return fmt.Sprintf("want rcode %d, got %d with %v (err %q)", code, r.Rcode, r.Answers, r.Err)
		}
		return ""
	}
}

// fails: the attempt did not get through, with one of errs.
func fails(errs ...string) func(probeResult) string {
	return func(r probeResult) string {
		for _, e := range errs {
			if strings.HasPrefix(r.Err, e) && r.Status == 0 && r.Body == "" {
				return ""
			}
		}
		return fmt.Sprintf("want a failure (%s), got err %q connected=%v status %d body %q", strings.Join(errs, " or "), r.Err, r.Connected, r.Status, r.Body)
	}
}

func connect(target string, extra ...string) string {
	return "CONNECT " + target + " HTTP/1.1\r\n" + strings.Join(extra, "") + "\r\n"
}

func get(uri string, headers ...string) string {
	return "GET " + uri + " HTTP/1.1\r\n" + strings.Join(headers, "") + "User-Agent: relayprobe\r\n\r\n"
}

func hostHdr(h string) string { return "Host: " + h + "\r\n" }

// bypassCases is the matrix for an upstream u.
func bypassCases(u *upstream, hostPort int, abstract string) []bypass {
	const proxy, proxy6, stub = "127.0.0.1:3128", "[::1]:3128", "127.0.0.1:53"
	up := u.upAddr
	cases := []bypass{
		// Controls.
		{c: probeCase{Name: "control/proxy-http", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test/c1", hostHdr("up.vetto.test"))}, check: httpOK("hello from up.vetto.test/c1"), rule: "up.vetto.test", allowed: true, upstreamAddr: up + ":80"},
		{c: probeCase{Name: "control/connect", Kind: "http", Addr: proxy, Send: connect("up.vetto.test:443", hostHdr("up.vetto.test:443"))}, check: func(r probeResult) string {
			if r.Status != 200 {
				return fmt.Sprintf("control: CONNECT want 200, got %d %q", r.Status, r.Err)
			}
			return ""
		}, rule: "up.vetto.test", allowed: true, upstreamAddr: up + ":443"},
		{c: probeCase{Name: "control/socks5", Kind: "socks", Addr: proxy, Atyp: 3, Host: "up.vetto.test", Port: 80}, check: socksReply(0), rule: "up.vetto.test", allowed: true},
		{c: probeCase{Name: "control/dns", Kind: "dns", Addr: stub, QName: "up.vetto.test", QType: 1}, check: func(r probeResult) string {
			if r.Rcode != 0 || len(r.Answers) != 1 || !strings.HasPrefix(r.Answers[0], "127.77.") {
				return fmt.Sprintf("control: want one stub address in 127.77/16, got rcode %d %v %q", r.Rcode, r.Answers, r.Err)
			}
			return ""
		}, rule: "up.vetto.test", allowed: true},
		{c: probeCase{Name: "control/transparent-tls", Kind: "tls", Addr: "x:443", Resolve: "up.vetto.test", SNI: "up.vetto.test", Send: get("/c5", hostHdr("up.vetto.test"))}, check: httpOK("hello from up.vetto.test/c5"), rule: "up.vetto.test", dnsRule: "up.vetto.test", allowed: true},
		{c: probeCase{Name: "control/transparent-http", Kind: "http", Addr: "x:80", Resolve: "up.vetto.test", Send: get("/c6", hostHdr("up.vetto.test"))}, check: httpOK("hello from up.vetto.test/c6"), rule: "up.vetto.test", dnsRule: "up.vetto.test", allowed: true},
		{c: probeCase{Name: "control/wildcard-via-upstream-dns", Kind: "http", Addr: proxy, Send: get("http://a.wild.vetto.test/c7", hostHdr("a.wild.vetto.test"))}, check: httpOK("hello from a.wild.vetto.test/c7"), rule: "*.wild.vetto.test", allowed: true, upstreamAddr: up + ":80"},
		{c: probeCase{Name: "control/proxy-ipv6", Kind: "http", Addr: proxy6, Local6: true, Send: get("http://up.vetto.test/c8", hostHdr("up.vetto.test"))}, check: httpOK("hello from up.vetto.test/c8"), rule: "up.vetto.test", allowed: true, needsIPv6: true},

		// IPv4 literals in every spelling.
		{c: probeCase{Name: "ipv4/connect-upstream-literal", Kind: "http", Addr: proxy, Send: connect(up + ":80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv4/connect-loopback", Kind: "http", Addr: proxy, Send: connect("127.0.0.1:3128")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv4/absolute-metadata", Kind: "http", Addr: proxy, Send: get("http://169.254.169.254/latest/meta-data/", hostHdr("169.254.169.254"))}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv4/decimal", Kind: "http", Addr: proxy, Send: connect("2130706433:80")}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},
		{c: probeCase{Name: "ipv4/hex", Kind: "http", Addr: proxy, Send: connect("0x7f000001:80")}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},
		{c: probeCase{Name: "ipv4/octal", Kind: "http", Addr: proxy, Send: connect("0177.0.0.1:80")}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},
		{c: probeCase{Name: "ipv4/short", Kind: "http", Addr: proxy, Send: connect("127.1:80")}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},
		{c: probeCase{Name: "ipv4/hex-short", Kind: "http", Addr: proxy, Send: connect("0x7f.1:80")}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},
		{c: probeCase{Name: "ipv4/octal-absolute", Kind: "http", Addr: proxy, Send: get("http://017700000001/", hostHdr("017700000001"))}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},
		{c: probeCase{Name: "ipv4/trailing-dot", Kind: "http", Addr: proxy, Send: connect(up + ".:80")}, check: httpDeny(403, "numeric-name"), rule: "numeric-name"},

		// IPv6: loopback, mapped, NAT64, zones, unspecified.
		{c: probeCase{Name: "ipv6/loopback", Kind: "http", Addr: proxy, Send: connect("[::1]:80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv6/mapped-loopback", Kind: "http", Addr: proxy, Send: connect("[::ffff:127.0.0.1]:80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv6/mapped-metadata", Kind: "http", Addr: proxy, Send: connect("[::ffff:a9fe:a9fe]:80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv6/nat64-metadata", Kind: "http", Addr: proxy, Send: connect("[64:ff9b::a9fe:a9fe]:80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv6/zone-id", Kind: "http", Addr: proxy, Send: connect("[fe80::1%25lo]:80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv6/unspecified", Kind: "http", Addr: proxy, Send: connect("[::]:80")}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},
		{c: probeCase{Name: "ipv6/absolute-to-the-proxy", Kind: "http", Addr: proxy, Send: get("http://[::1]:3128/", hostHdr("[::1]:3128"))}, check: httpDeny(403, "ip-literal"), rule: "ip-literal"},

		// SOCKS5 address types and domains that are addresses.
		{c: probeCase{Name: "socks/atyp-ipv4", Kind: "socks", Addr: proxy, Atyp: 1, Host: "127.0.0.1", Port: 80}, check: socksReply(2), rule: "ip-literal"},
		{c: probeCase{Name: "socks/atyp-ipv6", Kind: "socks", Addr: proxy, Atyp: 4, Host: "::1", Port: 80}, check: socksReply(2), rule: "ip-literal"},
		{c: probeCase{Name: "socks/domain-metadata-literal", Kind: "socks", Addr: proxy, Atyp: 3, Host: "169.254.169.254", Port: 80}, check: socksReply(2), rule: "ip-literal"},
		{c: probeCase{Name: "socks/domain-numeric", Kind: "socks", Addr: proxy, Atyp: 3, Host: "0x7f.1", Port: 80}, check: socksReply(2), rule: "numeric-name"},
		{c: probeCase{Name: "socks/domain-not-allowed", Kind: "socks", Addr: proxy, Atyp: 3, Host: "evil.example", Port: 443}, check: socksReply(2), rule: "no-rule"},
		{c: probeCase{Name: "socks/socks4", Kind: "tcp", Addr: proxy, Send: "\x04\x01\x00\x50\x7f\x00\x00\x01\x00"}, check: func(r probeResult) string {
			if r.Body != "" {
				return fmt.Sprintf("want the connection closed with nothing sent, got %q", r.Body)
			}
			return ""
		}, rule: "socks"},

		// Names: trailing dots, case, look-alikes, smuggled ports,
		// userinfo, wildcard edges.
		{c: probeCase{Name: "name/trailing-dot", Kind: "http", Addr: proxy, Send: connect("evil.example.:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/two-trailing-dots", Kind: "http", Addr: proxy, Send: connect("up.vetto.test..:80")}, check: httpDeny(400, "bad-name"), rule: "bad-name"},
		{c: probeCase{Name: "name/upper-case", Kind: "http", Addr: proxy, Send: connect("EVIL.EXAMPLE:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/allowed-host-other-port", Kind: "http", Addr: proxy, Send: connect("Up.Vetto.Test:8080")}, check: httpDeny(403, "port"), rule: "port"},
		{c: probeCase{Name: "name/allowed-host-ssh", Kind: "http", Addr: proxy, Send: connect("up.vetto.test:22")}, check: httpDeny(403, "port"), rule: "port"},
		{c: probeCase{Name: "name/idn-lookalike-alabel", Kind: "http", Addr: proxy, Send: connect("xn--u-5tb.vetto.test:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/idn-lookalike-utf8", Kind: "http", Addr: proxy, Send: connect("uр.vetto.test:443")}, check: httpDeny(400, "bad-name"), rule: "bad-name"},
		{c: probeCase{Name: "name/fullwidth-dot", Kind: "http", Addr: proxy, Send: connect("up。vetto.test:443")}, check: httpDeny(400, "bad-name"), rule: "bad-name"},
		{c: probeCase{Name: "name/port-in-the-middle", Kind: "http", Addr: proxy, Send: connect("up.vetto.test:443.evil.example:443")}, check: httpDeny(400, "bad-request"), rule: "bad-request"},
		{c: probeCase{Name: "name/userinfo-allowed-first", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test@evil.example/", hostHdr("evil.example"))}, check: httpDeny(400, "userinfo"), rule: "userinfo"},
		{c: probeCase{Name: "name/userinfo-allowed-last", Kind: "http", Addr: proxy, Send: get("http://evil.example@up.vetto.test/", hostHdr("up.vetto.test"))}, check: httpDeny(400, "userinfo"), rule: "userinfo"},
		{c: probeCase{Name: "name/wildcard-apex", Kind: "http", Addr: proxy, Send: connect("wild.vetto.test:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/wildcard-suffix", Kind: "http", Addr: proxy, Send: connect("evilwild.vetto.test:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/wildcard-then-evil", Kind: "http", Addr: proxy, Send: connect("a.wild.vetto.test.evil.example:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/localhost", Kind: "http", Addr: proxy, Send: connect("localhost:3128")}, check: httpDeny(403, "no-rule"), rule: "no-rule"},
		{c: probeCase{Name: "name/connect-without-port", Kind: "http", Addr: proxy, Send: connect("up.vetto.test")}, check: httpDeny(400, "bad-name"), rule: "bad-name"},

		// Host, SNI and CONNECT that disagree.
		{c: probeCase{Name: "mismatch/connect-host-header", Kind: "http", Addr: proxy, Send: connect("up.vetto.test:443", hostHdr("evil.example:443"))}, check: httpDeny(400, "host-mismatch"), rule: "host-mismatch"},
		{c: probeCase{Name: "mismatch/absolute-host-header", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test/", hostHdr("evil.example"))}, check: httpDeny(400, "host-mismatch"), rule: "host-mismatch"},
		{c: probeCase{Name: "mismatch/two-host-headers", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test/", hostHdr("up.vetto.test"), hostHdr("evil.example"))}, check: httpDeny(400, "bad-request"), rule: "bad-request"},
		{c: probeCase{Name: "mismatch/no-host-header", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test/")}, check: httpDeny(400, "host-mismatch"), rule: "host-mismatch"},
		{c: probeCase{Name: "mismatch/keep-alive-second-request", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test/k1", hostHdr("up.vetto.test")), Second: get("http://evil.example/k2", hostHdr("evil.example"))}, check: func(r probeResult) string {
			if r.Status != 200 || r.Status2 != 403 || r.Deny2 != "no-rule" {
				return fmt.Sprintf("want 200 then 403 no-rule on one connection, got %d then %d %q (err %q)", r.Status, r.Status2, r.Deny2, r.Err)
			}
			return ""
		}, rule: "up.vetto.test", rule2: "no-rule"},
		{c: probeCase{Name: "mismatch/transparent-sni", Kind: "tls", Addr: "x:443", Resolve: "up.vetto.test", SNI: "!evil.example", Send: get("/", hostHdr("evil.example"))}, check: fails("handshake"), rule: "sni-mismatch", dnsRule: "up.vetto.test"},
		{c: probeCase{Name: "mismatch/transparent-no-sni", Kind: "tls", Addr: "x:443", Resolve: "up.vetto.test", NoSNI: true, Send: get("/", hostHdr("up.vetto.test"))}, check: fails("handshake"), rule: "sni-missing", dnsRule: "up.vetto.test"},
		{c: probeCase{Name: "mismatch/transparent-host", Kind: "http", Addr: "x:80", Resolve: "up.vetto.test", Send: get("/", hostHdr("evil.example"))}, check: httpDeny(400, "host-mismatch"), rule: "host-mismatch", dnsRule: "up.vetto.test"},
		{c: probeCase{Name: "mismatch/transparent-absolute-form", Kind: "http", Addr: "x:80", Resolve: "up.vetto.test", Send: get("http://evil.example/", hostHdr("evil.example"))}, check: httpDeny(400, "bad-request"), rule: "bad-request", dnsRule: "up.vetto.test"},
		{c: probeCase{Name: "mismatch/transparent-not-a-stub-address", Kind: "tls", Addr: "127.0.0.1:443", SNI: "up.vetto.test", Send: get("/", hostHdr("up.vetto.test"))}, check: fails("handshake"), rule: "no-name"},
		{c: probeCase{Name: "mismatch/transparent-unissued-stub-address", Kind: "http", Addr: "127.77.200.200:80", Send: get("/", hostHdr("up.vetto.test"))}, check: fails("EOF", "ECONNRESET"), rule: "no-name"},
		{c: probeCase{Name: "proxy/trace", Kind: "http", Addr: proxy, Send: "TRACE http://up.vetto.test/ HTTP/1.1\r\nHost: up.vetto.test\r\n\r\n"}, check: httpDeny(405, "method"), rule: "method"},
		{c: probeCase{Name: "proxy/absolute-https", Kind: "http", Addr: proxy, Send: get("https://up.vetto.test/", hostHdr("up.vetto.test"))}, check: httpDeny(400, "bad-request"), rule: "bad-request"},
		{c: probeCase{Name: "proxy/origin-form", Kind: "http", Addr: proxy, Send: get("/", hostHdr("up.vetto.test"))}, check: httpDeny(400, "bad-request"), rule: "bad-request"},
		{c: probeCase{Name: "proxy/tls-to-the-proxy", Kind: "tls", Addr: proxy, SNI: "up.vetto.test", Send: get("/", hostHdr("up.vetto.test"))}, check: fails("handshake"), rule: "bad-request"},
		{c: probeCase{Name: "proxy/ipv6-listener-denies-too", Kind: "http", Addr: proxy6, Local6: true, Send: connect("evil.example:443")}, check: httpDeny(403, "no-rule"), rule: "no-rule", needsIPv6: true},

		// DNS: types, exfiltration, other resolvers.
		{c: probeCase{Name: "dns/txt", Kind: "dns", Addr: stub, QName: "up.vetto.test", QType: 16}, check: dnsRcode(dnsRefused), rule: "dns-type"},
		{c: probeCase{Name: "dns/any", Kind: "dns", Addr: stub, QName: "up.vetto.test", QType: 255}, check: dnsRcode(dnsRefused), rule: "dns-type"},
		{c: probeCase{Name: "dns/mx", Kind: "dns", Addr: stub, QName: "up.vetto.test", QType: 15}, check: dnsRcode(dnsRefused), rule: "dns-type"},
		{c: probeCase{Name: "dns/not-allowed", Kind: "dns", Addr: stub, QName: "evil.example", QType: 1}, check: dnsRcode(dnsRefused), rule: "no-rule"},
		{c: probeCase{Name: "dns/exfiltration-label", Kind: "dns", Addr: stub, QName: "c2VjcmV0LWRhdGE.exfil.vetto.test", QType: 1}, check: dnsRcode(dnsRefused), rule: "no-rule"},
		{c: probeCase{Name: "dns/exfiltration-txt", Kind: "dns", Addr: stub, QName: "c2VjcmV0LXR4dA.exfil.vetto.test", QType: 16}, check: dnsRcode(dnsRefused), rule: "no-rule"},
		{c: probeCase{Name: "dns/tcp-not-allowed", Kind: "dns", Proto: "tcp", Addr: stub, QName: "evil.example", QType: 1}, check: dnsRcode(dnsRefused), rule: "no-rule"},
		{c: probeCase{Name: "dns/numeric-qname", Kind: "dns", Addr: stub, QName: "127.0.0.1", QType: 1}, check: dnsRcode(dnsRefused), rule: "numeric-name"},
		{c: probeCase{Name: "dns/ipv6-stub", Kind: "dns", Addr: "[::1]:53", Local6: true, QName: "evil.example", QType: 1}, check: dnsRcode(dnsRefused), rule: "no-rule", needsIPv6: true},
		{c: probeCase{Name: "dns/outside-resolver", Kind: "dns", Addr: up + ":53", QName: "evil.example", QType: 1}, check: fails("ENETUNREACH")},
		{c: probeCase{Name: "dns/public-resolver", Kind: "dns", Addr: "8.8.8.8:53", QName: "evil.example", QType: 1}, check: fails("ENETUNREACH")},

		// Answers in the deny set, and rebinding.
		{c: probeCase{Name: "deny-set/metadata", Kind: "http", Addr: proxy, Send: get("http://meta.vetto.test/latest/meta-data/", hostHdr("meta.vetto.test"))}, check: httpDeny(403, "deny-set:cloud-metadata"), rule: "deny-set:cloud-metadata"},
		{c: probeCase{Name: "deny-set/private", Kind: "http", Addr: proxy, Send: get("http://private.vetto.test/", hostHdr("private.vetto.test"))}, check: httpDeny(403, "deny-set:private"), rule: "deny-set:private"},
		// 127.0.0.1 is lo's, an address of the host: the relay names that
		// row first; another loopback address is the loopback row.
		{c: probeCase{Name: "deny-set/loopback-other", Kind: "http", Addr: proxy, Send: get("http://loop2.vetto.test/", hostHdr("loop2.vetto.test"))}, check: httpDeny(403, "deny-set:loopback"), rule: "deny-set:loopback"},
		{c: probeCase{Name: "deny-set/cgnat", Kind: "http", Addr: proxy, Send: get("http://cgnat.vetto.test/", hostHdr("cgnat.vetto.test"))}, check: httpDeny(403, "deny-set:cgnat"), rule: "deny-set:cgnat"},
		{c: probeCase{Name: "deny-set/alibaba-metadata", Kind: "http", Addr: proxy, Send: get("http://ali.vetto.test/", hostHdr("ali.vetto.test"))}, check: httpDeny(403, "deny-set:cloud-metadata"), rule: "deny-set:cloud-metadata"},
		{c: probeCase{Name: "deny-set/ula-aaaa", Kind: "http", Addr: proxy, Send: get("http://ula.vetto.test/", hostHdr("ula.vetto.test"))}, check: httpDeny(403, "deny-set:ula"), rule: "deny-set:ula"},
		{c: probeCase{Name: "deny-set/loopback", Kind: "http", Addr: proxy, Send: get("http://loop.vetto.test/", hostHdr("loop.vetto.test"))}, check: httpDeny(403, "deny-set:host-address"), rule: "deny-set:host-address"},
		{c: probeCase{Name: "deny-set/host-address", Kind: "http", Addr: proxy, Send: get("http://hostaddr.vetto.test/", hostHdr("hostaddr.vetto.test"))}, check: httpDeny(403, "deny-set:host-address"), rule: "deny-set:host-address"},
		{c: probeCase{Name: "deny-set/mapped-loopback-aaaa", Kind: "http", Addr: proxy, Send: get("http://mapped.vetto.test/", hostHdr("mapped.vetto.test"))}, check: httpDeny(403, "deny-set:host-address"), rule: "deny-set:host-address"},
		{c: probeCase{Name: "deny-set/nat64-metadata-aaaa", Kind: "http", Addr: proxy, Send: get("http://nat64.vetto.test/", hostHdr("nat64.vetto.test"))}, check: httpDeny(403, "deny-set:nat64:cloud-metadata"), rule: "deny-set:nat64:cloud-metadata"},
		{c: probeCase{Name: "rebind/first", Kind: "http", Addr: proxy, Send: get("http://rebind.vetto.test/r1", hostHdr("rebind.vetto.test"))}, check: httpOK("hello from rebind.vetto.test/r1"), rule: "rebind.vetto.test", allowed: true, upstreamAddr: up + ":80"},
		{c: probeCase{Name: "rebind/ttl0-second-stays-pinned", Kind: "http", Addr: proxy, Send: get("http://rebind.vetto.test/r2", hostHdr("rebind.vetto.test"))}, check: httpOK("hello from rebind.vetto.test/r2"), rule: "rebind.vetto.test", allowed: true, upstreamAddr: up + ":80"},

		// What the namespace itself stops: other protocols, direct
		// connections, the host's sockets.
		{c: probeCase{Name: "direct/quic-upstream", Kind: "udp", Addr: up + ":443", Send: "\xc0\x00\x00\x00\x01"}, check: fails("ENETUNREACH")},
		{c: probeCase{Name: "direct/quic-to-stub-address", Kind: "udp", Addr: "127.77.0.1:443", Send: "\xc0\x00\x00\x00\x01"}, check: fails("ECONNREFUSED", "timeout")},
		{c: probeCase{Name: "direct/icmp-ping", Kind: "icmp", Addr: up}, check: fails("ENETUNREACH", "EACCES", "EPERM")},
		{c: probeCase{Name: "direct/raw-socket", Kind: "raw"}, check: fails("EPERM")},
		{c: probeCase{Name: "direct/packet-socket", Kind: "packet"}, check: fails("EPERM")},
		{c: probeCase{Name: "direct/tcp-upstream", Kind: "tcp", Addr: up + ":80", Send: "GET / HTTP/1.0\r\n\r\n"}, check: fails("ENETUNREACH")},
		{c: probeCase{Name: "direct/tcp-private", Kind: "tcp", Addr: u.privAddr + ":80"}, check: fails("ENETUNREACH")},
		{c: probeCase{Name: "direct/tcp-metadata", Kind: "tcp", Addr: "169.254.169.254:80"}, check: fails("ENETUNREACH")},
		{c: probeCase{Name: "direct/tcp-ipv6", Kind: "tcp", Addr: "[2001:db8::1]:80"}, check: fails("ENETUNREACH", "EADDRNOTAVAIL")},
		{c: probeCase{Name: "direct/host-loopback-listener", Kind: "tcp", Addr: fmt.Sprintf("127.0.0.1:%d", hostPort)}, check: fails("ECONNREFUSED")},
		{c: probeCase{Name: "direct/host-abstract-unix-socket", Kind: "unix", Addr: abstract}, check: fails("ECONNREFUSED")},
	}
	return cases
}

func TestRelayBypassMatrix(t *testing.T) {
	e := relayEnv(t)
	u := newUpstream(t)
	cfg := u.runtimeConfig(e.tmp)
	p := policyProject(e)

	// The host's own loopback and abstract-socket listeners, which the
	// container must not reach.
	hostLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostLn.Close()
	abstract := fmt.Sprintf("vetto-relay-test-%d", os.Getpid())
	unixLn, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer unixLn.Close()
	var hostAccepted, unixAccepted int
	go func() {
		for c, err := hostLn.Accept(); err == nil; c, err = hostLn.Accept() {
			hostAccepted++
			c.Close()
		}
	}()
	go func() {
		for c, err := unixLn.Accept(); err == nil; c, err = unixLn.Accept() {
			unixAccepted++
			c.Close()
		}
	}()

	cases := bypassCases(u, hostLn.Addr().(*net.TCPAddr).Port, abstract)
	policy := relayPolicy("up.vetto.test", "*.wild.vetto.test", "rebind.vetto.test", "meta.vetto.test", "private.vetto.test",
		"loop.vetto.test", "hostaddr.vetto.test", "mapped.vetto.test", "nat64.vetto.test", "loop2.vetto.test", "cgnat.vetto.test", "ali.vetto.test", "ula.vetto.test")
	attacks := runMatrix(t, e, u, cfg, p, policy, cases)
	if attacks < 60 {
		t.Errorf("only %d attack cases; the matrix has at least 60", attacks)
	}
	httpByHost, tlsBySNI, dnsByQ, private := u.counts()
	if private != 0 {
		t.Errorf("the private-range server was reached %d time(s)", private)
	}
	if hostAccepted != 0 || unixAccepted != 0 {
		t.Errorf("the host's listeners accepted %d TCP and %d abstract-socket connection(s) from the container", hostAccepted, unixAccepted)
	}
	for name, n := range dnsByQ {
		if strings.Contains(name, "exfil") || strings.Contains(name, "evil") {
			t.Errorf("the upstream DNS server was asked %d time(s) for %q: the stub must never ask upstream", n, name)
		}
	}
	if dnsByQ["rebind.vetto.test"] == 0 || u.rebindAnswers != 1 {
		t.Errorf("rebind.vetto.test: %d questions, %d A answers; the relay must resolve once and pin the answer", dnsByQ["rebind.vetto.test"], u.rebindAnswers)
	}
	for host := range httpByHost {
		if !strings.HasSuffix(host, ".vetto.test") || strings.Contains(host, "evil") {
			t.Errorf("the upstream served a request for %q", host)
		}
	}
	for sni := range tlsBySNI {
		if sni != "up.vetto.test" {
			t.Errorf("the upstream's TLS saw SNI %q", sni)
		}
	}
}

// Mode strict: exact host:port rules, and every tunnel opens with a TLS
// ClientHello for its own host — a CONNECT to an allowed name that then
// speaks TLS to another (or plain text) goes nowhere.
func TestRelayStrictMode(t *testing.T) {
	e := relayEnv(t)
	u := newUpstream(t)
	cfg := u.runtimeConfig(e.tmp)
	p := policyProject(e)
	const proxy = "127.0.0.1:3128"
	cases := []bypass{
		{c: probeCase{Name: "control/connect-tls", Kind: "connect-tls", Addr: proxy, Host: "up.vetto.test:443", SNI: "up.vetto.test", Send: get("/s1", hostHdr("up.vetto.test"))}, check: httpOK("hello from up.vetto.test/s1"), rule: "up.vetto.test:443", allowed: true, upstreamAddr: u.upAddr + ":443"},
		{c: probeCase{Name: "strict/sni-mismatch", Kind: "connect-tls", Addr: proxy, Host: "up.vetto.test:443", SNI: "!evil.example", Send: get("/", hostHdr("evil.example"))}, check: fails("handshake"), rule: "sni-mismatch"},
		{c: probeCase{Name: "strict/sni-missing", Kind: "connect-tls", Addr: proxy, Host: "up.vetto.test:443", NoSNI: true, Send: get("/", hostHdr("up.vetto.test"))}, check: fails("handshake"), rule: "sni-missing"},
		{c: probeCase{Name: "strict/plain-text-in-the-tunnel", Kind: "http", Addr: proxy, Send: connect("up.vetto.test:443") + get("/", hostHdr("up.vetto.test"))}, check: func(r probeResult) string {
			if r.Status != 200 || r.Body != "" {
				return fmt.Sprintf("want the tunnel opened and nothing answered through it, got %d %q", r.Status, r.Body)
			}
			return ""
		}, rule: "not-tls"},
		{c: probeCase{Name: "strict/other-port", Kind: "http", Addr: proxy, Send: get("http://up.vetto.test/", hostHdr("up.vetto.test"))}, check: httpDeny(403, "port"), rule: "port"},
		{c: probeCase{Name: "strict/socks-other-port", Kind: "socks", Addr: proxy, Atyp: 3, Host: "up.vetto.test", Port: 8443}, check: socksReply(2), rule: "port"},
	}
	policy := "[network]\nmode = \"strict\"\nallow = [\"up.vetto.test:443\"]\n"
	runMatrix(t, e, u, cfg, p, policy, cases)
	if _, tlsBySNI, _, _ := u.counts(); tlsBySNI["evil.example"] != 0 || tlsBySNI[""] != 0 {
		t.Errorf("the upstream saw a ClientHello the relay should have stopped: %v", tlsBySNI)
	}
}

// buildRelayProbe builds testdata/relayprobe, static, into dir.
func buildRelayProbe(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "relayprobe")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./testdata/relayprobe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build relayprobe: %v: %s", err, b)
	}
	return out
}

// runMatrix runs the probe with cases in a container compiled from policy
// for project p, and judges every case: its result, and exactly the audit
// lines it expects for each of its connections; every relay line must be
// some case's. It returns the number of attack (not control) cases.
func runMatrix(t *testing.T, e *env, u *upstream, cfg, p, policy string, cases []bypass) int {
	t.Helper()
	for i := range cases {
		if cases[i].rule != "" {
			cases[i].c.LocalPort = 21000 + 10*i
		}
	}
	var list []probeCase
	for _, b := range cases {
		list = append(list, b.c)
	}
	data, _ := json.Marshal(list)
	for name, content := range map[string][]byte{"cases.json": data, "cases.ca.pem": u.caPEM} {
		if err := os.WriteFile(filepath.Join(p, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	probe := buildRelayProbe(t, p)
	bundle, _ := e.compilePolicy(policy, p, probe+" "+filepath.Join(p, "cases.json"))
	audit := filepath.Join(e.tmp, "audit.jsonl")
	id := e.id()
	r := e.vetto("--config", cfg, "--audit-log", audit, "run", "-b", bundle, id)
	if r.code != 0 {
		t.Fatalf("run the probe: %s", r)
	}
	results := map[string]probeResult{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var res probeResult
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			t.Fatalf("probe output %q: %v", sc.Text(), err)
		}
		results[res.Name] = res
	}
	events := relayEvents(t, audit, id)
	byClient := map[string][]relayEvent{}
	for _, ev := range events {
		byClient[ev.Client] = append(byClient[ev.Client], ev)
	}
	ipv6 := false
	for _, v := range auditOf(t, audit, id, "verdicts") {
		ipv6 = ipv6 || strings.Contains(string(v.Results), `"relay/socket/proxy6","verdict":"PASS"`)
	}
	accounted := 0
	attacks := 0
	for _, b := range cases {
		t.Run(b.c.Name, func(t *testing.T) {
			res, ok := results[b.c.Name]
			if !ok {
				t.Fatalf("the probe reported nothing for %s", b.c.Name)
			}
			if b.needsIPv6 && !ipv6 {
				// No ::1 on lo: the relay has no IPv6 socket, and the
				// attempt must fail to connect at all.
				if res.Connected || res.Status != 0 {
					t.Fatalf("no relay socket on ::1, yet the attempt connected: %+v", res)
				}
				return
			}
			if why := b.check(res); why != "" {
				t.Errorf("%s: %s", b.c.Name, why)
			}
			if !b.allowed {
				attacks++
			}
			client := func(port int) string {
				if b.c.Local6 {
					return fmt.Sprintf("[::1]:%d", port)
				}
				return fmt.Sprintf("127.0.0.1:%d", port)
			}
			expect := func(port int, rules ...string) {
				got := byClient[client(port)]
				accounted += len(got)
				var gotRules []string
				for _, ev := range got {
					gotRules = append(gotRules, ev.Rule)
				}
				if !slices.Equal(gotRules, rules) {
					t.Errorf("audit lines for client %s: rules %q, want exactly %q (%+v)", client(port), gotRules, rules, got)
					return
				}
				for i, ev := range got {
					want := "deny"
					if b.allowed || (i == 0 && b.rule2 != "") || port == b.c.LocalPort+2 {
						want = "allow"
					}
					if ev.Verdict != want || ev.Spec == "" {
						t.Errorf("audit line %+v: want verdict %s with the spec hash", ev, want)
					}
					if want == "deny" && ev.Reason == "" {
						t.Errorf("audit line %+v: a denial without a reason", ev)
					}
					if b.upstreamAddr != "" && ev.Addr != b.upstreamAddr {
						t.Errorf("audit line %+v: dialled %q, want %s", ev, ev.Addr, b.upstreamAddr)
					}
				}
			}
			if b.rule == "" {
				return
			}
			rules := []string{b.rule}
			if b.rule2 != "" {
				rules = append(rules, b.rule2)
			}
			expect(b.c.LocalPort, rules...)
			if b.dnsRule != "" {
				expect(b.c.LocalPort+2, b.dnsRule)
			}
		})
	}
	t.Logf("bypass matrix: %d attack cases, %d controls (::1 on the container's lo: %v)", attacks, len(cases)-attacks, ipv6)
	if accounted != len(events) {
		var stray []relayEvent
		for _, ev := range events {
			known := false
			for _, b := range cases {
				for _, port := range []int{b.c.LocalPort, b.c.LocalPort + 2} {
					known = known || b.rule != "" && (ev.Client == fmt.Sprintf("127.0.0.1:%d", port) || ev.Client == fmt.Sprintf("[::1]:%d", port))
				}
			}
			if !known {
				stray = append(stray, ev)
			}
		}
		t.Errorf("%d relay audit lines, %d accounted for by the cases; not from any case: %+v", len(events), accounted, stray)
	}
	return attacks
}
