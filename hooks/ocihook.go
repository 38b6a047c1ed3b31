package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// HookInput is what an OCI hook knows: the state on stdin and the bundle's
// config.json. It runs when a runtime other than vetto-runtime drives a
// vetto bundle; vetto-runtime itself does the same work in-process.
type HookInput struct {
	State *specs.State
	Spec  *specs.Spec
}

// ReadHookInput parses the OCI state from r and loads the bundle's spec,
// with its paths resolved against the bundle.
func ReadHookInput(r io.Reader) (*HookInput, error) {
	var st specs.State
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return nil, fmt.Errorf("OCI state on stdin: %w", err)
	}
	if st.Bundle == "" {
		return nil, fmt.Errorf("OCI state of %q names no bundle", st.ID)
	}
	bundle, err := filepath.Abs(st.Bundle)
	if err != nil {
		return nil, fmt.Errorf("bundle of %q: %w", st.ID, err)
	}
	data, err := ReadBundleConfig(bundle)
	if err != nil {
		return nil, fmt.Errorf("bundle of %q: %w", st.ID, err)
	}
	s, err := spec.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("bundle of %q: %w", st.ID, err)
	}
	if s, err = spec.Resolve(s, st.Bundle); err != nil {
		return nil, fmt.Errorf("bundle of %q: %w", st.ID, err)
	}
	return &HookInput{State: &st, Spec: s}, nil
}

// HookPoststart is the poststart verification as an OCI hook. It has no
// baseline from create and no way into the container but the host's view,
// so it judges what the host can see of the live init: its namespaces
// against the spec (new ones differ from the host's, joined ones are the
// path's) and the masks over its masked paths. P1 and the P3 canaries need
// the runtime that built the container, and are UNAVAILABLE here: the
// outcome is at best INCONCLUSIVE, and a FAIL is a FAIL.
func HookPoststart(in *HookInput, f PostFacts) []Result {
	pid := in.State.Pid
	out := []Result{{Check: "P1/identity", Verdict: Unavailable, Evidence: HostFact,
		Expected: "the init recorded at create", Found: "no baseline: another runtime created the container"}}
	if in.Spec.Linux != nil {
		for _, r := range CheckNamespaces(pid, in.Spec.Linux.Namespaces, f) {
			r.Check, r.Evidence = "P2/"+r.Check, HostFact
			out = append(out, r)
		}
	}
	// Without a probe, the loopback canary's intent is still judged from
	// the host: a container that must not reach the host's loopback must
	// not be in the host's network namespace.
	if plan, err := PlanCanaries(in.Spec); err == nil && plan.ConnectMustFail {
		r := Result{Check: "P3/network-namespace", Evidence: HostFact}
		got, gerr := f.Of(pid, specs.NetworkNamespace)
		host, herr := f.Host(specs.NetworkNamespace)
		r.Expected = "not the host's network namespace " + host.String()
		switch {
		case gerr != nil || herr != nil:
			r.Verdict, r.Found = Unavailable, fmt.Sprint(gerr, herr)
		case got == host:
			r.Verdict, r.Found = Fail, "the host's "+got.String()+": the host's loopback is reachable"
		default:
			r.Verdict, r.Found = Pass, got.String()
		}
		out = append(out, r)
	}
	out = append(out, Result{Check: "P3/canaries", Verdict: Unavailable, Evidence: HostFact,
		Expected: "a probe joined to the container", Found: "an OCI hook cannot exec into a container another runtime built"})
	return append(out, StillMasked(LiveInput{Pid: pid, Spec: in.Spec}, f)...)
}

// HookPoststop is the teardown check as an OCI hook: after the other
// runtime deleted the container, nothing may be left in its cgroup. The
// cgroup is found from linux.cgroupsPath (cgroupfs form) in the v2
// hierarchy: the unified directory of a hybrid host or the v2 root.
func HookPoststop(in *HookInput, f PostFacts) []Result {
	r := Result{Check: "teardown/cgroup", Evidence: HostFact, Expected: "no process left in the container's cgroup"}
	p := ""
	if in.Spec.Linux != nil {
		p = in.Spec.Linux.CgroupsPath
	}
	if p == "" || strings.Contains(p, ":") {
		r.Verdict, r.Found = Unavailable, fmt.Sprintf("cgroupsPath %q: not a cgroupfs path this hook can find", p)
		return []Result{r}
	}
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		dir := filepath.Join(root, p)
		if has, err := f.CgroupHas(root, "cgroup.procs"); err != nil || !has {
			continue
		}
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			r.Verdict, r.Found = Pass, dir+" removed"
			return []Result{r}
		}
		pids, err := cgroupTreeProcs(dir, f)
		switch {
		case err != nil:
			r.Verdict, r.Found = Unavailable, err.Error()
		case len(pids) > 0:
			r.Verdict, r.Found = Fail, fmt.Sprintf("processes %v still in %s", pids, dir)
		default:
			r.Verdict, r.Found = Pass, dir+" empty"
		}
		return []Result{r}
	}
	r.Verdict, r.Found = Unavailable, "no cgroup v2 hierarchy on this host"
	return []Result{r}
}
