package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime/sdnotify"
)

// The caller's NOTIFY_SOCKET (a service manager's readiness socket,
// sd_notify(3)) is relayed as runc relays it: create gives the container a
// directory of the state directory, read-only at /run/notify, and sets
// NOTIFY_SOCKET=/run/notify/notify.sock in its process; the run or the
// start that launches it binds that socket, waits for READY=1 or the
// init's end, and tells the caller's socket READY=1 with the init as
// MAINPID. A detached run and a start return once that is done, so a
// Type=notify unit, or podman's --sdnotify=container, sees the service
// ready when its program says so. Only READY=1 is passed on: a MAINPID or
// anything else the container writes is not (package sdnotify).
//
// The mount is the runtime's own, made after the launch evaluation: it
// reaches nothing of the host but a socket only this process reads, is
// read-only, nosuid, noexec and nodev, and it is part of the frozen spec,
// hashed and verified like every other mount.

// notifyMountpoint is the mount point in the container, for messages.
const notifyMountpoint = sdnotify.DirInContainer

// notifyDirName is the directory in the container's state directory that
// holds its end of the socket.
const notifyDirName = "notify"

// notifyAddr is the caller's NOTIFY_SOCKET, "" when it is unset or empty;
// the last assignment wins, as with getenv.
func (r *Runtime) notifyAddr() string {
	addr := ""
	for _, kv := range r.Environ {
		if v, ok := strings.CutPrefix(kv, sdnotify.Env+"="); ok {
			addr = v
		}
	}
	return addr
}

// notifyDir is where create puts the container's socket directory when the
// caller's NOTIFY_SOCKET is to be relayed into s, "" when it is not: unset,
// no process to notify, or a backend that cannot bind it in (a warning
// says so). A NOTIFY_SOCKET that cannot name a socket is bad input.
func (r *Runtime) notifyDir(id string, s *specs.Spec) (string, error) {
	addr := r.notifyAddr()
	if addr == "" || s.Process == nil {
		return "", nil
	}
	if err := sdnotify.CheckAddress(addr); err != nil {
		return "", Errorf(ErrInvalidInput, "%s=%q in the runtime's environment: %v; set it to the service manager's socket, or unset it", sdnotify.Env, addr, err)
	}
	if nr, ok := r.Backend.(NotifyRelayer); !ok || !nr.RelaysNotify() {
		r.Warnf("%s is set but the %s backend cannot pass it into the container: nothing in %q can say it is ready", sdnotify.Env, r.Backend.Name(), id)
		return "", nil
	}
	return filepath.Join(r.Store.dir(id), notifyDirName), nil
}

// addNotifySocket gives s the socket directory dir and names the socket
// in its process's environment, replacing a NOTIFY_SOCKET the bundle set.
func addNotifySocket(s *specs.Spec, dir string) {
	s.Mounts = append(s.Mounts, specs.Mount{
		Destination: sdnotify.DirInContainer,
		Type:        "bind",
		Source:      dir,
		Options:     []string{"bind", "nosuid", "noexec", "nodev", "ro"},
	})
	env := s.Process.Env[:0:0]
	for _, kv := range s.Process.Env {
		if !strings.HasPrefix(kv, sdnotify.Env+"=") {
			env = append(env, kv)
		}
	}
	s.Process.Env = append(env, sdnotify.Env+"="+sdnotify.DirInContainer+"/"+sdnotify.SocketName)
}

// notifyRelay is a launch's end of the container's socket.
type notifyRelay struct {
	l    *sdnotify.Listener
	addr string
}

// listenNotify binds the socket in dir, container id's socket directory,
// before the program execs, so that nothing it sends is lost: nil when the
// caller's NOTIFY_SOCKET is unset.
func (r *Runtime) listenNotify(dir string) (*notifyRelay, error) {
	addr := r.notifyAddr()
	if addr == "" {
		return nil, nil
	}
	if err := sdnotify.CheckAddress(addr); err != nil {
		return nil, Errorf(ErrInvalidInput, "%s=%q in the runtime's environment: %v; set it to the service manager's socket, or unset it", sdnotify.Env, addr, err)
	}
	l, err := sdnotify.Listen(filepath.Join(dir, sdnotify.SocketName))
	if err != nil {
		return nil, err
	}
	return &notifyRelay{l: l, addr: addr}, nil
}

// listenNotifyAtStart is listenNotify for a start: the directory is there
// if the create was asked to relay; a container created without it cannot
// notify, which a warning says.
func (r *Runtime) listenNotifyAtStart(id string) (*notifyRelay, error) {
	if r.notifyAddr() == "" {
		return nil, nil
	}
	dir := filepath.Join(r.Store.dir(id), notifyDirName)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		r.Warnf("%s is set but %q was created without it: nothing in it can say it is ready", sdnotify.Env, id)
		return nil, nil
	}
	return r.listenNotify(dir)
}

// close stops listening (nil-safe).
func (n *notifyRelay) close() {
	if n != nil {
		_ = n.l.Close()
	}
}

// relayReady waits for the program's READY=1, or for c's init to be gone,
// and passes the readiness on with the init as the main process. It
// returns once that is done; an error means the caller's socket did not
// get it.
func (r *Runtime) relayReady(n *notifyRelay, id string, c Container) error {
	defer n.close()
	ready, err := n.l.WaitReady(func() bool {
		st, err := c.Status()
		return err != nil || st == StatusStopped
	})
	if err != nil {
		return fmt.Errorf("%q: %w", id, err)
	}
	if !ready {
		return nil
	}
	if err := sdnotify.Notify(n.addr, c.InitPid()); err != nil {
		if errors.Is(err, sdnotify.ErrNoBarrier) {
			// The message went out; only its reading is unconfirmed.
			r.Warnf("%q: %v", id, err)
			return nil
		}
		return fmt.Errorf("%q: the container runs, but its readiness was not passed on: %w", id, err)
	}
	return nil
}
