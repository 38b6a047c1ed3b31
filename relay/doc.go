// Package relay is the egress relay of a container whose network mode is
// allowlist or strict (docs/network.md): the decision engine and the servers,
// as a library the runtime's hidden `vetto-runtime relay` command runs in
// a hardened process. It imports nothing of vetto-runtime's.
//
// # Contract
//
// The runtime creates the listening sockets inside the container's
// network namespace, where the workload has only lo, and passes them
// already open; the package never creates a listener and never enters a
// namespace. It dials upstreams from where it runs, the host side.
//
//	cfg, err := relay.NewConfig(relay.Settings{Mode: relay.ModeAllowlist, Allow: rules, Resolvers: …})
//	srv := relay.NewServer(cfg, relay.Options{Audit: record})
//	err = srv.Serve(ctx, relay.Listeners{Proxy: ln, DNSUDP: pc, DNSTCP: ln53,
//		Transparent: map[uint16]net.Listener{80: ln80, 443: ln443}})
//	receipt.Relay = srv.Stats()
//
// NewConfig is pure and reports every bad rule or setting at once.
// Serve blocks until ctx is done; when it returns every listener and
// connection is closed and no goroutine of the server is left. Options.Audit
// gets exactly one Event per tunnel, per HTTP request, per DNS query, and
// per connection refused before it asked for anything. The container's
// environment comes from ProxyEnv.
//
// # Decision
//
// For every destination (a CONNECT authority, an absolute-form URI, a
// SOCKS5 domain, the name behind a transparent address): the name is
// normalized (NormalizeName: IP literals and names that read as one are
// refused, never resolved), matched against the rules (Rule), resolved
// once on the host with Go's resolver and pinned for the server's life,
// and every answer in the deny set (loopback, private, CGNAT, link-local
// and cloud metadata, multicast, reserved, documentation, the host's own
// addresses, and IPv6 forms judged by the IPv4 address they embed) is
// dropped. Only an address that passed is dialled, and the dialer's
// Control hook checks it again. A name no rule allows is never resolved.
// At strict, and at allowlist with Settings.CheckSNI, the SNI of the
// tunnel's ClientHello must be the tunnel's host; TLS is never terminated.
//
// Denials carry an id (Event.Rule, and the X-Vetto-Deny header of a 403)
// and say which network.allow entry would allow the request; SOCKS5 gets
// reply 0x02.
//
// # Credentials
//
// Settings.Credentials name headers the workload may use but never read:
// a plain HTTP request for a credential's host on port 80 (absolute-form
// through the proxy, or to the transparent port 80) is decided for the
// credential's TLS port (443), sent there over TLS with the certificate
// verified against Settings.RootCAs (nil: the system roots), with every
// header of the credential's name the workload sent removed and the
// credential's added. Nothing else is intercepted: the workload's own TLS
// (CONNECT, SOCKS5, transparent 443) is tunnelled as before. No Event,
// error, response or log line carries a value; Event.Credential names the
// header, Stats.Credentialed counts the requests.
//
// # DNS and transparent mode
//
// The DNS stub answers A queries for names a rule allows with an address
// from Settings.FakeRange (127.77.0.0/16), one per name; AAAA, HTTPS and
// SVCB for such names get an empty NOERROR; everything else is REFUSED
// with an Extended DNS Error, and nothing is asked upstream. A connection
// to a stub address on a transparent listener is mapped back to its name
// by its local address, its SNI or Host must match, and it is decided as
// above.
//
// UDP other than the stub's, ICMP and raw sockets have no route: the
// namespace has only lo, and the relay carries TCP. That is the runtime's
// namespace, not this package's doing.
//
// docs/network.md has the whole design: the deny set table, the DNS stub's
// answers, the denial ids, the bounds, the threat model and measurements.
package relay
