package hooks

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// NamespaceID identifies one namespace: the device and inode of its nsfs
// file, which is what the kernel compares when it says two processes share
// a namespace.
type NamespaceID struct {
	Dev, Ino uint64
}

func (n NamespaceID) String() string { return fmt.Sprintf("%d:%d", n.Dev, n.Ino) }

// NamespaceFacts is what the host read about the live init's namespaces.
type NamespaceFacts interface {
	// Of is the namespace of type t that process pid is in.
	Of(pid int, t specs.LinuxNamespaceType) (NamespaceID, error)
	// Host is the runtime's own namespace of type t.
	Host(t specs.LinuxNamespaceType) (NamespaceID, error)
	// Path is the namespace a path such as /proc/123/ns/net refers to.
	Path(path string) (NamespaceID, error)
}

// CheckNamespaces judges, for every namespace the spec asks for, whether the
// live process pid is in it: a new namespace must differ from the host's, a
// joined one must be the one at its path (docs/verification.md, pre-launch).
func CheckNamespaces(pid int, want []specs.LinuxNamespace, facts NamespaceFacts) []Result {
	var out []Result
	for _, ns := range want {
		check := "namespace/" + string(ns.Type)
		got, err := facts.Of(pid, ns.Type)
		if err != nil {
			out = append(out, Result{Check: check, Verdict: Unavailable, Expected: "readable", Found: err.Error()})
			continue
		}
		if ns.Path != "" {
			joined, err := facts.Path(ns.Path)
			if err != nil {
				out = append(out, Result{Check: check, Verdict: Unavailable, Expected: "readable " + ns.Path, Found: err.Error()})
				continue
			}
			r := Result{Check: check, Verdict: Pass, Expected: "joined " + ns.Path + " " + joined.String(), Found: got.String()}
			if got != joined {
				r.Verdict = Fail
			}
			out = append(out, r)
			continue
		}
		host, err := facts.Host(ns.Type)
		if err != nil {
			out = append(out, Result{Check: check, Verdict: Unavailable, Expected: "readable host namespace", Found: err.Error()})
			continue
		}
		r := Result{Check: check, Verdict: Pass, Expected: "not the host's " + host.String(), Found: got.String()}
		if got == host {
			r.Verdict = Fail
		}
		out = append(out, r)
	}
	return out
}
