package runtime

import (
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// nsScan is host facts whose only answer is the pid-namespace scan; any
// other call panics (nil interface), which pidNamespaceGone must not make.
type nsScan struct {
	hooks.PostFacts
	pids  []int
	calls int
}

func (f *nsScan) PidsInNamespace(hooks.NamespaceID) ([]int, error) {
	f.calls++
	return f.pids, nil
}

// The namespace is proven empty without a scan only by an own pid
// namespace whose init the backend saw exit; every other case scans, and
// a process the scan finds is Remaining, never clean.
func TestPidNamespaceGone(t *testing.T) {
	base := &hooks.Baseline{Namespaces: map[string]hooks.NamespaceID{string(specs.PIDNamespace): {Dev: 4, Ino: 4026532000}}}
	for _, tc := range []struct {
		name       string
		own        bool
		initExited bool
		left       []int
		want       bool
		wantScans  int
		wantProof  string
	}{
		{"init exited: the kernel's proof", true, true, []int{99}, true, 0, "init-exited"},
		{"init not seen exiting, namespace empty", true, false, nil, true, 1, "scan"},
		{"init not seen exiting, a process left", true, false, []int{99}, false, -1, "scan"},
		{"shared pid namespace: nothing to scan", false, true, []int{99}, true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &nsScan{pids: tc.left}
			r := &Runtime{Facts: f}
			rec := &Record{ID: "c1", Baseline: base, OwnPidNamespace: tc.own}
			receipt := &hooks.Receipt{InitExited: tc.initExited}
			if got := r.pidNamespaceGone(rec, receipt); got != tc.want {
				t.Fatalf("pidNamespaceGone = %v, want %v (receipt %+v)", got, tc.want, receipt)
			}
			if tc.wantScans >= 0 && f.calls != tc.wantScans {
				t.Errorf("scanned %d times, want %d", f.calls, tc.wantScans)
			}
			if receipt.PidNamespaceProof != tc.wantProof {
				t.Errorf("proof %q, want %q", receipt.PidNamespaceProof, tc.wantProof)
			}
			if !tc.want && !slices.Equal(receipt.Remaining, tc.left) {
				t.Errorf("remaining %v, want %v", receipt.Remaining, tc.left)
			}
		})
	}
}
