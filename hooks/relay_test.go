package hooks

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestJudgeRelaySocket(t *testing.T) {
	initNet, hostNet := NamespaceID{Dev: 4, Ino: 4026532000}, NamespaceID{Dev: 4, Ino: 4026531840}
	proxy := RelaySocket{Name: "proxy", Stream: true, Addr: netip.MustParseAddrPort("127.0.0.1:3128")}
	dns := RelaySocket{Name: "dns-udp", Addr: netip.MustParseAddrPort("127.0.0.1:53")}
	good := SocketFacts{Stream: true, Listening: true, Bound: proxy.Addr, Netns: initNet}
	tests := []struct {
		name string
		s    RelaySocket
		f    SocketFacts
		want Verdict
		why  string
	}{
		{"listening in the init's namespace", proxy, good, Pass, ""},
		{"a mapped address is the address", proxy, SocketFacts{Stream: true, Listening: true, Bound: netip.MustParseAddrPort("[::ffff:127.0.0.1]:3128"), Netns: initNet}, Pass, ""},
		{"udp", dns, SocketFacts{Bound: dns.Addr, Netns: initNet}, Pass, ""},
		{"in the host's namespace", proxy, SocketFacts{Stream: true, Listening: true, Bound: proxy.Addr, Netns: hostNet}, Fail, "in network namespace 4:4026531840"},
		{"not listening", proxy, SocketFacts{Stream: true, Bound: proxy.Addr, Netns: initNet}, Fail, "not listening"},
		{"wrong port", proxy, SocketFacts{Stream: true, Listening: true, Bound: netip.MustParseAddrPort("127.0.0.1:3129"), Netns: initNet}, Fail, "bound to 127.0.0.1:3129"},
		{"wildcard instead of loopback", proxy, SocketFacts{Stream: true, Listening: true, Bound: netip.MustParseAddrPort("0.0.0.0:3128"), Netns: initNet}, Fail, "bound to 0.0.0.0:3128"},
		{"a datagram socket for a stream", proxy, SocketFacts{Bound: proxy.Addr, Netns: initNet}, Fail, "stream=false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judgeRelaySocket(tt.s, tt.f, initNet)
			if r.Verdict != tt.want || !strings.Contains(r.Found, tt.why) || r.Evidence != HostFact {
				t.Fatalf("got %+v, want %s with %q", r, tt.want, tt.why)
			}
		})
	}
}

func TestJudgeRelayProcess(t *testing.T) {
	ok := TaskCreds{Tid: 10, UIDs: [4]uint32{65534, 65534, 65534, 65534}, GIDs: [4]uint32{65534, 65534, 65534, 65534}, ProcStatus: ProcStatus{Seccomp: 2, NoNewPrivs: 1}}
	with := func(edit func(*TaskCreds)) TaskCreds { t := ok; t.Tid = 11; edit(&t); return t }
	tests := []struct {
		name  string
		tasks []TaskCreds
		err   error
		want  Verdict
		why   string
	}{
		{"hardened", []TaskCreds{ok, with(func(*TaskCreds) {})}, nil, Pass, ""},
		{"a thread still root", []TaskCreds{ok, with(func(t *TaskCreds) { t.UIDs[2] = 0 })}, nil, Fail, "thread 11: uids"},
		{"a group kept", []TaskCreds{with(func(t *TaskCreds) { t.Groups = []uint32{0} })}, nil, Fail, "groups [0]"},
		{"a bounding capability", []TaskCreds{with(func(t *TaskCreds) { t.CapBnd = 1 << 21 })}, nil, Fail, "bnd 200000"},
		{"an ambient capability", []TaskCreds{with(func(t *TaskCreds) { t.CapAmb = 1 })}, nil, Fail, "amb 1"},
		{"no no_new_privs", []TaskCreds{with(func(t *TaskCreds) { t.NoNewPrivs = 0 })}, nil, Fail, "no_new_privs off"},
		{"no seccomp", []TaskCreds{with(func(t *TaskCreds) { t.Seccomp = 0 })}, nil, Fail, "seccomp mode 0"},
		{"unreadable", nil, errors.New("no such process"), Unavailable, "no such process"},
		{"no threads", nil, nil, Unavailable, "no threads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judgeRelayProcess(42, 65534, tt.tasks, tt.err)
			if r.Verdict != tt.want || !strings.Contains(r.Found, tt.why) {
				t.Fatalf("got %+v, want %s with %q", r, tt.want, tt.why)
			}
		})
	}
}

func TestParseTaskCreds(t *testing.T) {
	status := "Name:\tvetto-runtime\nUid:\t65534\t65534\t65534\t65534\nGid:\t65534\t65534\t65534\t65534\nGroups:\t\nNoNewPrivs:\t1\nSeccomp:\t2\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n"
	c, err := parseTaskCreds(status)
	if err != nil || c.UIDs[3] != 65534 || c.GIDs[0] != 65534 || len(c.Groups) != 0 || c.Seccomp != 2 || c.NoNewPrivs != 1 {
		t.Fatalf("parseTaskCreds = %+v, %v", c, err)
	}
	if _, err := parseTaskCreds(strings.Replace(status, "Uid:\t65534\t65534\t65534\t65534\n", "", 1)); err == nil {
		t.Fatal("no Uid line parsed")
	}
}
