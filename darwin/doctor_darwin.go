//go:build darwin

package darwin

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// probe checks this host afresh: sandbox-exec is there, the base profile
// (what every container's profile starts with) loads on this macOS and
// confines a process that checks itself from inside, and sandbox_check
// answers.
func (b *Backend) probe() []runtime.Probe {
	var out []runtime.Probe
	add := func(name string, st runtime.Support, detail string) {
		out = append(out, runtime.Probe{Name: name, Status: st, Detail: detail})
	}
	if fi, err := os.Stat(sandboxExec); err != nil {
		add(probeSandboxExec, runtime.Unsupported, err.Error())
	} else if fi.Mode()&0o111 == 0 {
		add(probeSandboxExec, runtime.Unsupported, sandboxExec+" is not executable")
	} else {
		add(probeSandboxExec, runtime.Supported, sandboxExec)
	}
	if in, err := sandboxed(os.Getpid()); err != nil {
		add(probeCheck, runtime.Unsupported, err.Error())
	} else if in {
		add(probeCheck, runtime.Unknown, "doctor itself runs sandboxed")
	} else {
		add(probeCheck, runtime.Supported, "answers for this process (not sandboxed)")
	}
	add(b.probeProfile())
	return append(out, fixedProbes()...)
}

func (b *Backend) probeProfile() (string, runtime.Support, string) {
	if b.Self == "" {
		return probeProfile, runtime.Unknown, "cannot find the runtime's executable"
	}
	dir, err := os.MkdirTemp("", "vetto-doctor-")
	if err != nil {
		return probeProfile, runtime.Unknown, err.Error()
	}
	defer os.RemoveAll(dir)
	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return probeProfile, runtime.Unknown, err.Error()
	}
	defer lis.Close()
	sp := &specs.Spec{
		Version:     specs.Version,
		Root:        &specs.Root{Path: "/", Readonly: true},
		Process:     &specs.Process{User: specs.User{UID: b.UID, GID: b.GID}, Args: []string{b.Self}, Cwd: "/"},
		Annotations: map[string]string{spec.AnnotationNet: "none"},
	}
	plan := Translate(Input{Spec: sp, UID: b.UID, GID: b.GID, Self: b.Self, Fifo: filepath.Join(dir, fifoName)})
	if len(plan.Refusals) > 0 {
		return probeProfile, runtime.Unknown, plan.Refusals[0].String()
	}
	rp := plan.Resolved(resolve)
	cmd := exec.Command(sandboxExec, append(rp.SandboxArgs(), resolve(b.Self), SelfTestArg, lis.Addr().String())...)
	cmd.Env, cmd.Dir = []string{}, "/"
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		return probeProfile, runtime.Unsupported, err.Error()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return probeProfile, runtime.Unsupported, "the base profile did not confine a self-test: " + strings.TrimSpace(errOut.String())
		}
		return probeProfile, runtime.Supported, "the base profile loads and confines a self-test (sandboxed, no network)"
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done //nolint:errcheck // the error of a process we killed; the timeout is what is reported
		return probeProfile, runtime.Unknown, "the self-test did not finish in 10s"
	}
}
