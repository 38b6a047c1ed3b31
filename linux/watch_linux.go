package linux

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// eventFiles are the cgroup files the kernel notifies on (inotify
// IN_MODIFY) when something a monitor cares about happens: the cgroup
// emptied or filled (cgroup.events), a fork hit the pids limit
// (pids.events), memory hit its limit or an OOM kill (memory.events).
var eventFiles = []string{"cgroup.events", "pids.events", "memory.events"}

// watcher wakes the monitor on the container's cgroup events and on any
// change to its init's mount table (poll(2) on /proc/<pid>/mountinfo
// reports POLLPRI when a mount is added, removed or changed).
type watcher struct {
	inotify   int
	mountinfo *os.File
}

// Watch watches c's cgroups and mounts.
func (c *container) Watch() (runtime.Watcher, error) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &watcher{inotify: in}
	for _, dir := range c.CgroupPaths() {
		for _, name := range eventFiles {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				_, _ = unix.InotifyAddWatch(in, p, unix.IN_MODIFY)
			}
		}
	}
	if f, err := os.Open("/proc/" + strconv.Itoa(c.InitPid()) + "/mountinfo"); err == nil {
		w.mountinfo = f
		_, _ = io.Copy(io.Discard, f) // read once: a change is news after this
	}
	return w, nil
}

// Wait waits up to timeout for an event and drains what came.
func (w *watcher) Wait(timeout time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(w.inotify), Events: unix.POLLIN}}
	if w.mountinfo != nil {
		fds = append(fds, unix.PollFd{Fd: int32(w.mountinfo.Fd()), Events: unix.POLLPRI})
	}
	n, err := unix.Poll(fds, int(timeout.Milliseconds()))
	if err != nil {
		if !errors.Is(err, unix.EINTR) {
			time.Sleep(timeout) // poll itself failing: fall back to the timer
		}
		return false
	}
	if n == 0 {
		return false
	}
	if fds[0].Revents&unix.POLLIN != 0 {
		buf := make([]byte, 4096)
		for {
			if n, err := unix.Read(w.inotify, buf); n <= 0 || err != nil {
				break
			}
		}
	}
	if len(fds) > 1 && fds[1].Revents != 0 {
		if fds[1].Revents&(unix.POLLERR|unix.POLLNVAL|unix.POLLHUP) != 0 && fds[1].Revents&unix.POLLPRI == 0 {
			// The init is gone: no more mount events to hear.
			w.mountinfo.Close()
			w.mountinfo = nil
		} else {
			_, _ = w.mountinfo.Seek(0, io.SeekStart)
			_, _ = io.Copy(io.Discard, w.mountinfo)
		}
	}
	return true
}

func (w *watcher) Close() {
	unix.Close(w.inotify)
	if w.mountinfo != nil {
		w.mountinfo.Close()
	}
}
