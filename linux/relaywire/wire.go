// Package relaywire is what passes between the runtime and a container's
// egress relay process (docs/network.md): the command line the runtime
// starts it with, the config it writes to the relay's config descriptor,
// and the one line the relay answers with on its ready descriptor.
//
// It is its own package, importing nothing of the relay's, because the two
// sides are two executables: the runtime (linux) writes the config and
// reads the answer; the relay executable (linux/relayproc, built from
// cmd/vetto-runtime-relay) reads the config and writes the answer. The
// relay's decisions and servers (package relay, with net/http and
// crypto/tls) are linked into the relay executable only, so that no
// create, start or exec pays their start-up.
package relaywire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Arg is argv[1] of a relay process: `<relay executable> relay <state dir>`.
// The state directory in argv is what teardown finds a relay by on the
// host, and the relay's early hardening runs only under this argv.
const Arg = "relay"

// ConfigFd is where the relay finds its config: the first of the
// descriptors it is started with.
const ConfigFd = 3

// CredentialPort is the upstream TLS port of every credential: the relay's
// relay.DefaultCredentialPort (a test in linux/relayproc holds the two
// equal). The runtime names credentials by it in its pre-launch check.
const CredentialPort = 443

// Config is what the relay process reads, once, from its config fd: the
// request and where each of its descriptors is.
type Config struct {
	ID, Spec, Level string
	Mode            string
	Allow           []string
	Resolvers       []string
	HostAddrs       []netip.Addr
	TestHosts       map[string][]netip.Addr
	Exempt          []netip.Prefix
	CheckSNI        bool
	UID             uint32
	// Credentials are secrets: this struct goes over the config pipe
	// and nowhere else (never argv, the environment or a file).
	Credentials []Credential `json:",omitempty"`
	RootCAs     []byte       `json:",omitempty"` // PEM

	ReadyFd, InitFd, StatsFd int
	AuditFds                 []int
	Listeners                []Listener
}

// Listener is one socket the runtime made in the container's network
// namespace and passes to the relay at Fd.
type Listener struct {
	Name, Kind string
	Fd         int
	Stream     bool
	Port       uint16
}

// Credential is one header the relay adds for one host.
type Credential struct{ Host, Header, Value string }

// The relay's answer on its ready fd is one line, one of:
//
//	ready                  hardened and listening
//	ready ["h:443 Hdr",…]  the same, holding the credentials named
//	refused: <why>         the settings are not ones it serves (its
//	                       relay.NewConfig refused them): the request's
//	                       fault, before it made or touched anything
//	error: <why>           it could not start
//
// No line at all means it died first.

// Ready is the ready line for a relay holding the credentials named by
// hosts (host:port and canonical header, never a value).
func Ready(hosts []string) (string, error) {
	if len(hosts) == 0 {
		return "ready\n", nil
	}
	b, err := json.Marshal(hosts)
	if err != nil {
		return "", err
	}
	return "ready " + string(b) + "\n", nil
}

// ErrRefused is what ParseReady wraps when the relay refused its settings.
var ErrRefused = errors.New("the relay refused its settings")

// ParseReady reads the relay's answer: the credentials it holds when it
// is ready, an error wrapping ErrRefused when it refused the settings, any
// other error when it failed.
func ParseReady(line string) ([]string, error) {
	msg := strings.TrimSpace(line)
	switch {
	case msg == "ready":
		return nil, nil
	case strings.HasPrefix(msg, "ready "):
		var loaded []string
		if err := json.Unmarshal([]byte(strings.TrimPrefix(msg, "ready ")), &loaded); err != nil {
			return nil, fmt.Errorf("ready line: %w", err)
		}
		return loaded, nil
	case strings.HasPrefix(msg, "refused: "):
		return nil, fmt.Errorf("%w: %s", ErrRefused, strings.TrimPrefix(msg, "refused: "))
	case strings.HasPrefix(msg, "error: "):
		return nil, errors.New(strings.TrimPrefix(msg, "error: "))
	case msg == "":
		return nil, errors.New("exited before it was ready")
	}
	return nil, fmt.Errorf("unexpected answer %q", msg)
}
