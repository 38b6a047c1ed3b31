package hooks

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"
)

// CheckRelaySockets judges each of the relay's sockets from the host:
// SO_TYPE and SO_ACCEPTCONN, getsockname, and ioctl(SIOCGSKNS), whose
// namespace's inode must be the one /proc/<pid>/ns/net names for the
// container's init. The socket is in the runtime's own process, so
// nothing the container does can change what is read.
func CheckRelaySockets(pid int, socks []RelaySocket) []Result {
	out := make([]Result, 0, len(socks))
	initNet, err := statNS("/proc/" + strconv.Itoa(pid) + "/ns/net")
	for _, s := range socks {
		if err != nil {
			out = append(out, Result{Check: "relay/socket/" + s.Name, Evidence: HostFact, Verdict: Unavailable, Expected: "the init's network namespace", Found: err.Error()})
			continue
		}
		f, ferr := ReadSocketFacts(s.Fd)
		if ferr != nil {
			out = append(out, Result{Check: "relay/socket/" + s.Name, Evidence: HostFact, Verdict: Fail, Expected: "a socket the host can read", Found: ferr.Error()})
			continue
		}
		out = append(out, judgeRelaySocket(s, f, initNet))
	}
	return out
}

// ReadSocketFacts reads what the kernel says of socket fd.
func ReadSocketFacts(fd int) (SocketFacts, error) {
	var f SocketFacts
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return f, fmt.Errorf("getsockopt SO_TYPE: %w", err)
	}
	f.Stream = typ == unix.SOCK_STREAM
	if f.Stream {
		acc, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
		if err != nil {
			return f, fmt.Errorf("getsockopt SO_ACCEPTCONN: %w", err)
		}
		f.Listening = acc == 1
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return f, fmt.Errorf("getsockname: %w", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		f.Bound = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		f.Bound = netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	default:
		return f, fmt.Errorf("getsockname: not an IP socket (%T)", sa)
	}
	// SIOCGSKNS (Linux 4.9) opens the socket's network namespace.
	nsfd, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
	if err != nil {
		return f, fmt.Errorf("ioctl SIOCGSKNS: %w", err)
	}
	defer unix.Close(nsfd)
	var st unix.Stat_t
	if err := unix.Fstat(nsfd, &st); err != nil {
		return f, fmt.Errorf("fstat the socket's network namespace: %w", err)
	}
	f.Netns = NamespaceID{Dev: uint64(st.Dev), Ino: st.Ino} //nolint:unconvert // Dev is uint32 on some arches
	return f, nil
}

// CheckRelayProcess judges the running relay pid from the host: every
// thread's credentials, capability sets, no_new_privs and seccomp mode,
// from /proc/<pid>/task/*/status.
func CheckRelayProcess(pid int, uid uint32) Result {
	tasks, err := readTaskCreds(pid)
	return judgeRelayProcess(pid, uid, tasks, err)
}

func readTaskCreds(pid int) ([]TaskCreds, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []TaskCreds
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "status"))
		if err != nil {
			if os.IsNotExist(err) {
				continue // the thread exited
			}
			return nil, err
		}
		t, err := parseTaskCreds(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s/%d/status: %w", dir, tid, err)
		}
		t.Tid = tid
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tid < out[j].Tid })
	return out, nil
}
