package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestLooksSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "GH_TOKEN": true, "NPM_TOKEN": true, "CI_JOB_TOKEN": true,
		"AWS_ACCESS_KEY_ID": true, "AWS_REGION": true, "AWS_SECRET_ACCESS_KEY": true,
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "STRIPE_KEY": true, "SIGNING_KEY": true,
		"DB_PASSWORD": true, "PGPASSWORD": true, "MYSQL_PWD": true, "SMTP_PASS": true,
		"CLIENT_SECRET": true, "NPM_CONFIG__AUTH": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"SSH_AUTH_SOCK": true, "DATABASE_URL": true, "github_token": true,
		"PATH": false, "HOME": false, "TERM": false, "LANG": false, "GOFLAGS": false, "GOPATH": false,
		"NPM_CONFIG_REGISTRY": false, "CI": false, "KEYBOARD": false, "MONKEY": false, "XAUTHORITY": false,
	} {
		if got := LooksSecret(name); got != want {
			t.Errorf("LooksSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestBuildEnv(t *testing.T) {
	caller := []string{
		"PATH=/custom/bin", "HOME=/root", "TERM=xterm", "LANG=C.UTF-8", "GOFLAGS=-v", "GOFLAGS=-second",
		"FOO_TOKEN=x", "NPM_CONFIG_REGISTRY=r", "NPM_CONFIG__AUTH=a", "UNLISTED=1", "junk",
	}
	tests := []struct {
		name        string
		caller      []string
		entries     []string
		wantEnv     []string
		wantDropped []string
	}{
		{"nothing listed: the four basics", caller, nil,
			[]string{"HOME=/home/u", "LANG=C.UTF-8", "PATH=/custom/bin", "TERM=xterm"}, nil},
		{"no PATH from the caller: the default", []string{"TERM=dumb"}, nil,
			[]string{"HOME=/home/u", "PATH=" + defaultPath, "TERM=dumb"}, nil},
		{"exact names; the first duplicate wins; absent names are skipped", caller, []string{"GOFLAGS", "NOT_SET"},
			[]string{"GOFLAGS=-v", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/custom/bin", "TERM=xterm"}, nil},
		{"a listed secret is dropped", caller, []string{"FOO_TOKEN"},
			[]string{"HOME=/home/u", "LANG=C.UTF-8", "PATH=/custom/bin", "TERM=xterm"}, []string{"FOO_TOKEN"}},
		{"a prefix passes matches but not secrets", caller, []string{"NPM_CONFIG_*"},
			[]string{"HOME=/home/u", "LANG=C.UTF-8", "NPM_CONFIG_REGISTRY=r", "PATH=/custom/bin", "TERM=xterm"}, []string{"NPM_CONFIG__AUTH"}},
		{"HOME cannot be passed through to the host's", caller, []string{"HOME", "*"},
			[]string{"GOFLAGS=-v", "HOME=/home/u", "LANG=C.UTF-8", "NPM_CONFIG_REGISTRY=r", "PATH=/custom/bin", "TERM=xterm", "UNLISTED=1"}, []string{"FOO_TOKEN", "NPM_CONFIG__AUTH"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var entries []envEntry
			for _, e := range tt.entries {
				entries = append(entries, envEntry{pattern: e, origin: "p.toml:1"})
			}
			env, _, dropped, warnings := buildEnv(tt.caller, "/home/u", entries)
			if !reflect.DeepEqual(env, tt.wantEnv) {
				t.Errorf("env %q, want %q", env, tt.wantEnv)
			}
			if !reflect.DeepEqual(dropped, tt.wantDropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.wantDropped)
			}
			if len(warnings) != len(dropped) {
				t.Errorf("warnings %q for dropped %q", warnings, dropped)
			}
			for _, w := range warnings {
				if !strings.Contains(w, "looks like a secret") {
					t.Errorf("warning %q", w)
				}
			}
		})
	}
}
