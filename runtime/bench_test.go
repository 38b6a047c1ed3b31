package runtime

// Benchmarks of the runtime's own per-launch work (issue 8): freezing and
// hashing the spec, the state records and the audit log, and what the
// pre-launch verification writes. They measure, never assert a time;
// `make bench` puts their numbers in docs/performance.md. The state root
// is b.TempDir(), on the same file system as $TMPDIR, where `make bench`
// keeps its --root too: fsync costs what it costs there.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// benchSpecJSON is the effective spec of the bundle `make bench` runs:
// runc's default (`vetto-runtime spec`) running /bin/true, with the root
// and cgroupsPath create fills in.
const benchSpecJSON = `{"ociVersion":"1.0.2-dev","process":{"terminal":false,"user":{"uid":0,"gid":0},"args":["/bin/true"],"env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","TERM=xterm"],"cwd":"/","capabilities":{"bounding":["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"],"effective":["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"],"permitted":["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]},"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}],"noNewPrivileges":true},"root":{"path":"/tmp/bench/bundle/rootfs","readonly":true},"hostname":"runc","mounts":[{"destination":"/proc","type":"proc","source":"proc"},{"destination":"/dev","type":"tmpfs","source":"tmpfs","options":["nosuid","strictatime","mode=755","size=65536k"]},{"destination":"/dev/pts","type":"devpts","source":"devpts","options":["nosuid","noexec","newinstance","ptmxmode=0666","mode=0620","gid=5"]},{"destination":"/dev/shm","type":"tmpfs","source":"shm","options":["nosuid","noexec","nodev","mode=1777","size=65536k"]},{"destination":"/dev/mqueue","type":"mqueue","source":"mqueue","options":["nosuid","noexec","nodev"]},{"destination":"/sys","type":"sysfs","source":"sysfs","options":["nosuid","noexec","nodev","ro"]},{"destination":"/sys/fs/cgroup","type":"cgroup","source":"cgroup","options":["nosuid","noexec","nodev","relatime","ro"]}],"linux":{"resources":{"devices":[{"allow":false,"access":"rwm"}]},"cgroupsPath":"/vetto-runtime/bench","namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}],"maskedPaths":["/proc/acpi","/proc/asound","/proc/kcore","/proc/keys","/proc/latency_stats","/proc/timer_list","/proc/timer_stats","/proc/sched_debug","/sys/firmware","/proc/scsi"],"readonlyPaths":["/proc/bus","/proc/fs","/proc/irq","/proc/sys","/proc/sysrq-trigger"]}}`

func benchSpec(b *testing.B) *specs.Spec {
	b.Helper()
	var s specs.Spec
	if err := json.Unmarshal([]byte(benchSpecJSON), &s); err != nil {
		b.Fatal(err)
	}
	return &s
}

// BenchmarkFreeze is create's freeze: marshal, RFC 8785 canonical form,
// sha256.
func BenchmarkFreeze(b *testing.B) {
	s := benchSpec(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := freeze(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpecHash is the canonical hash alone, as start recomputes it.
func BenchmarkSpecHash(b *testing.B) {
	f, err := freeze(benchSpec(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(f.data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := specHash(f.data); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore is a state root holding one container directory, with its
// record and frozen spec written as create leaves them.
func benchStore(b *testing.B) (Store, *Record, *frozenSpec) {
	b.Helper()
	s := Store{Root: filepath.Join(b.TempDir(), "root")}
	l, err := s.createDirLocked("bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.unlock)
	f, err := freeze(benchSpec(b))
	if err != nil {
		b.Fatal(err)
	}
	rec := &Record{
		ID: "bench", Bundle: "/tmp/bench/bundle", Rootfs: "/tmp/bench/bundle/rootfs",
		Created: time.Now().UTC(), Owner: "root", Backend: "linux", State: StateConstructed,
		Level: LevelStandard, SpecHash: f.hash,
	}
	if err := s.writeRecordLocked(rec); err != nil {
		b.Fatal(err)
	}
	if err := s.freezeSpecLocked(rec.ID, f); err != nil {
		b.Fatal(err)
	}
	return s, rec, f
}

// BenchmarkStore: a record written (temp file, fsync, rename) and read,
// a state transition (record + audit line), start's read of the frozen
// spec (read, re-hash, decode), and one fsync'd audit line.
func BenchmarkStore(b *testing.B) {
	b.Run("record-write", func(b *testing.B) {
		s, rec, _ := benchStore(b)
		b.ReportAllocs()
		for b.Loop() {
			if err := s.writeRecordLocked(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("record-read", func(b *testing.B) {
		s, rec, _ := benchStore(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.readRecord(rec.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transition", func(b *testing.B) {
		s, rec, _ := benchStore(b)
		b.ReportAllocs()
		for b.Loop() {
			rec.State = StateVerified
			if err := s.moveLocked(rec, StateLaunchable, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-spec", func(b *testing.B) {
		s, rec, _ := benchStore(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.readSpec(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("audit-sync", func(b *testing.B) {
		s, rec, _ := benchStore(b)
		ev := AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: "standard", Event: "launch", Reason: "sandbox: linux tier=partial net=none level=standard spec=0123456789ab"}
		b.ReportAllocs()
		for b.Loop() {
			if err := s.auditLocked(ev, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkVerifyPreLaunchBookkeeping is what verifyPreLaunchLocked
// writes around the judgement: the verdicts, fsync'd to the audit log,
// and the Verified and Launchable transitions. Facts here are fakes that
// all pass (hooks' BenchmarkPreLaunch times reading the real ones), so
// the sum of the two is the per-launch cost of pre-launch verification.
func BenchmarkVerifyPreLaunchBookkeeping(b *testing.B) {
	s, rec, f := benchStore(b)
	r := &Runtime{Store: s, Facts: fakeNamespaces{}, Warnf: b.Logf, Launchf: b.Logf}
	// The fake facts report no capabilities and no no_new_privs; ask for
	// none so that every check passes, as in a good launch.
	f.spec.Process.Capabilities = nil
	f.spec.Process.NoNewPrivileges = false
	cr := &created{rec: rec, c: benchContainer{}, plan: &Plan{Decision: &launch.Decision{Level: LevelStandard, Allow: map[launch.Feature]bool{}}, frozen: f}}
	b.ReportAllocs()
	for b.Loop() {
		rec.State = StateConstructed
		if err := r.verifyPreLaunchLocked(cr); err != nil {
			b.Fatal(err)
		}
		if rec.State != StateLaunchable {
			b.Fatalf("state %s, want %s", rec.State, StateLaunchable)
		}
	}
}

// benchContainer is a container whose init is this process, in the
// cgroup the fake facts accept. Only what verification asks is answered.
type benchContainer struct{ Container }

func (benchContainer) InitPid() int                   { return os.Getpid() }
func (benchContainer) CgroupPaths() map[string]string { return map[string]string{"": "/bench"} }
