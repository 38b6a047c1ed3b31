package runtime

import (
	"bytes"
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// recordWatch wakes a monitor begun at create when the container's record
// is written (its start ends with that write) or its state directory goes
// (a delete): an inotify watch on the directory, which exists before the
// monitor first reads the record, so no write after that read is missed.
type recordWatch struct{ fd int }

// watchRecord watches container id's record.
func (s Store) watchRecord(id string) (Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	const mask = unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, s.dir(id), mask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &recordWatch{fd: fd}, nil
}

// Wait returns true once the record was written or the directory left,
// false when timeout passed first. The audit log beside the record is
// written too; its events are read and passed over.
func (w *recordWatch) Wait(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	var buf [4096]byte
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return false
		}
		got, err := unix.Read(w.fd, buf[:])
		if err != nil || got <= 0 {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			return true // the watch is broken: look rather than wait
		}
		if recordEvent(buf[:got]) {
			return true
		}
	}
}

// recordEvent says whether a read of inotify events holds one that
// concerns the record: it was renamed into place or written, or the
// directory itself went.
func recordEvent(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return true
		}
		if ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_Q_OVERFLOW) != 0 {
			return true
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) == recordFile {
			return true
		}
		b = b[end:]
	}
	return false
}

func (w *recordWatch) Close() { unix.Close(w.fd) }
