package hooks

import (
	"reflect"
	"testing"
)

func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	state, start, err := parseStat(line)
	if err != nil || state != 'S' || start != 987654 {
		t.Fatalf("parseStat = %c %d %v, want S 987654", state, start, err)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2"} {
		if _, _, err := parseStat(bad); err == nil {
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
	if !isMaskMount(got, "/proc/kcore") || !isMaskMount(got, "/sys/fire ware") || isMaskMount(got, "/") {
		t.Error("isMaskMount misjudges")
	}
	if _, err := parseMountinfo("1 2 3\n"); err == nil {
		t.Error("short line accepted")
	}
}
