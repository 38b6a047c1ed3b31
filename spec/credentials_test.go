package spec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const credPolicy = `extends = "permissive"
[network]
mode = "allowlist"
allow = ["api.example.test", "other.example.test"]

[[credentials]]
host = "api.example.test"
header = "Authorization"
value_prefix = "Bearer "
from_file = "$HOME/.config/vetto/token"

[[credentials]]
host = "other.example.test"
header = "X-Api-Key"
from_env = "OTHER_KEY"
`

// withToken is the fake host with the token file in $HOME/.config/vetto.
func withToken(in *Inputs) {
	in.Lookup = func(p string) PathInfo {
		if p == "/home/dev/.config/vetto/token" {
			return file(p)
		}
		return fakeLookup(p)
	}
}

func TestParseCredentials(t *testing.T) {
	p := mustParse(t, credPolicy)
	if len(p.Credentials) != 2 {
		t.Fatalf("got %d credentials, want 2", len(p.Credentials))
	}
	c := p.Credentials[0]
	if c.Host.Value != "api.example.test" || c.Header.Value != "Authorization" || c.Prefix.Value != "Bearer " || c.FromFile.Value != "$HOME/.config/vetto/token" || c.FromEnv.Set {
		t.Errorf("credential 0: %+v", c)
	}
	if c.At.Line != 6 || c.FromFile.At.Line != 10 || c.FromFile.At.Key != "credentials[0].from_file" {
		t.Errorf("positions: table %v, from_file %v; want line 6 and line 10 credentials[0].from_file", c.At, c.FromFile.At)
	}
	if p.Credentials[1].FromEnv.Value != "OTHER_KEY" || p.Credentials[1].Host.At.Key != "credentials[1].host" || p.Credentials[1].Host.At.Line != 13 {
		t.Errorf("credential 1: %+v", p.Credentials[1])
	}
}

// One line per problem, naming the file, line and field.
func TestParseCredentialErrors(t *testing.T) {
	head := "[network]\nmode = \"allowlist\"\nallow = [\"api.example.test\"]\n[[credentials]]\n"
	tests := []struct {
		name, body string
		kind       error
		want       string
	}{
		{"no host", "header = \"X-Key\"\nfrom_env = \"K\"\n", ErrBadValue, `p.toml:4: credentials[0]: invalid value: credentials: host is required`},
		{"no header", "host = \"api.example.test\"\nfrom_env = \"K\"\n", ErrBadValue, `credentials: header is required`},
		{"no source", "host = \"api.example.test\"\nheader = \"X-Key\"\n", ErrBadValue, `p.toml:4: credentials[0]: invalid value: credentials: give exactly one of from_file and from_env`},
		{"both sources", "host = \"api.example.test\"\nheader = \"X-Key\"\nfrom_env = \"K\"\nfrom_file = \"/k\"\n", ErrBadValue, `give exactly one of from_file and from_env`},
		{"wildcard host", "host = \"*.example.test\"\nheader = \"X-Key\"\nfrom_env = \"K\"\n", ErrBadValue, `p.toml:5: credentials[0].host: invalid value: host "*.example.test": an exact name`},
		{"host with port", "host = \"api.example.test:8443\"\nheader = \"X-Key\"\nfrom_env = \"K\"\n", ErrBadValue, `without a wildcard or port`},
		{"ip host", "host = \"10.0.0.1\"\nheader = \"X-Key\"\nfrom_env = \"K\"\n", ErrBadValue, `credentials[0].host: invalid value: host: rule "10.0.0.1"`},
		{"bad header", "host = \"api.example.test\"\nheader = \"X Key\"\nfrom_env = \"K\"\n", ErrBadValue, `p.toml:6: credentials[0].header: invalid value: "X Key" is not a header name`},
		{"reserved header", "host = \"api.example.test\"\nheader = \"Host\"\nfrom_env = \"K\"\n", ErrBadValue, `the relay sets this header itself`},
		{"prefix with a line break", "host = \"api.example.test\"\nheader = \"X-Key\"\nvalue_prefix = \"a\\r\\nX-Evil: 1\"\nfrom_env = \"K\"\n", ErrBadValue, `credentials[0].value_prefix: invalid value: value_prefix: printable ASCII only`},
		{"relative file", "host = \"api.example.test\"\nheader = \"X-Key\"\nfrom_file = \"token\"\n", ErrRelativePath, `p.toml:7: credentials[0].from_file: not an absolute path`},
		{"file in the project", "host = \"api.example.test\"\nheader = \"X-Key\"\nfrom_file = \"$PROJECT/token\"\n", ErrBadValue, `only $HOME may start it`},
		{"bad env", "host = \"api.example.test\"\nheader = \"X-Key\"\nfrom_env = \"API-TOKEN\"\n", ErrBadValue, `from_env "API-TOKEN" is not a variable name`},
		{"unknown key", "host = \"api.example.test\"\nheader = \"X-Key\"\nfrom_env = \"K\"\nvalue = \"hunter2\"\n", ErrUnknownKey, `p.toml:8: credentials[0].value: unknown key: "value" is not a credentials key`},
		{"wrong type", "host = 7\nheader = \"X-Key\"\nfrom_env = \"K\"\n", ErrWrongType, `p.toml:5: credentials[0].host: wrong type: want a string, got an integer`},
		{"same host twice", "host = \"api.example.test\"\nheader = \"X-Key\"\nfrom_env = \"K\"\n[[credentials]]\nhost = \"API.example.test\"\nheader = \"X-Other\"\nfrom_env = \"L\"\n", ErrBadValue, `p.toml:9: credentials[1].host: invalid value: a second credential for api.example.test`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(head+tt.body), "p.toml")
			if err == nil {
				t.Fatalf("ParsePolicy succeeded, want %v", tt.kind)
			}
			if !errors.Is(err, ErrPolicy) || !errors.Is(err, tt.kind) {
				t.Errorf("error %v: want ErrPolicy and %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
	if _, err := ParsePolicy([]byte("credentials = \"x\"\n"), "p.toml"); !errors.Is(err, ErrWrongType) {
		t.Errorf("credentials as a string: %v, want ErrWrongType", err)
	}
}

// The bundle carries where to read each value, never a value; the file is
// masked where the sandbox could see it (permissive shows $HOME).
func TestCompileCredentials(t *testing.T) {
	in := testInputs()
	withToken(&in)
	in.Env = append(in.Env, "OTHER_KEY=hunter2-value")
	pl, err := Explain(mustParse(t, credPolicy), in)
	if err != nil {
		t.Fatal(err)
	}
	s := pl.Spec
	var refs []CredentialRef
	if err := json.Unmarshal([]byte(s.Annotations[AnnotationCredentials]), &refs); err != nil {
		t.Fatalf("annotation %s: %v", AnnotationCredentials, err)
	}
	want := []CredentialRef{
		{Host: "api.example.test", Header: "Authorization", Prefix: "Bearer ", File: "/home/dev/.config/vetto/token"},
		{Host: "other.example.test", Header: "X-Api-Key", Env: "OTHER_KEY"},
	}
	if len(refs) != 2 || refs[0] != want[0] || refs[1] != want[1] {
		t.Errorf("references %+v, want %+v", refs, want)
	}
	if got, err := ParseCredentialAnnotation(s.Annotations); err != nil || len(got) != 2 {
		t.Errorf("ParseCredentialAnnotation = %v, %v", got, err)
	}
	m := mountAt(s, "/home/dev/.config/vetto/token")
	if m == nil || m.Source != "/dev/null" {
		t.Errorf("the token file is not masked: %+v", m)
	}
	data, _ := json.Marshal(s)
	if strings.Contains(string(data), "hunter2-value") {
		t.Error("a credential's value is in the spec")
	}
	for _, e := range s.Process.Env {
		if strings.HasPrefix(e, "OTHER_KEY=") {
			t.Errorf("the credential's variable is passed: %s", e)
		}
	}
}

func TestCompileCredentialErrors(t *testing.T) {
	cred := "[[credentials]]\nhost = \"api.example.test\"\nheader = \"X-Key\"\n"
	tests := []struct {
		name, policy string
		edit         func(*Inputs)
		want         string
	}{
		{"network off", cred + "from_env = \"K\"\n", nil, `p.toml:1: credentials[0]: invalid value: credentials for api.example.test: network mode is "off"`},
		{"host not allowed", "[network]\nmode = \"allowlist\"\nallow = [\"other.example.test\"]\n" + cred + "from_env = \"K\"\n", nil,
			`p.toml:5: credentials[0].host: invalid value: api.example.test is not allowed on port 443 by network.allow`},
		{"allowed on 80 only", "[network]\nmode = \"strict\"\nallow = [\"api.example.test:80\"]\n" + cred + "from_env = \"K\"\n", nil,
			`add "api.example.test:443" to network.allow`},
		{"missing file the sandbox sees", "extends = \"permissive\"\n[network]\nmode = \"allowlist\"\nallow = [\"api.example.test\"]\n" + cred + "from_file = \"$HOME/.config/vetto/missing\"\n", nil,
			`credentials[0].from_file: invalid value: from_file /home/dev/.config/vetto/missing does not exist, and the sandbox can see /home/dev`},
		{"directory", "[network]\nmode = \"allowlist\"\nallow = [\"api.example.test\"]\n" + cred + "from_file = \"/etc/ssl/private\"\n", nil, `is a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInputs()
			if tt.edit != nil {
				tt.edit(&in)
			}
			_, err := Compile(mustParse(t, tt.policy), in)
			if err == nil {
				t.Fatal("Compile succeeded")
			}
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
	// A file the sandbox cannot see and that does not exist yet is the
	// runtime's to refuse at create.
	p := "[network]\nmode = \"allowlist\"\nallow = [\"api.example.test\"]\n" + cred + "from_file = \"/root/.config/vetto/later\"\n"
	if _, err := Compile(mustParse(t, p), testInputs()); err != nil {
		t.Errorf("a missing file outside the sandbox's roots: %v", err)
	}
}

func TestParseCredentialAnnotation(t *testing.T) {
	ann := func(v string) map[string]string { return map[string]string{AnnotationCredentials: v} }
	for _, tc := range []struct{ name, text, want string }{
		{"not json", "x", "want a JSON array"},
		{"unknown field", `[{"host":"a.test","header":"X-K","env":"K","value":"s"}]`, "unknown field"},
		{"empty", `[]`, "empty"},
		{"relative file", `[{"host":"a.test","header":"X-K","file":"k"}]`, `file "k": want an absolute path`},
		{"two sources", `[{"host":"a.test","header":"X-K","file":"/k","env":"K"}]`, "exactly one of file and env"},
		{"reserved header", `[{"host":"a.test","header":"Content-Length","env":"K"}]`, `header "Content-Length"`},
		{"wildcard", `[{"host":"*.a.test","header":"X-K","env":"K"}]`, `an exact name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseCredentialAnnotation(ann(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if refs, err := ParseCredentialAnnotation(nil); refs != nil || err != nil {
		t.Errorf("no annotation: %v, %v", refs, err)
	}
}
