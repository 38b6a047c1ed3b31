package hooks

import (
	"reflect"
	"testing"
)

func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	st, err := parseStat(line)
	if err != nil || st.State != 'S' || st.Start != 987654 || st.Exiting || st.Gone() {
		t.Fatalf("parseStat = %+v %v, want S 987654, not exiting", st, err)
	}
	// PF_EXITING (0x4) in the flags: a process on its way out, whose
	// status no longer says what it ran under.
	exiting := "7 (sh) R 1 7 7 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0 0\n"
	if st, err := parseStat(exiting); err != nil || !st.Exiting || !st.Gone() {
		t.Fatalf("parseStat(exiting) = %+v %v, want Exiting", st, err)
	}
	if st, err := parseStat("7 (sh) Z 1 7 7 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0 0\n"); err != nil || !st.Gone() {
		t.Fatalf("parseStat(zombie) = %+v %v, want Gone", st, err)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestParseMountinfo(t *testing.T) {
	text := `22 1 0:21 / / rw,relatime - overlay overlay rw
30 22 0:5 /null /proc/kcore rw,nosuid - devtmpfs udev rw
31 22 0:40 / /sys/fire\040ware ro,relatime - tmpfs tmpfs ro
`
	got, err := parseMountinfo(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Root: "/", Point: "/", FSType: "overlay"},
		{Root: "/null", Point: "/proc/kcore", FSType: "devtmpfs"},
		{Root: "/", Point: "/sys/fire ware", FSType: "tmpfs", ReadOnly: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if !isMaskMount(got, "/proc/kcore", true) || !isMaskMount(got, "/sys/fire ware", false) || isMaskMount(got, "/", false) {
		t.Error("isMaskMount misjudges")
	}
	if _, err := parseMountinfo("1 2 3\n"); err == nil {
		t.Error("short line accepted")
	}
}
