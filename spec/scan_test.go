package spec

import (
	"slices"
	"testing"
)

func TestMissingRepoMetadata(t *testing.T) {
	tests := []struct {
		name           string
		have           []string
		worktreeConfig bool
		want           []string
	}{
		{"git init", []string{"config", "hooks", "info"}, false, nil},
		{"no hooks (go-git, JGit, --template=)", []string{"config", "info"}, false, []string{"hooks"}},
		{"nothing", nil, false, []string{"config", "hooks", "info"}},
		{"worktreeConfig on", []string{"config", "hooks", "info"}, true, []string{"config.worktree"}},
		{"worktreeConfig on, has it", []string{"config", "config.worktree", "hooks", "info"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MissingRepoMetadata(tt.have, tt.worktreeConfig); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWorktreeConfigOn(t *testing.T) {
	tests := []struct {
		config string
		want   bool
	}{
		{"", false},
		{"[core]\n\tbare = false\n", false},
		{"[extensions]\n\tworktreeConfig = true\n", true},
		{"[Extensions]\n\tWORKTREECONFIG=yes\n", true},
		{"[extensions]\n\tworktreeconfig\n", true},
		{"[extensions] worktreeConfig = 1\n", true},
		{"[extensions]\n\tworktreeConfig = false\n", false},
		{"[extensions]\n\tworktreeConfig = true\n\tworktreeConfig = off\n", false},
		{"[core]\n\tworktreeConfig = true\n", false},
		{"[extensions]\n\t# worktreeConfig = true\n", false},
	}
	for _, tt := range tests {
		if got := WorktreeConfigOn(tt.config); got != tt.want {
			t.Errorf("WorktreeConfigOn(%q) = %v, want %v", tt.config, got, tt.want)
		}
	}
}

func TestGitConfigValue(t *testing.T) {
	tests := []struct {
		config, section, key string
		want                 string
		found                bool
	}{
		{"[core]\n\thooksPath = .githooks\n", "core", "hookspath", ".githooks", true},
		{"[Core]\n\tHOOKSPATH=\"my hooks\" ; comment\n", "core", "hookspath", "my hooks", true},
		{"[core] hooksPath = a\n[core]\n\thooksPath = b # later wins\n", "core", "hookspath", "b", true},
		{"[core \"x\"]\n\thooksPath = a\n", "core", "hookspath", "", false},
		{"[alias]\n\thooksPath = a\n", "core", "hookspath", "", false},
		{"[extensions]\n\tworktreeConfig\n", "extensions", "worktreeconfig", "", true},
		{"", "core", "hookspath", "", false},
	}
	for _, tt := range tests {
		got, found := GitConfigValue(tt.config, tt.section, tt.key)
		if got != tt.want || found != tt.found {
			t.Errorf("GitConfigValue(%q, %s.%s) = %q, %v; want %q, %v", tt.config, tt.section, tt.key, got, found, tt.want, tt.found)
		}
	}
}
