//go:build linux

package integration

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// containerd drives vetto-runtime through its shim (create, start, state,
// delete with --root): the verification runs in-process in `start`, and
// gives the verdicts a direct run gives. A default container is
// VerifiedRuntime and verify passes; the host-network bundle whose
// annotation says network none fails exactly P3/loopback-connect — killed
// at standard (ctr run fails), recorded at degraded.
func TestVerifyUnderContainerd(t *testing.T) {
	c := clientStartContainerd(t, "")
	verify := func(id string) (verdicts, result) {
		r := clientExec(t, c.dir, nil, binary, "--root", c.vettoRoot(c.ns), "verify", "--format", "json", id)
		var v verdicts
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("verify %s: %v: %s", id, err, r)
		}
		return v, r
	}

	ok := c.newID("ok")
	c.mustCtr(c.run([]string{"-d"}, ok, "sleep", "1000")...)
	c.readCgroup(c.ns, ok)
	st := clientVettoState(t, c.dir, c.vettoRoot(c.ns), ok)
	if v := st["vetto"].(map[string]any); v["state"] != "VerifiedRuntime" || v["verification"] != "PASS" {
		t.Fatalf("ctr run -d: vetto state %v", v)
	}
	if v, r := verify(ok); r.code != 0 || v.Verification != "PASS" {
		t.Fatalf("verify under containerd: %s", r)
	}
	c.mustCtr("task", "kill", "-s", "KILL", ok)
	c.waitTask(ok, "STOPPED")
	c.mustCtr("task", "rm", ok)
	c.mustCtr("containers", "rm", ok)
	c.assertDeleted(ok)

	weak := []string{"-d", "--net-host", "--annotation", "dev.vetto.net=none"}
	killed := c.newID("weak")
	r := c.ctr(c.run(weak, killed, "sleep", "1000")...)
	if r.code == 0 || !strings.Contains(r.stderr, "P3/loopback-connect: FAIL") {
		t.Fatalf("ctr run of a host-network bundle that says network none, at standard: %s", r)
	}
	_ = c.ctr("task", "rm", "-f", killed)
	_ = c.ctr("containers", "rm", killed)
	c.assertDeleted(killed)

	// A bundle may not lower its level below standard on its own (the
	// untrusted-bundles issue): the operator allows degraded in
	// runtime.toml, which the shim cannot pass a flag for.
	recorded := c.newID("degraded")
	refused := c.ctr(c.run(append(weak, "--annotation", "dev.vetto.level=degraded"), c.newID("refused"), "sleep", "1000")...)
	if refused.code == 0 || !strings.Contains(refused.stderr, "[level.annotation]") {
		t.Fatalf("ctr run of a bundle that lowers its own level, with no floor: %s", refused)
	}
	c.runtime = configuredRuntime(t, c.dir, "min_level = \"degraded\"\n")
	c.mustCtr(c.run(append(weak, "--annotation", "dev.vetto.level=degraded"), recorded, "sleep", "1000")...)
	c.readCgroup(c.ns, recorded)
	v, r := verify(recorded)
	if r.code != 125 || strings.Join(v.failing(), ",") != "P3/network-namespace,P3/at-launch" {
		t.Fatalf("verify of the degraded host-network container under containerd: %s", r)
	}
	c.mustCtr("task", "kill", "-s", "KILL", recorded)
	c.waitTask(recorded, "STOPPED")
	c.mustCtr("task", "rm", recorded)
	c.mustCtr("containers", "rm", recorded)
	c.assertDeleted(recorded)
}

// Another runtime running a bundle with vetto's own hooks (what `spec
// --policy` writes): runc runs `vetto-runtime hook poststart`, which judges
// from the host what it can without a probe, and its FAIL makes runc stop
// the container; `hook poststop` checks the cgroup is empty afterwards.
func TestVerifyHooksUnderRunc(t *testing.T) {
	clientNeed(t, "runc")
	e := newEnv(t)
	runcRoot := e.tmp + "/runc"
	hooks := func(s *specs.Spec) {
		s.Hooks = &specs.Hooks{
			Poststart: []specs.Hook{{Path: binary, Args: []string{"vetto-runtime", "hook", "poststart"}}},
			Poststop:  []specs.Hook{{Path: binary, Args: []string{"vetto-runtime", "hook", "poststop"}}},
		}
	}
	good := e.id()
	b := e.bundle([]string{"sleep", "100"}, hooks)
	if r := e.runCmd(cmdIn("runc", "--root", runcRoot, "run", "-d", "-b", b, good)); r.code != 0 {
		t.Fatalf("runc run with vetto's hooks: %s", r)
	}
	if r := e.runCmd(cmdIn("runc", "--root", runcRoot, "delete", "-f", good)); r.code != 0 {
		t.Fatalf("runc delete with vetto's poststop hook: %s", r)
	}

	bad := e.id()
	b = e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		hooks(s)
		withoutNamespace(specs.NetworkNamespace)(s)
		s.Annotations = map[string]string{"dev.vetto.net": "none"}
	})
	r := e.runCmd(cmdIn("runc", "--root", runcRoot, "run", "-d", "-b", b, bad))
	if r.code == 0 || !strings.Contains(r.stderr, "P3/network-namespace: FAIL") {
		t.Fatalf("runc run of a host-network bundle that says network none: %s", r)
	}
	_ = e.runCmd(cmdIn("runc", "--root", runcRoot, "delete", "-f", bad))
}

func cmdIn(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
