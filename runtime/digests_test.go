package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// fileExe answers Executable with a file's identity as set by the test,
// and counts how often it was asked to read the whole file.
type fileExe struct {
	stat  hooks.Executable
	sum   string
	reads int
}

func (f *fileExe) Executable(_ *specs.Process, digest bool) (*hooks.Executable, error) {
	e := f.stat
	if digest {
		f.reads++
		e.SHA256, e.HashedAt = f.sum, f.stat.Ctime+10e9
	}
	return &e, nil
}

func (f *fileExe) HoldRoot() (func(), error) { return func() {}, nil }

const (
	ext4Magic = 0xEF53
	fuseMagic = 0x65735546
)

var (
	sumA = strings.Repeat("a", 64)
	sumB = strings.Repeat("b", 64)
)

// The second create of a settled file on a local filesystem takes its
// digest from the cache; any change of its stat, a filesystem whose stat
// a server makes up, a file read too soon after a write, or a cache
// directory others could write to, reads the file again.
func TestDigestCache(t *testing.T) {
	settled := hooks.Executable{Path: "/bin/prog", Dev: 1, Ino: 2, Size: 3, Mtime: 1e18, Ctime: 1e18, FSType: ext4Magic}
	for _, tc := range []struct {
		name string
		// change is applied to the file between the two creates.
		change    func(f *fileExe)
		fsType    uint64
		racy      bool
		openDir   bool
		wantReads int
		wantSum   string
	}{
		{name: "unchanged: from the cache", wantReads: 1, wantSum: sumA},
		{name: "rewritten: ctime moved", change: func(f *fileExe) { f.stat.Ctime += 1e6; f.sum = sumB }, wantReads: 2, wantSum: sumB},
		{name: "rewritten with mtime set back", change: func(f *fileExe) { f.stat.Ctime += 5e9; f.sum = sumB }, wantReads: 2, wantSum: sumB},
		{name: "replaced: another inode", change: func(f *fileExe) { f.stat.Ino++; f.sum = sumB }, wantReads: 2, wantSum: sumB},
		{name: "FUSE: never cached", fsType: fuseMagic, change: func(f *fileExe) { f.sum = sumB }, wantReads: 2, wantSum: sumB},
		{name: "read within the racy window: not cached", racy: true, change: func(f *fileExe) { f.sum = sumB }, wantReads: 2, wantSum: sumB},
		{name: "cache directory writable by others", openDir: true, change: func(f *fileExe) { f.sum = sumB }, wantReads: 2, wantSum: sumB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Evidence{Dir: filepath.Join(t.TempDir(), "evidence")}
			cache := Store{Evidence: ev}.digests()
			f := &fileExe{stat: settled, sum: sumA}
			if tc.fsType != 0 {
				f.stat.FSType = tc.fsType
			}
			if tc.racy {
				f.stat.Ctime = 0 // HashedAt is Ctime+10 s: racy is Ctime close to it
				f.stat.Mtime = 9e9
			}
			first, err := identifyExecutable(f, &specs.Process{}, cache)
			if err != nil || first.SHA256 != sumA {
				t.Fatalf("first create: %+v %v", first, err)
			}
			if tc.openDir {
				if err := os.Chmod(filepath.Join(ev.Dir, digestCacheDir), 0o777); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			if tc.change != nil {
				tc.change(f)
			}
			second, err := identifyExecutable(f, &specs.Process{}, cache)
			if err != nil {
				t.Fatal(err)
			}
			if f.reads != tc.wantReads || second.SHA256 != tc.wantSum {
				t.Fatalf("got %d reads and sha256 %.8s, want %d and %.8s", f.reads, second.SHA256, tc.wantReads, tc.wantSum)
			}
			if second.HashedAt == 0 {
				t.Error("a digest without the time it was taken: start could not tell it settled")
			}
		})
	}
}

// A script is vouched for only if its interpreter is too.
func TestDigestCacheInterpreter(t *testing.T) {
	ev := Evidence{Dir: filepath.Join(t.TempDir(), "evidence")}
	cache := Store{Evidence: ev}.digests()
	script := &hooks.Executable{Path: "/bin/s", Dev: 1, Ino: 5, Size: 9, Mtime: 1e18, Ctime: 1e18, FSType: ext4Magic, SHA256: sumA, HashedAt: 1e18 + 10e9,
		Interpreter: &hooks.Executable{Path: "/bin/sh", Dev: 1, Ino: 6, Size: 99, Mtime: 1e18, Ctime: 1e18, FSType: ext4Magic, SHA256: sumB, HashedAt: 1e18 + 10e9}}
	cache.remember(script)
	probe := func(interpCtime int64) bool {
		e := &hooks.Executable{Path: "/bin/s", Dev: 1, Ino: 5, Size: 9, Mtime: 1e18, Ctime: 1e18, FSType: ext4Magic,
			Interpreter: &hooks.Executable{Path: "/bin/sh", Dev: 1, Ino: 6, Size: 99, Mtime: 1e18, Ctime: interpCtime, FSType: ext4Magic}}
		ok := cache.fill(e)
		if ok && (e.SHA256 != sumA || e.Interpreter.SHA256 != sumB) {
			t.Fatalf("filled with the wrong digests: %+v", e)
		}
		if !ok && (e.SHA256 != "" || e.Interpreter.SHA256 != "") {
			t.Fatalf("a miss left digests behind: %+v", e)
		}
		return ok
	}
	if !probe(1e18) {
		t.Fatal("an unchanged script and interpreter missed the cache")
	}
	if probe(1e18 + 1) {
		t.Fatal("a rewritten interpreter was vouched for from the cache")
	}
}
