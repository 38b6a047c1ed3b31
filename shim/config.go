// Package shim is the pre-exec step's config: what a container's init
// (and an exec'd process's) does in the process itself between the
// runtime's setup and the program's first instruction — Landlock
// restricting it, the canaries probing the very domain the program will
// run in. The init is
// the runtime's own sealed clone (libcontainer starts every init from
// one), so the step is vetto's code in the process that then becomes the
// program: libcontainer's PreExecHook (third_party/runc-vetto.patch) runs
// it after every restriction libcontainer applies, just before execve.
//
// The config travels in libcontainer's init config, over the init pipe,
// never in argv or the environment, where the workload could read it; what
// the canaries try arrives later on the canary fd, from the host.
package shim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Config is what the step does before the exec.
type Config struct {
	// Ruleset is the dev.vetto.landlock ruleset to restrict to; "" none.
	Ruleset string `json:"ruleset,omitempty"`
	// CanaryFD is the inherited listening socket on which the host sends
	// the canary plan and gets the report; 0: no canaries.
	CanaryFD int `json:"canaryFD,omitempty"`
	// CanaryConnected: CanaryFD is already the connection, the init's end
	// of a socket pair whose other end the host process holds — a run,
	// which starts the container from the process that created it, needs
	// no listener in the state directory for a later start to find.
	CanaryConnected bool `json:"canaryConnected,omitempty"`
	// Dumpable keeps the init dumpable through the step (a rootless
	// runtime): the host side of the canaries reads /proc/<init>/root,
	// which a user without CAP_SYS_PTRACE in the initial user namespace
	// may only while the init is dumpable (its memory map was made there,
	// by the runtime's exec). Root's init is made non-dumpable.
	Dumpable bool `json:"dumpable,omitempty"`
	// EnvSHA256 is the digest (EnvDigest) of the frozen spec's
	// process.env as the init makes it (InitEnv): the step refuses to let the process run with any
	// other environment than the one the spec gives (libcontainer's HOME
	// aside) — a variable of the host's must not reach the sandbox by a
	// fault of the backend. "" skips the check (an exec'd process).
	EnvSHA256 string `json:"envSHA256,omitempty"`
	// EnvHome: the spec's environment sets HOME (else the init adds it).
	EnvHome bool `json:"envHome,omitempty"`
}

// EnvDigest is sha256 over env, each entry NUL-terminated, in order.
func EnvDigest(env []string) string {
	h := sha256.New()
	for _, kv := range env {
		h.Write([]byte(kv))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// InitEnv is the environment libcontainer's init execs a process with
// whose spec says env (prepareEnv): each variable once, at the place of
// its last occurrence with its last value, an empty HOME dropped; home
// says whether HOME is then set — if not, the init appends one from the
// user's passwd entry.
func InitEnv(env []string) (out []string, home bool) {
	seen := map[string]bool{}
	for i := len(env) - 1; i >= 0; i-- {
		name, value, _ := strings.Cut(env[i], "=")
		if seen[name] {
			continue
		}
		seen[name] = true
		if name == "HOME" {
			if value == "" {
				continue
			}
			home = true
		}
		out = append(out, env[i])
	}
	slices.Reverse(out)
	return out, home
}

// EnvMatches says env, as the init is about to exec it, is the spec's:
// digest is EnvDigest of InitEnv's list and home its second result.
func EnvMatches(env []string, digest string, home bool) bool {
	if !home {
		n := len(env)
		if n == 0 || !strings.HasPrefix(env[n-1], "HOME=") {
			return false
		}
		env = env[:n-1]
	}
	return EnvDigest(env) == digest
}

// Empty reports whether the step has nothing to do.
func (c Config) Empty() bool { return c.Ruleset == "" && c.CanaryFD == 0 }

// Encode is c as the init gets it.
func (c Config) Encode() []byte {
	b, _ := json.Marshal(c) // strings and ints only: cannot fail
	return b
}

// Decode reads what Encode wrote, refusing what could not be meant: an
// unknown field, or a canary fd that is stdio.
func Decode(data []byte) (Config, error) {
	var c Config
	if err := strictUnmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("pre-exec config: %w", err)
	}
	if c.CanaryFD < 0 || (c.CanaryFD > 0 && c.CanaryFD < 3) {
		return Config{}, fmt.Errorf("pre-exec config: canary fd %d is not an inherited fd", c.CanaryFD)
	}
	if c.CanaryConnected && c.CanaryFD == 0 {
		return Config{}, fmt.Errorf("pre-exec config: a connected canary channel without its fd")
	}
	return c, nil
}
