package hooks

import (
	"errors"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

type fakeNS struct {
	of   map[specs.LinuxNamespaceType]NamespaceID
	host map[specs.LinuxNamespaceType]NamespaceID
	path map[string]NamespaceID
}

func (f fakeNS) Of(_ int, t specs.LinuxNamespaceType) (NamespaceID, error) {
	if id, ok := f.of[t]; ok {
		return id, nil
	}
	return NamespaceID{}, errors.New("no such process")
}
func (f fakeNS) Host(t specs.LinuxNamespaceType) (NamespaceID, error) { return f.host[t], nil }
func (f fakeNS) Path(p string) (NamespaceID, error) {
	if id, ok := f.path[p]; ok {
		return id, nil
	}
	return NamespaceID{}, errors.New("missing")
}

func TestCheckNamespaces(t *testing.T) {
	host := map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 1}, "pid": {4, 2}}
	tests := []struct {
		name string
		want []specs.LinuxNamespace
		of   map[specs.LinuxNamespaceType]NamespaceID
		path map[string]NamespaceID
		got  []Verdict
	}{
		{"new namespaces differ from host", []specs.LinuxNamespace{{Type: "network"}, {Type: "pid"}},
			map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 10}, "pid": {4, 11}}, nil, []Verdict{Pass, Pass}},
		{"new namespace that is the host's fails", []specs.LinuxNamespace{{Type: "network"}},
			map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 1}}, nil, []Verdict{Fail}},
		{"joined namespace matches its path", []specs.LinuxNamespace{{Type: "network", Path: "/run/netns/x"}},
			map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 7}}, map[string]NamespaceID{"/run/netns/x": {4, 7}}, []Verdict{Pass}},
		{"joined namespace elsewhere fails", []specs.LinuxNamespace{{Type: "network", Path: "/run/netns/x"}},
			map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 8}}, map[string]NamespaceID{"/run/netns/x": {4, 7}}, []Verdict{Fail}},
		{"unreadable process is unavailable, never pass", []specs.LinuxNamespace{{Type: "ipc"}},
			nil, nil, []Verdict{Unavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := CheckNamespaces(1, tt.want, fakeNS{of: tt.of, host: host, path: tt.path})
			if len(res) != len(tt.got) {
				t.Fatalf("got %d results, want %d", len(res), len(tt.got))
			}
			for i, r := range res {
				if r.Verdict != tt.got[i] {
					t.Errorf("result %d = %s, want %s", i, r, tt.got[i])
				}
			}
		})
	}
}
