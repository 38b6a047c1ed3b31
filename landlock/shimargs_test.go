package landlock

import (
	"slices"
	"testing"
)

func TestShimArgs(t *testing.T) {
	const rs = `{"ruleset":{"handledAccessFS":1}}`
	args := []string{"sh", "-c", "echo -- --ruleset x"}
	gotRS, gotArgs, err := ParseShimArgs(ShimArgs(rs, args))
	if err != nil || gotRS != rs || !slices.Equal(gotArgs, args) {
		t.Fatalf("round trip: %q %q %v", gotRS, gotArgs, err)
	}
	bad := [][]string{
		nil,
		args,
		{ShimExe, ShimCommand, shimFlag, rs, shimEnd},                        // no process args
		{"/usr/bin/vetto-runtime", ShimCommand, shimFlag, rs, shimEnd, "sh"}, // not the sealed clone
		{ShimExe, "init", shimFlag, rs, shimEnd, "sh"},
		{ShimExe, ShimCommand, "--landlock", rs, shimEnd, "sh"},
		{ShimExe, ShimCommand, shimFlag, rs, "sh", "x"},
	}
	for _, argv := range bad {
		if _, _, err := ParseShimArgs(argv); err == nil {
			t.Errorf("ParseShimArgs(%q) accepted", argv)
		}
	}
}
