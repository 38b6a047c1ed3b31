package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Credentials the sandbox may use but never read (docs/policy.md,
// "Credentials"):
//
//	[[credentials]]
//	host         = "api.example.test"            # exact name, allowed by network.allow on 443
//	header       = "Authorization"
//	value_prefix = "Bearer "                     # optional, put before the value
//	from_file    = "/root/.config/vetto/token"   # a host file the runtime reads at create
//	# or from_env = "API_TOKEN"                  # the runtime's own environment at create
//
// The compiled bundle carries only the reference (AnnotationCredentials):
// where the runtime reads the value at create, never the value. The egress
// relay adds the header to the workload's plain HTTP requests for the host
// and sends them on over TLS; the value never enters the container.

// AnnotationCredentials is the bundle's list of credential references
// (a JSON array of CredentialRef): sources, never values.
const AnnotationCredentials = "dev.vetto.credentials"

// CredentialRef is one credential as the bundle records it.
type CredentialRef struct {
	Host   string `json:"host"`
	Header string `json:"header"`
	Prefix string `json:"prefix,omitempty"`
	// Exactly one of File (an absolute host path) and Env (a variable
	// of the runtime's environment).
	File string `json:"file,omitempty"`
	Env  string `json:"env,omitempty"`
}

// Source says where the value comes from, for messages: "file /path" or
// "env NAME". It is never the value.
func (r CredentialRef) Source() string {
	if r.File != "" {
		return "file " + r.File
	}
	return "env " + r.Env
}

// Credential is one [[credentials]] table of a policy.
type Credential struct {
	At                                      Pos
	Host, Header, Prefix, FromFile, FromEnv Setting[string]
}

var (
	// headerNamePattern is RFC 9110's token.
	headerNamePattern = lazyRegexp("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
	// envVarPattern is a variable name, without pass_through's prefix '*'.
	envVarPattern = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// reservedCredentialHeaders are headers a credential may not set: the relay
// owns them (framing, routing, hop-by-hop). relay.NewConfig refuses the
// same, and more that are hop-by-hop.
var reservedCredentialHeaders = []string{"host", "content-length", "transfer-encoding", "connection", "proxy-connection",
	"keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "upgrade", "expect", "cookie2"}

// credentialKeys are the keys of a [[credentials]] table.
var credentialKeys = []string{"host", "header", "value_prefix", "from_file", "from_env"}

// credentials reads every [[credentials]] table (or inline array of
// tables), each key checked, every problem reported.
func (r *policyReader) credentials() []Credential {
	v, ok := r.lookup("credentials")
	if !ok {
		return nil
	}
	var tables []map[string]any
	switch list := v.(type) {
	case []map[string]any:
		tables = list
	case []any:
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				r.fail(r.at(fmt.Sprintf("credentials[%d]", i)), fmt.Errorf("%w: want a table (host, header, from_file or from_env), got %s", ErrWrongType, tomlType(item)))
				continue
			}
			tables = append(tables, m)
		}
	default:
		r.fail(r.at("credentials"), fmt.Errorf("%w: want [[credentials]] tables, got %s", ErrWrongType, tomlType(v)))
		return nil
	}
	var out []Credential
	seen := map[string]bool{}
	for i, m := range tables {
		base := fmt.Sprintf("credentials[%d]", i)
		c := Credential{At: r.at(base)}
		get := func(key string, check func(string) error) Setting[string] {
			k := base + "." + key
			v, ok := m[key]
			if !ok {
				return Setting[string]{}
			}
			s, ok := r.str(k, v)
			if !ok {
				return Setting[string]{}
			}
			if err := check(s); err != nil {
				r.fail(r.at(k), err)
				return Setting[string]{}
			}
			return Setting[string]{Value: s, Set: true, At: r.at(k)}
		}
		for key := range m {
			if !contains(credentialKeys, key) {
				msg := fmt.Sprintf("%q is not a credentials key", key)
				if s := suggest(key, credentialKeys); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else {
					msg += " (known here: " + strings.Join(credentialKeys, ", ") + ")"
				}
				r.fail(r.at(base+"."+key), fmt.Errorf("%w: %s", ErrUnknownKey, msg))
			}
		}
		c.Host = get("host", checkCredentialHost)
		c.Header = get("header", func(s string) error {
			if !headerNamePattern().MatchString(s) {
				return fmt.Errorf("%w: %q is not a header name (letters, digits and -, as in Authorization or X-Api-Key)", ErrBadValue, s)
			}
			if contains(reservedCredentialHeaders, strings.ToLower(s)) {
				return fmt.Errorf("%w: %q: the relay sets this header itself; a credential cannot", ErrBadValue, s)
			}
			return nil
		})
		c.Prefix = get("value_prefix", func(s string) error {
			for i := 0; i < len(s); i++ {
				if s[i] < 0x20 || s[i] >= 0x7f {
					return fmt.Errorf("%w: value_prefix: printable ASCII only (no control character or line break)", ErrBadValue)
				}
			}
			if strings.TrimLeft(s, " ") != s {
				return fmt.Errorf("%w: value_prefix: must not start with a space", ErrBadValue)
			}
			return nil
		})
		c.FromFile = get("from_file", func(s string) error {
			if strings.HasPrefix(s, "$") {
				name, _, _ := strings.Cut(s, "/")
				if name != "$HOME" {
					return fmt.Errorf("%w: from_file %q: only $HOME may start it (the runtime reads it on the host, outside the project and $TMP)", ErrBadValue, s)
				}
			}
			return checkPathSyntax(s)
		})
		c.FromEnv = get("from_env", func(s string) error {
			if !envVarPattern().MatchString(s) {
				return fmt.Errorf("%w: from_env %q is not a variable name", ErrBadValue, s)
			}
			return nil
		})
		if _, ok := m["host"]; !ok {
			r.fail(c.At, fmt.Errorf("%w: credentials: host is required (the one host the header is sent to)", ErrBadValue))
		}
		if _, ok := m["header"]; !ok {
			r.fail(c.At, fmt.Errorf("%w: credentials: header is required (e.g. \"Authorization\")", ErrBadValue))
		}
		_, file := m["from_file"]
		_, env := m["from_env"]
		if file == env {
			r.fail(c.At, fmt.Errorf("%w: credentials: give exactly one of from_file and from_env", ErrBadValue))
		}
		if c.Host.Set {
			h := strings.ToLower(c.Host.Value)
			if seen[h] {
				r.fail(c.Host.At, fmt.Errorf("%w: a second credential for %s: one header per host", ErrBadValue, h))
			}
			seen[h] = true
		}
		out = append(out, c)
	}
	return out
}

// checkCredentialHost: one exact name, as a network rule would name it,
// without a wildcard or a port (the credential goes to the host's 443).
func checkCredentialHost(s string) error {
	if strings.Contains(s, "*") || strings.Contains(s, ":") {
		return fmt.Errorf("%w: host %q: an exact name, without a wildcard or port (the relay sends it to the host's 443)", ErrBadValue, s)
	}
	if err := CheckNetRule(s); err != nil {
		return fmt.Errorf("%w: host: %w", ErrBadValue, err)
	}
	return nil
}

// netRuleAllows reports whether rule (already valid) allows host on port,
// as relay.Rule matches: a rule without a port allows 80 and 443, a
// wildcard every name below its domain but not the domain.
func netRuleAllows(rule, host string, port uint16) bool {
	name, p, hasPort := strings.Cut(strings.ToLower(rule), ":")
	if hasPort {
		if p != fmt.Sprint(port) {
			return false
		}
	} else if port != 80 && port != 443 {
		return false
	}
	host = strings.ToLower(host)
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return host == name
}

// credentialPort is where the relay sends a credential's requests.
const credentialPort = 443

// credentials checks the policy's credentials against the network plan
// (settings has decided it) and records their references.
func (c *compiler) credentials() {
	pl := c.plan
	for _, cr := range c.p.Credentials {
		if !cr.Host.Set || !cr.Header.Set || cr.FromFile.Set == cr.FromEnv.Set {
			continue // reported by the parser
		}
		if pl.Network == "off" {
			c.fail(cr.At, fmt.Errorf("%w: credentials for %s: network mode is \"off\", so there is no relay to add it: set network.mode = \"allowlist\" and allow %s", ErrBadValue, cr.Host.Value, cr.Host.Value))
			continue
		}
		allowed := false
		for _, rule := range pl.NetworkAllow {
			allowed = allowed || netRuleAllows(rule, cr.Host.Value, credentialPort)
		}
		if !allowed {
			want := cr.Host.Value
			if pl.Network == NetStrict {
				want += ":443"
			}
			c.fail(cr.Host.At, fmt.Errorf("%w: %s is not allowed on port 443 by network.allow, where the relay sends its requests: add %q to network.allow", ErrBadValue, cr.Host.Value, want))
			continue
		}
		ref := CredentialRef{Host: strings.ToLower(cr.Host.Value), Header: cr.Header.Value, Prefix: cr.Prefix.Value, Env: cr.FromEnv.Value}
		if cr.FromFile.Set {
			ref.File, _ = c.expand(cr.FromFile.Value)
		}
		pl.Credentials = append(pl.Credentials, ref)
	}
	sort.Slice(pl.Credentials, func(i, j int) bool { return pl.Credentials[i].Host < pl.Credentials[j].Host })
}

// credentialFiles makes each from_file a denied path: wherever a bind
// shows it, it is masked like a secret. A file that does not exist where
// the sandbox can see (a read or write root) is refused: it cannot be
// masked, and the sandbox could plant it or read it once it is created.
func (c *compiler) credentialFiles() []*pathRule {
	var out []*pathRule
	for i := range c.p.Credentials {
		cr := &c.p.Credentials[i]
		if !cr.FromFile.Set {
			continue
		}
		r, ok := c.rule(cr.FromFile.Value, cr.FromFile.At.String(), &cr.FromFile.At)
		if !ok {
			continue
		}
		switch r.info.Kind {
		case PathDir:
			c.fail(cr.FromFile.At, fmt.Errorf("%w: from_file %s is a directory, not a file", ErrBadValue, r.path))
			continue
		case PathMissing:
			for _, m := range c.mounts {
				if m.kind == bindMount && within(r.info.Real, m.source) {
					c.fail(cr.FromFile.At, fmt.Errorf("%w: from_file %s does not exist, and the sandbox can see %s (bound at %s), so it could not be masked: create it first, or keep it outside what the sandbox sees", ErrBadValue, r.path, m.source, m.dest))
					break
				}
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// ParseCredentialAnnotation reads AnnotationCredentials: nil when the
// bundle names none. Every entry must name a host, a header and exactly
// one source; a file must be absolute.
func ParseCredentialAnnotation(annotations map[string]string) ([]CredentialRef, error) {
	text, ok := annotations[AnnotationCredentials]
	if !ok {
		return nil, nil
	}
	var refs []CredentialRef
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&refs); err != nil {
		return nil, fmt.Errorf("annotation %s: want a JSON array of {host, header, prefix, file | env}: %w", AnnotationCredentials, err)
	}
	var errs []error
	for i, r := range refs {
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("annotation %s[%d] (%s): %s", AnnotationCredentials, i, r.Host, fmt.Sprintf(format, a...)))
		}
		if err := checkCredentialHost(r.Host); err != nil {
			bad("%v", err)
		}
		if !headerNamePattern().MatchString(r.Header) || contains(reservedCredentialHeaders, strings.ToLower(r.Header)) {
			bad("header %q: not a header a credential may set", r.Header)
		}
		switch {
		case (r.File == "") == (r.Env == ""):
			bad("want exactly one of file and env")
		case r.File != "" && (!strings.HasPrefix(r.File, "/") || checkPathSyntax(r.File) != nil):
			bad("file %q: want an absolute path without ..", r.File)
		case r.Env != "" && !envVarPattern().MatchString(r.Env):
			bad("env %q: not a variable name", r.Env)
		}
	}
	if len(refs) == 0 {
		errs = append(errs, fmt.Errorf("annotation %s: empty", AnnotationCredentials))
	}
	return refs, errors.Join(errs...)
}
