package relay

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// A credential is a header the workload may use but never read
// (docs/network.md, "Credentials"): the workload sends a plain HTTP request
// for the credential's host, through the proxy port (absolute-form,
// http://host/…) or to the transparent port 80, and the relay forwards it
// over TLS to the host's TLS port, with the certificate verified, after
// removing any header of that name the workload sent and adding its own.
// The value is held in memory only: no event, error, response or log line
// of the relay carries it.

// DefaultCredentialPort is the upstream TLS port a credential's requests go
// to when Credential.Port is zero.
const DefaultCredentialPort = 443

// Credential is one header the relay adds for one host.
type Credential struct {
	// Host is an exact name (no wildcard); a rule must allow it on Port.
	Host string
	// Port is the upstream's TLS port; 0 is DefaultCredentialPort.
	Port uint16
	// Header is the header's name (Authorization, X-Api-Key, …).
	Header string
	// Value is the header's whole value (with any prefix, "Bearer …").
	Value string
}

// String names the credential without its value, so that a %v of it, or
// of a Settings holding it, says nothing secret.
func (c Credential) String() string {
	return fmt.Sprintf("%s for %s:%d", c.Header, c.Host, c.port())
}

// GoString is String: %#v must not print the value either.
func (c Credential) GoString() string { return "relay.Credential{" + c.String() + "}" }

func (c Credential) port() uint16 {
	if c.Port == 0 {
		return DefaultCredentialPort
	}
	return c.Port
}

// credential is a validated Credential.
type credential struct {
	host   string
	port   uint16
	header string // canonical
	value  string
}

// reservedHeaders are headers a credential may not set: the relay and
// net/http own them (framing, routing, hop-by-hop), and a credential in one
// of them would change how the request is read, not who sends it.
var reservedHeaders = append([]string{"Host", "Content-Length", "Expect", "Cookie2"}, hopHeaders...)

// checkCredentials validates s.Credentials against the rules already
// parsed into c. Errors name the credential by index and host, never by
// value.
func (c *Config) checkCredentials(s Settings, fail func(error, string, ...any)) {
	for i, cr := range s.Credentials {
		name, err := NormalizeName(cr.Host)
		if err != nil {
			fail(ErrBadSettings, "credentials[%d] host %q: %v", i, cr.Host, err)
			continue
		}
		port := cr.port()
		header := http.CanonicalHeaderKey(cr.Header)
		switch {
		case !httpguts.ValidHeaderFieldName(cr.Header):
			fail(ErrBadSettings, "credentials[%d] (%s): header %q: not a header name", i, name, cr.Header)
			continue
		case containsFold(reservedHeaders, header):
			fail(ErrBadSettings, "credentials[%d] (%s): header %q: the relay sets it itself", i, name, cr.Header)
			continue
		case cr.Value == "":
			fail(ErrBadSettings, "credentials[%d] (%s): empty value", i, name)
			continue
		case !httpguts.ValidHeaderFieldValue(cr.Value) || strings.TrimSpace(cr.Value) != cr.Value:
			// Said without the value: it is a secret.
			fail(ErrBadSettings, "credentials[%d] (%s): the value is not a valid header value (control characters, a line break, or space at either end)", i, name)
			continue
		}
		if _, dup := c.creds[name]; dup {
			fail(ErrBadSettings, "credentials[%d] (%s): a second credential for the same host", i, name)
			continue
		}
		if _, ok, _ := c.match(name, port); !ok {
			fail(ErrBadSettings, "credentials[%d] (%s): no rule allows %s:%d, where the relay sends its requests over TLS: allow it in network.allow", i, name, name, port)
			continue
		}
		c.creds[name] = &credential{host: name, port: port, header: header, value: cr.Value}
	}
	c.rootCAs = s.RootCAs
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// CredentialHosts lists, sorted, "host:port header" for each credential:
// what the relay will add and where, never a value. The runtime's
// pre-launch check compares it with what it asked for.
func (c *Config) CredentialHosts() []string {
	out := make([]string, 0, len(c.creds))
	for _, cr := range c.creds {
		out = append(out, fmt.Sprintf("%s:%d %s", cr.host, cr.port, cr.header))
	}
	sort.Strings(out)
	return out
}

// credentialFor is the credential for a plain HTTP request to name:port:
// only requests to port 80, the port of http:// without one, are sent on
// over TLS with the credential; any other port is forwarded as before.
func (c *Config) credentialFor(name string, port uint16) *credential {
	if port != 80 {
		return nil
	}
	return c.creds[name]
}

// tlsConfig is the client configuration of a credential's upstream: the
// certificate must be valid for the host, from the system roots or the
// operator's RootCAs. HTTP/1.1 only: the relay speaks HTTP/1.1 to both
// sides.
func (c *Config) tlsConfig(cr *credential) *tls.Config {
	return &tls.Config{ServerName: cr.host, RootCAs: c.rootCAs, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
}

// setCredential replaces every header (and trailer) of the credential's
// name the workload sent, in any spelling, with the credential's: the
// workload can neither choose the value nor have it sent twice.
func setCredential(req *http.Request, cr *credential) {
	for _, h := range []http.Header{req.Header, req.Trailer} {
		for k := range h {
			if strings.EqualFold(k, cr.header) {
				delete(h, k)
			}
		}
	}
	req.Header[cr.header] = []string{cr.value}
}

// tlsUpstream makes tc, a connection to a checked address of the
// credential's host, a verified TLS connection to that host, within the
// dial timeout.
func (s *Server) tlsUpstream(ctx context.Context, tc net.Conn, cr *credential) (*tls.Conn, error) {
	hctx, cancel := context.WithTimeout(ctx, s.cfg.dialTimeout)
	defer cancel()
	c := tls.Client(tc, s.cfg.tlsConfig(cr))
	if err := c.HandshakeContext(hctx); err != nil {
		return nil, err
	}
	return c, nil
}
