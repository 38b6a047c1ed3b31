package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Bad network input is a policy error naming the file, line and key.
func TestPolicyNetworkErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown mode", "[network]\nmode = \"open\"\n", `p.toml:2: network.mode: invalid value: "open": want one of off, allowlist, strict`},
		{"empty allowlist", "[network]\nmode = \"allowlist\"\n", `p.toml:2: network.mode: invalid value: mode "allowlist" needs at least one network.allow entry`},
		{"empty allow array", "[network]\nmode = \"strict\"\nallow = []\n", `p.toml:2: network.mode: invalid value: mode "strict" needs at least one network.allow entry`},
		{"wildcard without a domain", "[network]\nmode = \"allowlist\"\nallow = [\"ok.com\", \"*.\"]\n", `p.toml:3: network.allow[1]: invalid value: "*." is not a host name`},
		{"empty label", "[network]\nmode = \"allowlist\"\nallow = [\"a..b\"]\n", `p.toml:3: network.allow[0]: invalid value: rule "a..b": bad network rule: empty label`},
		{"port out of range", "[network]\nmode = \"allowlist\"\nallow = [\"a.com:65536\"]\n", `p.toml:3: network.allow[0]: invalid value: rule "a.com:65536": bad network rule: port must be 1-65535`},
		{"port zero", "[network]\nmode = \"allowlist\"\nallow = [\"a.com:0\"]\n", `port must be 1-65535`},
		{"leading zero", "[network]\nmode = \"allowlist\"\nallow = [\"a.com:0443\"]\n", `port must be 1-65535`},
		{"IPv4 literal", "[network]\nmode = \"allowlist\"\nallow = [\"10.0.0.1\"]\n", `p.toml:3: network.allow[0]: invalid value: rule "10.0.0.1": bad network rule: an IP address`},
		{"IPv4 literal with a port", "[network]\nmode = \"allowlist\"\nallow = [\"169.254.169.254:80\"]\n", `reads as an IP address`},
		{"short IPv4", "[network]\nmode = \"allowlist\"\nallow = [\"127.1\"]\n", `reads as an IP address`},
		{"hex IPv4", "[network]\nmode = \"allowlist\"\nallow = [\"0x7f.1\"]\n", `reads as an IP address`},
		{"IPv6 literal", "[network]\nmode = \"allowlist\"\nallow = [\"::1\"]\n", `is not a host name`},
		{"wildcard over a TLD", "[network]\nmode = \"allowlist\"\nallow = [\"*.com\"]\n", `a wildcard over the top-level domain "com"`},
		{"label ends with a hyphen", "[network]\nmode = \"allowlist\"\nallow = [\"a-.com\"]\n", `label "a-" starts or ends with '-'`},
		{"strict wildcard", "[network]\nmode = \"strict\"\nallow = [\"*.a.com:443\"]\n", `p.toml:3: network.allow[0]: invalid value: "*.a.com:443": mode "strict" allows only exact host:port entries`},
		{"several at once", "[network]\nmode = \"allowlist\"\nallow = [\"a..b\", \"c.com:0\", \"d.com\"]\n", "network.allow[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.src), "p.toml")
			if err == nil {
				t.Fatalf("ParsePolicy(%q): no error, want %q", tt.src, tt.want)
			}
			if !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParsePolicy(%q) = %v, want ErrBadValue containing %q", tt.src, err, tt.want)
			}
		})
	}
	if _, err := ParsePolicy([]byte("[network]\nmode = \"allowlist\"\nallow = [\"a..b\", \"c.com:0\", \"d.com\"]\n"), "p.toml"); err == nil || !strings.Contains(err.Error(), "network.allow[0]") {
		t.Errorf("every bad rule is reported, got %v", err)
	}
}

func TestCheckNetRule(t *testing.T) {
	for _, ok := range []string{"example.com", "Example.COM", "*.example.com", "example.com:8443", "*.example.com:22", "localhost", "xn--bcher-kva.de", "a-b.c0m", "r3---sn-abc.googlevideo.com", "1a.com"} {
		if err := CheckNetRule(ok); err != nil {
			t.Errorf("CheckNetRule(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "*", "*.", "*.com", "a.*.com", "a..b", ".a.com", "a.com.", "a.com:", "a.com:+1", "a.com:1:2",
		"http://a.com", "a.com/x", "a com", "1.2.3.4", "[::1]", "::ffff:127.0.0.1", "fe80::1%eth0", "2130706433", "017700000001",
		"0x7f000001", "a.0x1F", "u@a.com", "a.com:443.b.com", "bücher.de", "a_b.com", "-a.com", strings.Repeat("a", 64) + ".com"} {
		if err := CheckNetRule(bad); err == nil || !errors.Is(err, ErrNetRule) {
			t.Errorf("CheckNetRule(%q) = %v, want ErrNetRule", bad, err)
		}
	}
}

func TestNetAnnotations(t *testing.T) {
	tests := []struct {
		name  string
		ann   map[string]string
		relay bool
		want  string // error substring; "" for none
	}{
		{"none", nil, false, ""},
		{"off", map[string]string{AnnotationNet: "off"}, false, ""},
		{"allowlist", map[string]string{AnnotationNet: "allowlist", AnnotationNetAllow: `["a.com","*.b.com:22"]`}, true, ""},
		{"unknown mode", map[string]string{AnnotationNet: "host"}, false, `unknown network mode "host"`},
		{"no rules", map[string]string{AnnotationNet: "allowlist"}, true, "needs rules in dev.vetto.net.allow"},
		{"empty rules", map[string]string{AnnotationNet: "allowlist", AnnotationNetAllow: `[]`}, true, "empty"},
		{"not JSON", map[string]string{AnnotationNet: "allowlist", AnnotationNetAllow: `a.com`}, true, "JSON array"},
		{"bad rule", map[string]string{AnnotationNet: "allowlist", AnnotationNetAllow: `["a.com","10.0.0.1"]`}, true, "dev.vetto.net.allow[1]"},
		{"strict wildcard", map[string]string{AnnotationNet: "strict", AnnotationNetAllow: `["*.a.com:443"]`}, true, "exact host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, relay, err := NetAnnotations(tt.ann)
			if relay != tt.relay {
				t.Errorf("relay = %v, want %v", relay, tt.relay)
			}
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// The proxy variables are the relay's, whatever the caller passes under
// those names; the caller's JAVA_TOOL_OPTIONS are kept, the relay's last.
func TestCompileRelayEnvironment(t *testing.T) {
	in := testInputs()
	in.Env = append(in.Env, "http_proxy=http://evil.example:8080", "NO_PROXY=*", "JAVA_TOOL_OPTIONS=-Xmx1g -Dhttps.proxyHost=evil.example")
	p, err := ParsePolicy([]byte("[environment]\npass_through = [\"http_proxy\", \"NO_PROXY\", \"JAVA_TOOL_OPTIONS\"]\n[network]\nmode = \"allowlist\"\nallow = [\"a.com\"]\n"), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Explain(p, in)
	if err != nil {
		t.Fatal(err)
	}
	env := pl.Spec.Process.Env
	for _, want := range ProxyEnv(RelayProxyAddr) {
		if strings.HasPrefix(want, "JAVA_TOOL_OPTIONS=") {
			want = "JAVA_TOOL_OPTIONS=-Xmx1g -Dhttps.proxyHost=evil.example " + strings.TrimPrefix(want, "JAVA_TOOL_OPTIONS=")
		}
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %q: %v", want, env)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "evil.example:8080") || kv == "NO_PROXY=*" {
			t.Errorf("the caller's proxy setting survived: %q", kv)
		}
	}
	if !slices.ContainsFunc(pl.Warnings, func(w string) bool { return strings.Contains(w, "http_proxy is set to the relay's proxy") }) {
		t.Errorf("no warning that http_proxy was replaced: %v", pl.Warnings)
	}
	var resolv bool
	for _, f := range pl.Files {
		resolv = resolv || f.Path == relayResolvFile && f.Content == RelayResolvConf
	}
	if !resolv {
		t.Errorf("no resolv.conf in the bundle files: %v", pl.Files)
	}

	// Without a relay nothing of it.
	p, _ = ParsePolicy([]byte("[network]\nmode = \"off\"\n"), "p.toml")
	pl, err = Explain(p, testInputs())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range pl.Spec.Process.Env {
		if strings.Contains(kv, "3128") {
			t.Errorf("network off has a proxy variable: %q", kv)
		}
	}
	if len(pl.Files) != 1 { // the stripped git config only
		t.Errorf("network off: files %v", pl.Files)
	}
}
