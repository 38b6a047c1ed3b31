package hostpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// runtimeMountpoints are where the runtime may add a mount of its own at
// create: /run/notify holds the socket of a relayed NOTIFY_SOCKET
// (runtime/notify.go). Made empty unless a mount of the bundle covers it.
var runtimeMountpoints = []string{"/run/notify"}

// MakeMountpoints creates, in a host-root bundle's empty rootfs, every
// mount point that lies directly in it (not inside another mount), as
// directories (or an empty file for a file bind), owned by the caller,
// and the runtime's own (runtimeMountpoints).
// The sandbox's root, in its own user namespace, could not create them
// there — and must not own the directory it would create them in.
func MakeMountpoints(rootfs string, s *specs.Spec) error {
	var dests []specs.Mount
	for i, m := range s.Mounts {
		d := path.Clean(m.Destination)
		inside := false
		for _, earlier := range s.Mounts[:i] {
			if e := path.Clean(earlier.Destination); e != "/" && d != e && Within(d, e) {
				inside = true
			}
		}
		if !inside && d != "/" {
			dests = append(dests, m)
		}
	}
	for _, d := range runtimeMountpoints {
		inside := false
		for _, m := range s.Mounts {
			if e := path.Clean(m.Destination); e == "/" || Within(d, e) {
				inside = true
			}
		}
		if !inside {
			dests = append(dests, specs.Mount{Destination: d, Type: "tmpfs"})
		}
	}
	sort.SliceStable(dests, func(i, j int) bool { return len(dests[i].Destination) < len(dests[j].Destination) })
	for _, m := range dests {
		p := filepath.Join(rootfs, path.Clean(m.Destination))
		file := false
		if isBind(m) {
			if fi, err := os.Stat(m.Source); err == nil && !fi.IsDir() {
				file = true
			}
		}
		dir := p
		if file {
			dir = filepath.Dir(p)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("mount point %s: %w", p, err)
		}
		if file {
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return fmt.Errorf("mount point %s: %w", p, err)
			}
			f.Close()
		}
	}
	return nil
}

// Reachable checks that a process of host uid and gid can walk to path:
// every directory on the way lets it search. A container in a user
// namespace sets up its rootfs from inside it, as that uid.
func Reachable(p string, uid, gid uint32) error {
	p = filepath.Clean(p)
	for dir := p; ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s does not exist", dir)
			}
			return err
		}
		ouid, ogid, ok := ownerOf(fi)
		if ok {
			mode := fi.Mode().Perm()
			var bit fs.FileMode = 0o001
			switch {
			case ouid == uid:
				bit = 0o100
			case ogid == gid:
				bit = 0o010
			}
			if mode&bit == 0 {
				return fmt.Errorf("%s (mode %04o, owner %d:%d) does not let uid %d enter it", dir, mode, ouid, ogid, uid)
			}
		}
		if dir == "/" || dir == "." {
			return nil
		}
	}
}
