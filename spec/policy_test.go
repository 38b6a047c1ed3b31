package spec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	src := `# an agent's policy
extends = "default"

[filesystem]
allow_read = ["$HOME/.gitconfig"]
allow_write = [
  "$PROJECT",   # the repository
  "$TMP/cache",
]
deny = ["$PROJECT/.env", "/etc/shadow"]

[environment]
pass_through = ["LANG", "NPM_CONFIG_*"]

[network]
mode = "allowlist"
allow = ["proxy.golang.org", "*.npmjs.org"]

[limits]
memory = "2GiB"
pids = 512
cpu = 1.5

[security]
level = "standard"
allow_degraded = ["landlock"]
`
	p, err := ParsePolicy([]byte(src), "agent.toml")
	if err != nil {
		t.Fatalf("ParsePolicy: %v", err)
	}
	values := func(list []Setting[string]) []string {
		var out []string
		for _, s := range list {
			out = append(out, s.Value)
		}
		return out
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"extends", p.Extends.Value, "default"},
		{"allow_read", values(p.AllowRead), []string{"$HOME/.gitconfig"}},
		{"allow_write", values(p.AllowWrite), []string{"$PROJECT", "$TMP/cache"}},
		{"allow_write[1] line", p.AllowWrite[1].At.Line, 8},
		{"allow_write[1] key", p.AllowWrite[1].At.Key, "filesystem.allow_write[1]"},
		{"deny", values(p.Deny), []string{"$PROJECT/.env", "/etc/shadow"}},
		{"pass_through", values(p.PassThrough), []string{"LANG", "NPM_CONFIG_*"}},
		{"mode", p.NetworkMode.Value, "allowlist"},
		{"allow", values(p.NetworkAllow), []string{"proxy.golang.org", "*.npmjs.org"}},
		{"memory", p.Memory.Value, int64(2 << 30)},
		{"pids", p.Pids.Value, int64(512)},
		{"cpu", p.CPU.Value, 1.5},
		{"level", p.Level.Value, "standard"},
		{"level line", p.Level.At.Line, 25},
		{"allow_degraded", values(p.AllowDegraded), []string{"landlock"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if p.Memory.Set != true || p.CPU.At.String() != "agent.toml:22: limits.cpu" {
		t.Errorf("cpu at %q", p.CPU.At)
	}
}

func TestParsePolicyEmpty(t *testing.T) {
	p, err := ParsePolicy([]byte("# nothing\n"), "empty.toml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Extends.Set || p.NetworkMode.Set || len(p.Deny) > 0 {
		t.Fatalf("empty policy sets something: %+v", p)
	}
}

// Every error path of the parser: each names file:line: key and wraps
// ErrPolicy and its kind.
func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name, src string
		kind      error
		want      string // a substring of the error
	}{
		{"syntax", "extends = \"default\"\n[filesystem\n", ErrSyntax, "p.toml:2"},
		{"unterminated string", "extends = \"default\n", ErrSyntax, "p.toml:1"},
		{"unknown top-level key, with a suggestion", "filesytem = {}\n", ErrUnknownKey, `p.toml:1: filesytem: unknown key: "filesytem" is not a policy key (did you mean "filesystem"?)`},
		{"unknown table", "[network]\nmode = \"off\"\n\n[proxy]\nurl = \"x\"\n", ErrUnknownKey, `p.toml:4: proxy: unknown key`},
		{"unknown nested key", "[filesystem]\nallow_read = []\nallow_exec = [\"/x\"]\n", ErrUnknownKey, `p.toml:3: filesystem.allow_exec: unknown key: "allow_exec" is not a policy key`},
		{"unknown key in an inline table", "network = { mode = \"off\", ports = [22] }\n", ErrUnknownKey, `p.toml:1: network.ports`},
		{"unknown key, no close one", "[limits]\nbananas = 3\n", ErrUnknownKey, "known here: cpu, memory, pids"},
		{"extends not a string", "extends = 3\n", ErrWrongType, `p.toml:1: extends: wrong type: want a string, got an integer`},
		{"unknown profile", "extends = \"yolo\"\n", ErrBadValue, `p.toml:1: extends: invalid value: "yolo": want one of audit, default, permissive, strict`},
		{"table is a string", "filesystem = \"all\"\n", ErrWrongType, `p.toml:1: filesystem: wrong type: want a table ([filesystem]), got a string`},
		{"paths not an array", "[filesystem]\nallow_read = \"/x\"\n", ErrWrongType, `p.toml:2: filesystem.allow_read: wrong type: want an array of strings, got a string`},
		{"path not a string", "[filesystem]\ndeny = [\n  \"/a\",\n  7,\n]\n", ErrWrongType, `p.toml:4: filesystem.deny[1]: wrong type: want a string, got an integer`},
		{"relative path", "[filesystem]\nallow_write = [\"src\"]\n", ErrRelativePath, `p.toml:2: filesystem.allow_write[0]: not an absolute path: "src": start it with /, $PROJECT, $HOME or $TMP`},
		{"tilde", "[filesystem]\nallow_read = [\"~/.gitconfig\"]\n", ErrRelativePath, `write $HOME instead of ~`},
		{"empty path", "[filesystem]\ndeny = [\"\"]\n", ErrRelativePath, `p.toml:2: filesystem.deny[0]: not an absolute path: empty path`},
		{"dot-dot", "[filesystem]\nallow_read = [\"$PROJECT/../secrets\"]\n", ErrPathEscapes, `p.toml:2: filesystem.allow_read[0]: path escapes its root: "$PROJECT/../secrets"`},
		{"unknown variable", "[filesystem]\ndeny = [\"$USERPROFILE/x\"]\n", ErrBadValue, `unknown variable $USERPROFILE`},
		{"variable prefix only", "[filesystem]\ndeny = [\"$PROJECTS/x\"]\n", ErrBadValue, `unknown variable $PROJECTS`},
		{"duplicate path", "[filesystem]\ndeny = [\"/a\", \"/a\"]\n", ErrBadValue, `p.toml:2: filesystem.deny[1]: invalid value: "/a" is listed twice`},
		{"env name with a space", "[environment]\npass_through = [\"A B\"]\n", ErrBadValue, `p.toml:2: environment.pass_through[0]: invalid value: "A B" is not a variable name`},
		{"env wildcard in the middle", "[environment]\npass_through = [\"A*B\"]\n", ErrBadValue, `"A*B" is not a variable name`},
		{"unknown network mode", "[network]\nmode = \"open\"\n", ErrBadValue, `p.toml:2: network.mode: invalid value: "open": want one of off, allowlist, strict`},
		{"allow with mode off", "[network]\nmode = \"off\"\nallow = [\"example.com\"]\n", ErrBadValue, `p.toml:3: network.allow[0]: invalid value: network.mode is "off"`},
		{"url instead of a host", "[network]\nmode = \"allowlist\"\nallow = [\"https://example.com\"]\n", ErrBadValue, `"https://example.com" is not a host name`},
		{"port out of range", "[network]\nmode = \"allowlist\"\nallow = [\"example.com:99999\"]\n", ErrBadValue, `port must be 1-65535`},
		{"strict needs host:port", "[network]\nmode = \"strict\"\nallow = [\"example.com\", \"api.example.com:443\"]\n", ErrBadValue, `p.toml:3: network.allow[0]: invalid value: "example.com": mode "strict" allows only exact host:port entries`},
		{"memory without a number", "[limits]\nmemory = \"lots\"\n", ErrBadValue, `p.toml:2: limits.memory: invalid value: "lots" is not a size`},
		{"pids no machine reaches", "[limits]\npids = 4194304\n", ErrBadValue, `p.toml:2: limits.pids: invalid value: 4194304: must be below 4194304, the kernel's most tasks`},
		{"memory as a number", "[limits]\nmemory = 1024\n", ErrWrongType, `p.toml:2: limits.memory: wrong type: want a string, got an integer`},
		{"memory too small", "[limits]\nmemory = \"12KiB\"\n", ErrBadValue, `memory must be between 1MiB`},
		{"pids zero", "[limits]\npids = 0\n", ErrBadValue, `p.toml:2: limits.pids: invalid value: 0: must be at least 1`},
		{"pids a float", "[limits]\npids = 1.5\n", ErrWrongType, `p.toml:2: limits.pids: wrong type: want an integer, got a float`},
		{"cpu a string", "[limits]\ncpu = \"2\"\n", ErrWrongType, `p.toml:2: limits.cpu: wrong type: want a number of CPUs`},
		{"cpu zero", "[limits]\ncpu = 0\n", ErrBadValue, `p.toml:2: limits.cpu: invalid value: 0: cpu must be between 0.01 and 4096`},
		{"unknown level", "[security]\nlevel = \"paranoid\"\n", ErrBadValue, `p.toml:2: security.level: invalid value: "paranoid": want one of degraded, standard, strict`},
		{"level a boolean", "[security]\nlevel = true\n", ErrWrongType, `got a boolean`},
		{"unknown degraded feature", "[security]\nallow_degraded = [\"everything\"]\n", ErrBadValue, `p.toml:2: security.allow_degraded[0]: invalid value: "everything" is not a degradable feature`},
		{"array of tables", "[[filesystem]]\ndeny = [\"/a\"]\n", ErrWrongType, `p.toml:1: filesystem: wrong type: want a table`},
		{"dotted key", "filesystem.allow_read = [\"rel\"]\n", ErrRelativePath, `p.toml:1: filesystem.allow_read[0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.src), "p.toml")
			if err == nil {
				t.Fatalf("ParsePolicy succeeded, want %v", tt.kind)
			}
			if !errors.Is(err, ErrPolicy) || !errors.Is(err, tt.kind) {
				t.Errorf("error %v: want errors.Is ErrPolicy and %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.File != "p.toml" {
				t.Errorf("no *PolicyError naming the file in %v", err)
			}
		})
	}
}

// All problems at once, in file order.
func TestParsePolicyReportsAll(t *testing.T) {
	src := "[security]\nlevel = \"x\"\n[filesystem]\nallow_read = [\"rel\"]\nbogus = 1\n"
	_, err := ParsePolicy([]byte(src), "p.toml")
	var es PolicyErrors
	if !errors.As(err, &es) || len(es) != 3 {
		t.Fatalf("got %v, want 3 problems", err)
	}
	var lines []int
	for _, e := range es {
		lines = append(lines, e.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 4, 5}) {
		t.Fatalf("lines %v, want [2 4 5]", lines)
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1048576", 1 << 20},
		{"512MiB", 512 << 20},
		{"512Mi", 512 << 20},
		{"2GiB", 2 << 30},
		{"2G", 2e9},
		{"2GB", 2e9},
		{"2g", 2e9},
		{"1.5GiB", 3 << 29},
		{"1TiB", 1 << 40},
		{"64000000B", 64e6},
	}
	for _, tt := range tests {
		got, err := ParseMemory(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "lots", "2 GiB", "-1G", "1PiB", "0", "1KiB"} {
		if _, err := ParseMemory(bad); err == nil {
			t.Errorf("ParseMemory(%q) succeeded", bad)
		}
	}
}

func TestKeyLines(t *testing.T) {
	src := `# comment = not a key
extends = "default" # trailing
network = { mode = "allowlist", allow = ["a.com", "b.com"] }
limits.pids = 3
notes = """
fake = "key inside a string"
"""

[filesystem]
deny = [
  # a comment line
  "/a",

  "/b", "/c",
]
'quoted key' = 1
[security]
allow_degraded = ['landlock']
`
	got := keyLines([]byte(src))
	want := map[string]int{
		"extends":                    2,
		"network":                    3,
		"network.mode":               3,
		"network.allow":              3,
		"network.allow[1]":           3,
		"limits":                     4,
		"limits.pids":                4,
		"notes":                      5,
		"filesystem":                 9,
		"filesystem.deny":            10,
		"filesystem.deny[0]":         12,
		"filesystem.deny[1]":         14,
		"filesystem.deny[2]":         14,
		"filesystem.quoted key":      16,
		"security":                   17,
		"security.allow_degraded":    18,
		"security.allow_degraded[0]": 18,
	}
	for k, line := range want {
		if got[k] != line {
			t.Errorf("line of %q = %d, want %d", k, got[k], line)
		}
	}
	if _, ok := got["fake"]; ok {
		t.Error("a key inside a multi-line string was recorded")
	}
}

func TestProfilePolicy(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := ProfilePolicy(name)
		if err != nil || p.Extends.Value != name {
			t.Fatalf("ProfilePolicy(%q) = %+v, %v", name, p, err)
		}
	}
	if _, err := ProfilePolicy("yolo"); !errors.Is(err, ErrPolicy) {
		t.Fatalf("unknown profile: %v", err)
	}
}

// Every profile denies the credentials the issue names, and every
// profile's deny list is a superset of default's: a profile may add
// protection, never drop it.
func TestProfilesDenySecrets(t *testing.T) {
	must := []string{"$HOME/.ssh", "$HOME/.aws", "$HOME/.config/gcloud", "$HOME/.kube", "$HOME/.docker", "$HOME/.netrc", "$HOME/.gnupg", "/etc/shadow", "/etc/gshadow", "/etc/sudoers"}
	for _, name := range ProfileNames() {
		prof, _ := LookupProfile(name)
		for _, d := range append(must, profiles["default"].Deny...) {
			if !contains(prof.Deny, d) {
				t.Errorf("profile %s does not deny %s", name, d)
			}
		}
		if levelRank(prof.Level) < 0 || !contains(networkModes, prof.Network) {
			t.Errorf("profile %s: level %q network %q", name, prof.Level, prof.Network)
		}
		for _, d := range prof.Deny {
			if err := checkPathSyntax(d); err != nil {
				t.Errorf("profile %s: %v", name, err)
			}
		}
	}
}
