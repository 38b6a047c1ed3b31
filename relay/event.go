package relay

import (
	"net/netip"
	"time"
)

// Protocol is how a connection or query reached the relay.
type Protocol string

const (
	ProtoConnect     Protocol = "connect"     // HTTP CONNECT tunnel
	ProtoHTTP        Protocol = "http"        // absolute-form HTTP request
	ProtoSOCKS5      Protocol = "socks5"      // SOCKS5 CONNECT tunnel
	ProtoTransparent Protocol = "transparent" // a connection to a DNS stub address on :80/:443
	ProtoDNS         Protocol = "dns"         // one DNS query, UDP or TCP
	// ProtoProxy: a connection to the proxy port refused before its
	// protocol could be told (not HTTP, not SOCKS5, or nothing sent).
	ProtoProxy Protocol = "proxy"
)

// Verdict is the relay's decision.
type Verdict string

const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
)

// Event is one audit record. The server emits exactly one per tunnel
// (CONNECT, SOCKS5, transparent TLS), per HTTP request (absolute-form and
// transparent HTTP: each request on a keep-alive connection is decided on
// its own), per DNS query, and one for a connection refused before it made
// any request (bad protocol, handshake timeout, the connection limit). It
// is emitted when the connection, request or query is over, so the byte
// counts and the duration are final.
type Event struct {
	Time     time.Time `json:"time"` // when it arrived
	Protocol Protocol  `json:"protocol"`
	Client   string    `json:"client,omitempty"` // the workload's address, as the listener saw it
	// Host is the normalized name asked for, or the text sent when it
	// could not be normalized.
	Host  string `json:"host,omitempty"`
	Port  uint16 `json:"port,omitempty"`
	QType string `json:"qtype,omitempty"` // DNS: A, AAAA, TXT, …
	SNI   string `json:"sni,omitempty"`   // the ClientHello's server name, when read
	// Answers: for a connection, what resolution returned (before the deny
	// set); for a DNS query, what the stub answered.
	Answers []netip.Addr   `json:"answers,omitempty"`
	Addr    netip.AddrPort `json:"addr,omitzero"` // the upstream address dialled
	Verdict Verdict        `json:"verdict"`
	// Rule: when allowed, the rule that allowed it (Rule.String); when
	// denied, the denial's id, the same as the X-Vetto-Deny header:
	// no-rule, port, ip-literal, numeric-name, userinfo, bad-name,
	// resolve, deny-set:<range>, host-mismatch, sni-mismatch, sni-missing,
	// not-tls, method, bad-request, header-too-large, timeout, socks,
	// no-name, dns-type, limit.
	Rule string `json:"rule"`
	// Reason says what happened in words: for a denial what was refused
	// and what to add to the policy; for an allowed connection whose
	// upstream failed, the failure.
	Reason string `json:"reason,omitempty"`
	// BytesUp and BytesDown: what went to and came from the upstream
	// (a tunnel's payload; an HTTP request and response as forwarded).
	// Credential is the header the relay added to the request for its
	// host (its name, never its value); empty when it added none.
	Credential string        `json:"credential,omitempty"`
	BytesUp    int64         `json:"bytes_up"`
	BytesDown  int64         `json:"bytes_down"`
	Duration   time.Duration `json:"duration_ns"`
}

// Stats are the server's counters since Serve began: verification (P5)
// compares them with what the workload did, and the teardown receipt
// records them.
type Stats struct {
	Allowed     uint64 `json:"allowed"` // tunnels and HTTP requests allowed (also when the upstream then failed)
	Denied      uint64 `json:"denied"`  // tunnels, HTTP requests and connections refused
	BytesUp     uint64 `json:"bytes_up"`
	BytesDown   uint64 `json:"bytes_down"`
	DNSAnswered uint64 `json:"dns_answered"` // queries answered NOERROR (with or without records)
	DNSRefused  uint64 `json:"dns_refused"`  // queries refused or malformed
	// Credentialed counts HTTP requests forwarded with a credential.
	Credentialed uint64 `json:"credentialed,omitempty"`
}
