package utils

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

var labelTest = []struct {
	labels []string
	query  string
	expVal string
	expOk  bool
}{
	{[]string{"bundle=/path/to/bundle"}, "bundle", "/path/to/bundle", true},
	{[]string{"test=a", "test=b"}, "bundle", "", false},
	{[]string{"bundle=a", "test=b", "bundle=c"}, "bundle", "a", true},
	{[]string{"", "test=a", "bundle=b"}, "bundle", "b", true},
	{[]string{"test", "bundle=a"}, "bundle", "a", true},
	{[]string{"test=a", "bundle="}, "bundle", "", true},
}

func TestSearchLabels(t *testing.T) {
	for _, tt := range labelTest {
		v, ok := SearchLabels(tt.labels, tt.query)
		if ok != tt.expOk {
			t.Errorf("expected ok: %v, got %v", tt.expOk, ok)
			continue
		}
		if v != tt.expVal {
			t.Errorf("expected value '%s' for query '%s'; got '%s'", tt.expVal, tt.query, v)
		}
	}
}

func TestExitStatus(t *testing.T) {
	status := unix.WaitStatus(0)
	ex := ExitStatus(status)
	if ex != 0 {
		t.Errorf("expected exit status to equal 0 and received %d", ex)
	}
}

func TestExitStatusSignaled(t *testing.T) {
	status := unix.WaitStatus(2)
	ex := ExitStatus(status)
	if ex != 130 {
		t.Errorf("expected exit status to equal 130 and received %d", ex)
	}
}

func TestWriteJSON(t *testing.T) {
	person := struct {
		Name string
		Age  int
	}{
		Name: "Alice",
		Age:  30,
	}

	var b bytes.Buffer
	err := WriteJSON(&b, person)
	if err != nil {
		t.Fatal(err)
	}

	expected := `{"Name":"Alice","Age":30}`
	if b.String() != expected {
		t.Errorf("expected to write %s but was %s", expected, b.String())
	}
}

// TestUnsafeCloseFromExcept (vetto) runs in a child of the test binary,
// since it closes the process's fds: of three pipes' read ends opened
// from minFd on, the kept one stays open and becomes close-on-exec, the
// others are closed.
func TestUnsafeCloseFromExcept(t *testing.T) {
	if os.Getenv("VETTO_CLOSE_FROM_CHILD") == "1" {
		closeFromChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUnsafeCloseFromExcept$")
	cmd.Env = append(os.Environ(), "VETTO_CLOSE_FROM_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kept cloexec; others closed") {
		t.Fatalf("child reported:\n%s", out)
	}
}

func closeFromChild() {
	var reads []int
	for range 3 {
		var p [2]int
		if err := unix.Pipe(p[:]); err != nil {
			panic(err)
		}
		unix.CloseOnExec(p[0])
		reads = append(reads, p[0])
	}
	minFd, keep := reads[0], reads[1]
	// Kept: a descriptor without close-on-exec must get it.
	if _, err := unix.FcntlInt(uintptr(keep), unix.F_SETFD, 0); err != nil {
		panic(err)
	}
	d, err := OpenFdDir()
	if err != nil {
		panic(err)
	}
	if err := d.UnsafeCloseFromExcept(minFd, keep); err != nil {
		panic(err)
	}
	flags, err := unix.FcntlInt(uintptr(keep), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		os.Stdout.WriteString("kept fd " + strconv.Itoa(keep) + ": flags " + strconv.Itoa(flags) + " " + errString(err) + "\n")
		os.Exit(1)
	}
	for _, fd := range []int{reads[0], reads[2]} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
			os.Stdout.WriteString("fd " + strconv.Itoa(fd) + " still open\n")
			os.Exit(1)
		}
	}
	os.Stdout.WriteString("kept cloexec; others closed\n")
	os.Exit(0)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
