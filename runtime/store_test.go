package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCreateDirLockedIsExclusive(t *testing.T) {
	s := Store{Root: filepath.Join(t.TempDir(), "root")}
	var wins, exists atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.createDirLocked("c1")
			switch {
			case err == nil:
				wins.Add(1)
				l.unlock()
			case errors.Is(err, ErrExist):
				exists.Add(1)
			default:
				t.Errorf("createDirLocked: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || exists.Load() != 15 {
		t.Fatalf("got %d creates and %d ErrExist, want 1 and 15", wins.Load(), exists.Load())
	}
	if fi, err := os.Stat(s.Root); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("root %v %v, want a 0700 directory", fi, err)
	}
}

// A command waiting for a container's lock while the holder deletes it must
// see "does not exist", not operate on a ghost.
func TestLockSeesDeletion(t *testing.T) {
	s := Store{Root: t.TempDir()}
	l, err := s.createDirLocked("c1")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l2, err := s.lockContainer("c1")
		if err == nil {
			l2.unlock()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("second locker did not wait: %v", err)
	default:
	}
	if err := s.removeLocked("c1"); err != nil {
		t.Fatal(err)
	}
	l.unlock()
	if err := <-got; !errors.Is(err, ErrNotExist) {
		t.Fatalf("waiting locker got %v, want ErrNotExist", err)
	}
}

func TestLockUnknownAndInvalid(t *testing.T) {
	s := Store{Root: t.TempDir()}
	if _, err := s.lockContainer("nope"); !errors.Is(err, ErrNotExist) {
		t.Errorf("lock of unknown id: %v, want ErrNotExist", err)
	}
	if _, err := s.lockContainer("../x"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("lock of ../x: %v, want ErrInvalidID", err)
	}
}

func TestRecordRoundTripAndMoves(t *testing.T) {
	s := Store{Root: t.TempDir()}
	l, err := s.createDirLocked("c1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.unlock()
	if _, err := s.readRecord("c1"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("record before write: %v, want ErrNotExist", err)
	}
	r := &Record{ID: "c1", Bundle: "/b", State: StateRequested}
	if err := s.writeRecordLocked(r); err != nil {
		t.Fatal(err)
	}
	if err := s.moveLocked(r, StateValidated, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.moveLocked(r, StateRunning, ""); !errors.Is(err, ErrWrongState) {
		t.Fatalf("illegal move: %v, want ErrWrongState", err)
	}
	got, err := s.readRecord("c1")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != StateValidated || got.Bundle != "/b" {
		t.Fatalf("read back %+v, want Validated with bundle /b", got)
	}
	// No temporary files are left beside the record and its audit log,
	// which has the one transition.
	entries, _ := os.ReadDir(s.dir("c1"))
	if len(entries) != 2 {
		t.Fatalf("state dir holds %d entries, want %s and %s", len(entries), recordFile, auditFile)
	}
	audit, _ := os.ReadFile(filepath.Join(s.dir("c1"), auditFile))
	if !strings.Contains(string(audit), `"from":"Requested","to":"Validated"`) || strings.Count(string(audit), "\n") != 1 {
		t.Fatalf("audit log %q, want one Requested->Validated line", audit)
	}
}

func TestRecordNamingAnotherIDIsRejected(t *testing.T) {
	s := Store{Root: t.TempDir()}
	if err := os.MkdirAll(s.dir("c1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir("c1"), recordFile), []byte(`{"id":"c2"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.readRecord("c1"); err == nil {
		t.Fatal("record of c2 accepted as c1")
	}
}

func TestPidFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pid")
	if err := writePidFile(p, 1234); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != "1234" {
		t.Fatalf("pid file %q, want 1234 with no newline", data)
	}
	if err := writePidFile(p, 0); err == nil {
		t.Fatal("pid 0 written")
	}
	if err := checkPidFileDir(filepath.Join(dir, "missing", "pid")); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("pid file in a missing dir: %v, want ErrInvalidInput", err)
	}
}
