//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// withoutSetIDRules is vetto's profile with its set-id guard taken out:
// the mode-carrying calls allowed whatever their mode, as a deny-by-
// default profile written for Docker's default set has them.
func withoutSetIDRules(s *specs.Spec) {
	sc := *s.Linux.Seccomp
	sc.Syscalls = nil
	for _, r := range s.Linux.Seccomp.Syscalls {
		if r.Action == specs.ActAllow && len(r.Args) > 0 && slices.ContainsFunc(r.Names, func(n string) bool {
			return slices.Contains([]string{"chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "open", "openat", "mknod", "mknodat"}, n)
		}) {
			r.Args = nil
		}
		sc.Syscalls = append(sc.Syscalls, r)
	}
	s.Linux.Seccomp = &sc
}

// The attack: a strict container with no user namespace is host root, and
// what it writes into a read-write bind is host root's file. It copies a
// shell there and makes it set-uid: any user of the host who can reach
// the directory runs it as root. strict refuses a container that is host
// root and can write host paths unless its seccomp filter refuses set-id
// modes (vetto's profile does); the control, with vetto's profile, runs and
// its chmod is refused.
func TestStrictSetIDOnHostRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*specs.Spec)
		rootRW bool
		ok     bool
	}{
		{"a read-write bind, a filter without the set-id guard", withoutSetIDRules, false, false},
		{"a writable rootfs, a filter without the set-id guard", withoutSetIDRules, true, false},
		{"control: vetto's profile", func(*specs.Spec) {}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.tmp, "out")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			target := "/d/sh"
			planted := filepath.Join(dir, "sh")
			var root string
			if tc.rootRW {
				root = clientRootfs(t, t.TempDir())
				target, planted = "/sh", filepath.Join(root, "sh")
			}
			b := e.bundle([]string{"sh", "-c", "cp /bin/busybox " + target + " && chmod 4755 " + target}, edits(strictSpec, tc.edit, func(s *specs.Spec) {
				s.Mounts = append(s.Mounts, specs.Mount{Destination: "/d", Type: "bind", Source: dir, Options: []string{"bind", "rw"}})
				if root != "" {
					s.Root = &specs.Root{Path: root}
				}
			}))
			r := e.vetto("run", "--security-level", "strict", "-b", b, e.id())
			if fi, err := os.Stat(planted); err == nil && fi.Mode()&os.ModeSetuid != 0 {
				st := fi.Sys().(*syscall.Stat_t)
				t.Fatalf("the container left a set-uid file of uid %d on the host: %s (%v); run: %s", st.Uid, planted, fi.Mode(), r)
			}
			if tc.ok {
				if r.code == 125 {
					t.Fatalf("control refused: %s", r)
				}
				return
			}
			if r.code != 125 || !strings.Contains(r.stderr, "[strict.host-writes.setid]") {
				t.Errorf("run: %s; want exit 125 naming strict.host-writes.setid", r)
			}
		})
	}
}
