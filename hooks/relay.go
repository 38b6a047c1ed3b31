package hooks

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The egress relay's pre-launch checks (docs/network.md): the listening
// sockets the runtime made inside the container's network namespace, and
// the hardened relay process serving them, each judged from the host.
// The readers are in relay_linux.go; the judging here is pure.

// RelayStats are the relay's counters over a container's life, as its
// stats file last said (relay.Stats; hooks does not import the relay).
type RelayStats struct {
	Allowed     uint64 `json:"allowed"`
	Denied      uint64 `json:"denied"`
	BytesUp     uint64 `json:"bytes_up"`
	BytesDown   uint64 `json:"bytes_down"`
	DNSAnswered uint64 `json:"dns_answered"`
	DNSRefused  uint64 `json:"dns_refused"`
	// Credentialed: HTTP requests the relay forwarded with a credential.
	Credentialed uint64 `json:"credentialed,omitempty"`
}

// RelaySocket is one listening socket made for the relay.
type RelaySocket struct {
	// Name says what it serves: "proxy", "dns-udp", "dns-tcp",
	// "transparent-80", … (with "6" appended for the ::1 twins).
	Name string
	// Fd is the socket in the runtime's process.
	Fd int
	// Stream: SOCK_STREAM (TCP, listening), else SOCK_DGRAM.
	Stream bool
	// Addr is where it must be bound.
	Addr netip.AddrPort
}

// SocketFacts are what the host reads of a socket fd.
type SocketFacts struct {
	Stream, Listening bool
	Bound             netip.AddrPort
	// Netns is the network namespace the socket belongs to
	// (ioctl SIOCGSKNS).
	Netns NamespaceID
}

// judgeRelaySocket: bound where it must be, listening if a stream socket,
// and in the init's network namespace (never the host's).
func judgeRelaySocket(s RelaySocket, f SocketFacts, initNet NamespaceID) Result {
	kind := "UDP"
	if s.Stream {
		kind = "TCP, listening"
	}
	r := Result{
		Check:    "relay/socket/" + s.Name,
		Evidence: HostFact,
		Expected: fmt.Sprintf("%s on %s in the init's network namespace (%s)", kind, s.Addr, initNet),
	}
	var bad []string
	if f.Stream != s.Stream {
		bad = append(bad, fmt.Sprintf("stream=%v", f.Stream))
	}
	if s.Stream && !f.Listening {
		bad = append(bad, "not listening")
	}
	if got := netip.AddrPortFrom(f.Bound.Addr().Unmap(), f.Bound.Port()); got != s.Addr {
		bad = append(bad, "bound to "+f.Bound.String())
	}
	if f.Netns != initNet {
		bad = append(bad, "in network namespace "+f.Netns.String())
	}
	if len(bad) > 0 {
		r.Verdict, r.Found = Fail, strings.Join(bad, ", ")
		return r
	}
	r.Verdict, r.Found = Pass, fmt.Sprintf("%s on %s in %s", kind, f.Bound, f.Netns)
	return r
}

// TaskCreds are what /proc/<pid>/task/<tid>/status says of one thread's
// credentials.
type TaskCreds struct {
	Tid    int
	UIDs   [4]uint32 // real, effective, saved, filesystem
	GIDs   [4]uint32
	Groups []uint32
	ProcStatus
}

// judgeRelayProcess: every thread of the relay runs as uid and gid,
// without supplementary groups, with no capability in any set, with
// no_new_privs and a seccomp filter. Landlock has no /proc field; the
// relay refuses to report ready without it.
func judgeRelayProcess(pid int, uid uint32, tasks []TaskCreds, err error) Result {
	r := Result{
		Check:    "relay/process",
		Evidence: HostFact,
		Expected: fmt.Sprintf("pid %d, every thread uid and gid %d, no groups, no capabilities, no_new_privs, seccomp filter", pid, uid),
	}
	if err != nil {
		r.Verdict, r.Found = Unavailable, err.Error()
		return r
	}
	if len(tasks) == 0 {
		r.Verdict, r.Found = Unavailable, "no threads found"
		return r
	}
	var bad []string
	for _, t := range tasks {
		var why []string
		for i := range t.UIDs {
			if t.UIDs[i] != uid || t.GIDs[i] != uid {
				why = append(why, fmt.Sprintf("uids %v gids %v", t.UIDs, t.GIDs))
				break
			}
		}
		if len(t.Groups) > 0 {
			why = append(why, fmt.Sprintf("groups %v", t.Groups))
		}
		if c := t.CapInh | t.CapPrm | t.CapEff | t.CapBnd | t.CapAmb; c != 0 {
			why = append(why, fmt.Sprintf("capabilities inh %x prm %x eff %x bnd %x amb %x", t.CapInh, t.CapPrm, t.CapEff, t.CapBnd, t.CapAmb))
		}
		if t.NoNewPrivs != 1 {
			why = append(why, "no_new_privs off")
		}
		if t.Seccomp != 2 {
			why = append(why, fmt.Sprintf("seccomp mode %d", t.Seccomp))
		}
		if len(why) > 0 {
			bad = append(bad, fmt.Sprintf("thread %d: %s", t.Tid, strings.Join(why, ", ")))
		}
	}
	if len(bad) > 0 {
		r.Verdict, r.Found = Fail, strings.Join(bad, "; ")
		return r
	}
	r.Verdict, r.Found = Pass, fmt.Sprintf("%d threads as %d, no capabilities, no_new_privs, seccomp filter", len(tasks), uid)
	return r
}

// parseTaskCreds reads the Uid, Gid and Groups lines with the fields
// parseStatus reads.
func parseTaskCreds(text string) (TaskCreds, error) {
	st, err := parseStatus(text)
	if err != nil {
		return TaskCreds{}, err
	}
	t := TaskCreds{ProcStatus: st}
	seen := 0
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || key != "Uid" && key != "Gid" && key != "Groups" {
			continue
		}
		fields := strings.Fields(val)
		var ids []uint32
		for _, f := range fields {
			n, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return TaskCreds{}, fmt.Errorf("%s: %q: %w", key, val, err)
			}
			ids = append(ids, uint32(n))
		}
		switch key {
		case "Uid", "Gid":
			if len(ids) != 4 {
				return TaskCreds{}, fmt.Errorf("%s: %q: want 4 ids", key, val)
			}
			if key == "Uid" {
				copy(t.UIDs[:], ids)
			} else {
				copy(t.GIDs[:], ids)
			}
			seen++
		case "Groups":
			t.Groups = ids
		}
	}
	if seen != 2 {
		return TaskCreds{}, fmt.Errorf("no Uid or Gid line")
	}
	return t, nil
}
