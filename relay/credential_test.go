package relay

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// The credential tests are the attack: a workload that wants the token
// the relay adds for example.com. It may send what it likes to the relay;
// it must never get the value back, in any response, error or event, and
// never choose what the origin receives.

const testSecret = "s3cr3t-TOKEN-4f1c9a" // what must never come back

// credSettings: example.com allowed on the origin's two ports, the TLS
// one with a credential; other.example (the same origin) without one.
func credSettings(o *origin) Settings {
	s := originSettings(o, ModeAllowlist)
	s.Allow = append(s.Allow, fmt.Sprintf("other.example:%d", o.hp))
	s.TestHosts["other.example"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	s.Credentials = []Credential{{Host: "example.com", Port: o.sp, Header: "Authorization", Value: "Bearer " + testSecret}}
	s.RootCAs = o.pool
	return s
}

// noSecret fails when the secret is in any of what the workload or the
// audit log got.
func noSecret(t *testing.T, what string, data []byte) {
	t.Helper()
	if strings.Contains(string(data), testSecret) {
		t.Errorf("the credential's value is in %s: %q", what, data)
	}
}

func eventsJSON(t *testing.T, evs []Event) []byte {
	t.Helper()
	data, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sendRaw writes a raw request to addr and reads one response.
func sendRaw(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response to %q: %v", firstLine(raw), err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}

// A plain HTTP request for the credential's host reaches the origin over
// verified TLS with the credential's header and only that one, whatever
// the workload sent under that name, in whatever spelling, and however
// it tried to have it removed or doubled.
func TestCredentialInjected(t *testing.T) {
	tests := []struct {
		name    string
		headers string // what the workload adds to its request
	}{
		{"no header", ""},
		{"own value", "Authorization: Bearer workload-chosen\r\n"},
		{"two of its own", "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n"},
		{"lower case", "authorization: Bearer lower\r\n"},
		{"named in Connection", "Connection: Authorization\r\nAuthorization: Bearer hop\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t)
			h := newHarness(t, credSettings(o), harnessConfig{})
			resp, body := sendRaw(t, h.proxy, "GET http://example.com/api?q=1 HTTP/1.1\r\nHost: example.com\r\n"+tc.headers+"\r\n")
			if resp.StatusCode != 200 || string(body) != "hello GET /api 0" {
				t.Fatalf("response %d %q, want 200 from the origin", resp.StatusCode, body)
			}
			r := o.last()
			if r == nil || r.TLS == nil {
				t.Fatalf("origin saw %+v, want the request over TLS", r)
			}
			if got := r.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+testSecret {
				t.Errorf("origin got Authorization %q, want exactly the credential", got)
			}
			if r.Host != "example.com:"+fmt.Sprint(o.sp) || r.RequestURI != "/api?q=1" {
				t.Errorf("origin saw Host %q URI %q", r.Host, r.RequestURI)
			}
			noSecret(t, "the response", body)
			for k, v := range resp.Header {
				noSecret(t, "response header "+k, []byte(strings.Join(v, ",")))
			}
			evs := h.waitEvents(1)
			noSecret(t, "the events", eventsJSON(t, evs))
			if len(evs) != 1 || evs[0].Verdict != Allow || evs[0].Credential != "Authorization" || evs[0].Port != o.sp || evs[0].Protocol != ProtoHTTP {
				t.Errorf("events %+v, want one allowed http request to port %d with the credential named", evs, o.sp)
			}
			if st := h.srv.Stats(); st.Credentialed != 1 || st.Allowed != 1 {
				t.Errorf("stats %+v, want 1 allowed, 1 credentialed", st)
			}
		})
	}
}

// The same through the transparent port 80: a program that resolved the
// name through the stub and sent plain HTTP to its address.
func TestCredentialTransparent(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, credSettings(o), harnessConfig{transparent: map[uint16]string{80: "127.77.0.1:0"}})
	h.resolveFake("example.com")
	resp, body := sendRaw(t, h.trans[80], "GET /t HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic d29ya2xvYWQ=\r\n\r\n")
	if resp.StatusCode != 200 || string(body) != "hello GET /t 0" {
		t.Fatalf("response %d %q, want 200", resp.StatusCode, body)
	}
	r := o.last()
	if r.TLS == nil || r.Header.Get("Authorization") != "Bearer "+testSecret || len(r.Header.Values("Authorization")) != 1 {
		t.Errorf("origin got TLS %v Authorization %q, want TLS and the credential only", r.TLS != nil, r.Header.Values("Authorization"))
	}
	noSecret(t, "the events", eventsJSON(t, h.waitEvents(2)))
}

// Hosts without a credential are forwarded exactly as before: plain, with
// the workload's own header; and a tunnel to the credential's host (the
// workload's own TLS) gets nothing added: the relay never intercepts TLS.
func TestCredentialOtherHostsUntouched(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, credSettings(o), harnessConfig{})
	resp, body := sendRaw(t, h.proxy, fmt.Sprintf("GET http://other.example:%d/o HTTP/1.1\r\nHost: other.example:%d\r\nAuthorization: mine\r\n\r\n", o.hp, o.hp))
	if resp.StatusCode != 200 {
		t.Fatalf("response %d %q", resp.StatusCode, body)
	}
	if r := o.last(); r.TLS != nil || r.Header.Get("Authorization") != "mine" {
		t.Errorf("origin got TLS %v Authorization %q, want plain HTTP with the workload's own header", r.TLS != nil, r.Header.Values("Authorization"))
	}
	// The credential's host on a port other than 80: forwarded as
	// before, plain, with no credential.
	resp, body = sendRaw(t, h.proxy, fmt.Sprintf("GET http://example.com:%d/p HTTP/1.1\r\nHost: example.com:%d\r\n\r\n", o.hp, o.hp))
	if resp.StatusCode != 200 {
		t.Fatalf("response %d %q", resp.StatusCode, body)
	}
	if r := o.last(); r.TLS != nil || r.Header.Get("Authorization") != "" {
		t.Errorf("example.com:%d got TLS %v Authorization %q, want plain and none", o.hp, r.TLS != nil, r.Header.Values("Authorization"))
	}
	// CONNECT to the credential's TLS port: a tunnel, nothing added.
	c := h.dialProxy()
	fmt.Fprintf(c, "CONNECT example.com:%d HTTP/1.1\r\nHost: example.com:%d\r\n\r\n", o.sp, o.sp)
	br := bufio.NewReader(c)
	cr, err := http.ReadResponse(br, nil)
	if err != nil || cr.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", cr, err)
	}
	evs := h.waitEvents(2)
	for _, e := range evs {
		if e.Credential != "" {
			t.Errorf("event %+v has a credential; only example.com on port 80 gets one", e)
		}
	}
	if st := h.srv.Stats(); st.Credentialed != 0 {
		t.Errorf("stats %+v, want nothing credentialed", st)
	}
}

// An upstream whose certificate the relay cannot verify never gets the
// request: the credential goes only to the host it is for.
func TestCredentialUpstreamNotVerified(t *testing.T) {
	o := newOrigin(t)
	s := credSettings(o)
	s.RootCAs = x509.NewCertPool() // trusts nothing
	h := newHarness(t, s, harnessConfig{})
	resp, body := sendRaw(t, h.proxy, "GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("response %d %q, want 502", resp.StatusCode, body)
	}
	if r := o.last(); r != nil {
		t.Errorf("the origin got a request (%s) over an unverified connection", r.RequestURI)
	}
	noSecret(t, "the 502", body)
	noSecret(t, "the events", eventsJSON(t, h.waitEvents(1)))
}

// A denied request for the credential's host (a path the rules do not
// reach: a Host that disagrees) is refused as before, and the refusal
// carries no value.
func TestCredentialDenialsSayNothing(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, credSettings(o), harnessConfig{})
	for _, raw := range []string{
		"GET http://example.com/x HTTP/1.1\r\nHost: other.example\r\n\r\n",
		"TRACE http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n",
	} {
		resp, body := sendRaw(t, h.proxy, raw)
		if resp.StatusCode < 400 {
			t.Errorf("%q: %d, want a refusal", firstLine(raw), resp.StatusCode)
		}
		noSecret(t, "a refusal", body)
	}
	if r := o.last(); r != nil {
		t.Errorf("origin got %s", r.RequestURI)
	}
	noSecret(t, "the events", eventsJSON(t, h.waitEvents(2)))
}

// NewConfig refuses a credential it could not use safely, naming it by
// index and host and never by value.
func TestCredentialSettingsRefused(t *testing.T) {
	base := Settings{Mode: ModeAllowlist, Allow: []string{"example.com", "*.wild.example", "eighty.example:80"}}
	good := Credential{Host: "example.com", Header: "Authorization", Value: "Bearer " + testSecret}
	tests := []struct {
		name string
		mode Mode
		cred []Credential
		want string
	}{
		{"host not allowed", "", []Credential{{Host: "evil.example", Header: "X-Key", Value: testSecret}}, `credentials[0] (evil.example): no rule allows evil.example:443`},
		{"allowed on 80 only", "", []Credential{{Host: "eighty.example", Header: "X-Key", Value: testSecret}}, `no rule allows eighty.example:443`},
		{"strict without :443", ModeStrict, []Credential{good}, `no rule allows example.com:443`},
		{"wildcard host", "", []Credential{{Host: "*.wild.example", Header: "X-Key", Value: testSecret}}, `credentials[0] host "*.wild.example"`},
		{"ip literal", "", []Credential{{Host: "127.0.0.1", Header: "X-Key", Value: testSecret}}, `credentials[0] host "127.0.0.1"`},
		{"bad header", "", []Credential{{Host: "example.com", Header: "X Key", Value: testSecret}}, `header "X Key": not a header name`},
		{"reserved header", "", []Credential{{Host: "example.com", Header: "host", Value: testSecret}}, `the relay sets it itself`},
		{"hop header", "", []Credential{{Host: "example.com", Header: "Proxy-Authorization", Value: testSecret}}, `the relay sets it itself`},
		{"empty value", "", []Credential{{Host: "example.com", Header: "X-Key"}}, `credentials[0] (example.com): empty value`},
		{"line break", "", []Credential{{Host: "example.com", Header: "X-Key", Value: testSecret + "\r\nX-Evil: 1"}}, `not a valid header value`},
		{"twice", "", []Credential{good, good}, `credentials[1] (example.com): a second credential`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			if tc.mode != "" {
				s.Mode = tc.mode
				s.Allow = []string{"example.com:80"}
			}
			s.Credentials = tc.cred
			_, err := NewConfig(s)
			if err == nil {
				t.Fatalf("NewConfig accepted %v", tc.cred)
			}
			if !errors.Is(err, ErrBadSettings) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want ErrBadSettings containing %q", err, tc.want)
			}
			noSecret(t, "the error", []byte(err.Error()))
		})
	}
	// And the good one is taken, reported by host and header only.
	s := base
	s.Credentials = []Credential{good}
	cfg, err := NewConfig(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CredentialHosts(); len(got) != 1 || got[0] != "example.com:443 Authorization" {
		t.Errorf("CredentialHosts = %q", got)
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		noSecret(t, "a "+f+" of the settings", []byte(fmt.Sprintf(f, s)))
	}
}
