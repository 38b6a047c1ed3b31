package hooks

import (
	"errors"
	"math"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestCheckRlimits(t *testing.T) {
	spec := func(hard uint64, caps ...string) *specs.Spec {
		return &specs.Spec{Process: &specs.Process{
			Rlimits:      []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 1024, Hard: hard}},
			Capabilities: &specs.LinuxCapabilities{Bounding: caps, Permitted: caps},
		}}
	}
	lim := func(soft, hard uint64) map[string][2]uint64 {
		return map[string][2]uint64{"Max open files": {soft, hard}}
	}
	cases := []struct {
		name   string
		sp     *specs.Spec
		limits map[string][2]uint64
		err    error
		want   Verdict
	}{
		{"as the spec", spec(1024), lim(1024, 1024), nil, Pass},
		{"soft raised to hard", spec(4096), lim(4096, 4096), nil, Pass},
		{"hard lowered by the program", spec(4096), lim(512, 512), nil, Pass},
		{"hard above the spec", spec(1024), lim(1024, 1048576), nil, Fail},
		{"not set at all", spec(1024), lim(1024, math.MaxUint64), nil, Fail},
		{"above, but CAP_SYS_RESOURCE granted", spec(1024, "CAP_SYS_RESOURCE"), lim(1024, 1048576), nil, Partial},
		{"unreadable", spec(1024), nil, errors.New("gone"), Unavailable},
		{"the kernel has no such line", spec(1024), map[string][2]uint64{}, nil, Unavailable},
	}
	for _, c := range cases {
		got := CheckRlimits(1, c.sp, c.limits, c.err)
		if len(got) != 1 || got[0].Verdict != c.want || got[0].Check != "P7/rlimit/nofile" {
			t.Errorf("%s: %v, want one P7/rlimit/nofile %s", c.name, got, c.want)
		}
	}
	if got := CheckRlimits(1, &specs.Spec{Process: &specs.Process{}}, nil, nil); got != nil {
		t.Errorf("no rlimits in the spec: %v, want no check", got)
	}
}

func TestParseLimits(t *testing.T) {
	text := `Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max open files            1024                 524288               files     
Max nice priority         0                    0                    
`
	l, err := ParseLimits(text)
	if err != nil {
		t.Fatal(err)
	}
	if l["Max open files"] != [2]uint64{1024, 524288} || l["Max cpu time"] != [2]uint64{math.MaxUint64, math.MaxUint64} || l["Max nice priority"] != [2]uint64{0, 0} {
		t.Errorf("parsed %v", l)
	}
	if _, err := ParseLimits("Limit\nMax open files            lots                 524288               files\n"); err == nil {
		t.Error("a line with no number parsed")
	}
	if _, err := ParseLimits("Limit\nshort\n"); err == nil {
		t.Error("a short line parsed")
	}
}
