package hooks

import (
	"errors"
	"testing"
)

func TestInterpreter(t *testing.T) {
	cases := []struct {
		head string
		want string
		ok   bool
	}{
		{"#!/bin/sh\necho", "/bin/sh", true},
		{"#! \t/usr/bin/env python3\n", "/usr/bin/env", true},
		{"#!/bin/sh", "/bin/sh", true},
		{"#!\n", "", false},
		{"\x7fELF", "", false},
		{"", "", false},
		{" #!/bin/sh\n", "", false},
	}
	for _, c := range cases {
		got, ok := Interpreter([]byte(c.head))
		if got != c.want || ok != c.ok {
			t.Errorf("Interpreter(%q) = %q, %v; want %q, %v", c.head, got, ok, c.want, c.ok)
		}
	}
}

func exe(path string, ino uint64, sum string) *Executable {
	return &Executable{Path: path, Dev: 1, Ino: ino, Size: 10, Mtime: 5, Ctime: 5, SHA256: sum}
}

func TestExecutableDiffers(t *testing.T) {
	rec := exe("/bin/prog", 7, "aa")
	script := exe("/bin/s", 8, "bb")
	script.Interpreter = exe("/bin/sh", 9, "cc")
	cases := []struct {
		name     string
		rec, now *Executable
		differ   bool
	}{
		{"same", rec, exe("/bin/prog", 7, "aa"), false},
		{"same by stat, no digest", rec, exe("/bin/prog", 7, ""), false},
		{"other path", rec, exe("/usr/local/bin/prog", 7, "aa"), true},
		{"other inode", rec, exe("/bin/prog", 70, "aa"), true},
		{"other bytes", rec, exe("/bin/prog", 7, "ab"), true},
		{"written to", rec, func() *Executable { e := exe("/bin/prog", 7, "aa"); e.Ctime++; return e }(), true},
		{"other size, no digest", rec, func() *Executable { e := exe("/bin/prog", 7, ""); e.Size++; return e }(), true},
		{"interpreter replaced", script, func() *Executable { e := *script; e.Interpreter = exe("/bin/sh", 90, "cc"); return &e }(), true},
		{"no longer a script", script, exe("/bin/s", 8, "bb"), true},
		{"nothing to compare", rec, nil, true},
	}
	for _, c := range cases {
		if got := c.rec.Differs(c.now) != ""; got != c.differ {
			t.Errorf("%s: differs %v (%q), want %v", c.name, got, c.rec.Differs(c.now), c.differ)
		}
	}
}

func TestCheckExecuted(t *testing.T) {
	rec := exe("/bin/prog", 7, "aa")
	script := exe("/bin/s", 8, "bb")
	script.Interpreter = exe("/bin/sh", 9, "cc")
	gone := errors.New("no such file or directory")
	cases := []struct {
		name    string
		rec     *Executable
		exe     [2]uint64
		exeErr  error
		current *Executable
		want    Verdict
	}{
		{"runs the recorded file", rec, [2]uint64{1, 7}, nil, nil, Pass},
		{"a script runs its interpreter", script, [2]uint64{1, 9}, nil, nil, Pass},
		{"exec'd another file itself", rec, [2]uint64{1, 99}, nil, exe("/bin/prog", 7, ""), Partial},
		{"the path was swapped at the exec", rec, [2]uint64{1, 42}, nil, exe("/bin/prog", 42, ""), Fail},
		{"gone, path unchanged", rec, [2]uint64{}, gone, exe("/bin/prog", 7, ""), Unavailable},
		{"gone, path not looked at", rec, [2]uint64{}, gone, nil, Unavailable},
		{"gone, path now another file", rec, [2]uint64{}, gone, exe("/bin/prog", 42, ""), Fail},
	}
	for _, c := range cases {
		if got := CheckExecuted(c.rec, c.exe, c.exeErr, c.current); got.Verdict != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestCheckExecutable(t *testing.T) {
	rec := exe("/bin/prog", 7, "aa")
	if r := CheckExecutable(rec, exe("/bin/prog", 7, "aa"), nil); r.Verdict != Pass {
		t.Errorf("same file: %s", r)
	}
	if r := CheckExecutable(rec, exe("/bin/prog", 8, "aa"), nil); r.Verdict != Fail {
		t.Errorf("replaced: %s", r)
	}
	if r := CheckExecutable(rec, nil, errors.New("not found")); r.Verdict != Fail {
		t.Errorf("gone: %s", r)
	}
}

func TestExecutableSettled(t *testing.T) {
	const at = int64(100e9)
	file := func(ctime, mtime int64) *Executable {
		return &Executable{Path: "/bin/p", Ctime: ctime, Mtime: mtime, SHA256: "aa", HashedAt: at}
	}
	cases := []struct {
		name string
		e    *Executable
		want bool
	}{
		{"changed long before the digest", file(at-60e9, at-60e9), true},
		{"changed a second before", file(at-1e9, at-60e9), false},
		{"modified a second before", file(at-60e9, at-1e9), false},
		{"changed while it was read", file(at+1, at+1), false},
		{"no digest time (an older record)", &Executable{Ctime: 1, Mtime: 1, SHA256: "aa"}, false},
		{"a settled script, a fresh interpreter", func() *Executable {
			e := file(at-60e9, at-60e9)
			e.Interpreter = file(at, at)
			return e
		}(), false},
	}
	for _, c := range cases {
		if got := c.e.Settled(); got != c.want {
			t.Errorf("%s: settled %v, want %v", c.name, got, c.want)
		}
	}
}
