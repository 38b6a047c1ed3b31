package spec

import (
	"errors"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"minimal", `{"ociVersion":"1.0.2","root":{"path":"rootfs"},"process":{"args":["sh"],"cwd":"/"}}`, ""},
		{"unknown fields are extensions", `{"ociVersion":"1.0.2","x-vendor":{"a":1}}`, ""},
		{"empty", "  \n", "config.json is empty"},
		{"not json", `{"ociVersion":`, "invalid config.json"},
		{"wrong type names the field", `{"process":{"args":"sh"}}`, `field "process.args"`},
		{"trailing data", `{"ociVersion":"1.0.2"} {}`, "trailing data"},
		{"trailing brace", `{"ociVersion":"1.0.2"}}`, "trailing data"},
		{"trailing form feed", "{\"ociVersion\":\"1.0.2\"}\f", "trailing data"},
		{"trailing bracket", "{\"ociVersion\":\"1.0.2\"}\n]", "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func validSpec() *specs.Spec {
	return &specs.Spec{
		Version: "1.0.2",
		Root:    &specs.Root{Path: "rootfs"},
		Process: &specs.Process{Args: []string{"sh"}, Cwd: "/"},
		Mounts:  []specs.Mount{{Destination: "/proc", Type: "proc", Source: "proc"}},
		Linux:   &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: "pid"}, {Type: "network"}}},
	}
}

func TestValidate(t *testing.T) {
	timeout := 0
	tests := []struct {
		name   string
		edit   func(*specs.Spec)
		fields []string // every violation's field, in order
	}{
		{"valid", func(*specs.Spec) {}, nil},
		{"no version", func(s *specs.Spec) { s.Version = "" }, []string{"ociVersion"}},
		{"version 2", func(s *specs.Spec) { s.Version = "2.0.0" }, []string{"ociVersion"}},
		{"no root", func(s *specs.Spec) { s.Root = nil }, []string{"root.path"}},
		{"no process (optional until start)", func(s *specs.Spec) { s.Process = nil }, nil},
		{"empty args", func(s *specs.Spec) { s.Process.Args = nil }, []string{"process.args"}},
		{"relative cwd", func(s *specs.Spec) { s.Process.Cwd = "tmp" }, []string{"process.cwd"}},
		{"bad env", func(s *specs.Spec) { s.Process.Env = []string{"PATH=/bin", "NOEQUALS"} }, []string{"process.env[1]"}},
		{"rlimit soft > hard", func(s *specs.Spec) {
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 10, Hard: 5}}
		}, []string{"process.rlimits[0]"}},
		{"unknown capability", func(s *specs.Spec) {
			s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: []string{"CAP_CHOWN", "CAP_BOGUS"}, Ambient: []string{"cap_kill", "NET_RAW"}}
		}, []string{"process.capabilities.bounding[1]", "process.capabilities.ambient[0]", "process.capabilities.ambient[1]"}},
		{"relative mount destination", func(s *specs.Spec) { s.Mounts[0].Destination = "proc" }, []string{"mounts[0].destination"}},
		{"unknown namespace", func(s *specs.Spec) { s.Linux.Namespaces[0].Type = "bogus" }, []string{"linux.namespaces[0].type"}},
		{"duplicate namespace", func(s *specs.Spec) { s.Linux.Namespaces[1].Type = "pid" }, []string{"linux.namespaces[1].type"}},
		{"relative namespace path", func(s *specs.Spec) { s.Linux.Namespaces[1].Path = "net" }, []string{"linux.namespaces[1].path"}},
		{"relative masked path", func(s *specs.Spec) { s.Linux.MaskedPaths = []string{"proc/kcore"} }, []string{"linux.maskedPaths[0]"}},
		{"relative hook", func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{Poststart: []specs.Hook{{Path: "hook"}}}
		}, []string{"hooks.poststart[0].path"}},
		{"zero hook timeout", func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/true", Timeout: &timeout}}}
		}, []string{"hooks.createRuntime[0].timeout"}},
		{"every violation reported", func(s *specs.Spec) { s.Version = ""; s.Process.Cwd = ""; s.Root = nil },
			[]string{"ociVersion", "root.path", "process.cwd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.edit(s)
			err := Validate(s)
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var vs Violations
			if !errors.As(err, &vs) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate = %v, want Violations wrapping ErrInvalid", err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Fatalf("violations on %v, want %v (%v)", got, tt.fields, err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	s := validSpec()
	s.Mounts = append(s.Mounts,
		specs.Mount{Destination: "/data", Type: "bind", Source: "data"},
		specs.Mount{Destination: "/opt", Source: "opt", Options: []string{"rbind", "ro"}},
		specs.Mount{Destination: "/abs", Type: "bind", Source: "/srv"},
	)
	out, err := Resolve(s, "/b")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ got, want string }{
		{out.Root.Path, "/b/rootfs"},
		{out.Mounts[0].Source, "proc"}, // not a bind: a device/fs name, untouched
		{out.Mounts[1].Source, "/b/data"},
		{out.Mounts[2].Source, "/b/opt"},
		{out.Mounts[3].Source, "/srv"},
		{s.Root.Path, "rootfs"}, // the input is not modified
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %q, want %q", i, c.got, c.want)
		}
	}
	if _, err := Resolve(s, "relative"); err == nil {
		t.Error("Resolve with a relative bundle succeeded")
	}
}
