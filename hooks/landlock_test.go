package hooks

import (
	"errors"
	"strings"
	"testing"

	"github.com/vetto-dev/vetto-runtime/shim"
)

func TestCheckLandlock(t *testing.T) {
	const rs = `{"ruleset":{"handledAccessFS":65535},"rules":{"pathBeneath":[{"allowedAccess":13,"paths":["/"]}]}}`
	args := []string{"sh", "-c", "true"}
	tests := []struct {
		name       string
		in         LandlockLaunch
		shim, abi  Verdict
		wantInFind string
	}{
		{"step in place, ABI covers", LandlockLaunch{Ruleset: rs, ABI: 7, Known: true, PreExec: &shim.Config{Ruleset: rs}, Args: args}, Pass, Pass, ""},
		{"no pre-exec step", LandlockLaunch{Ruleset: rs, ABI: 7, Known: true, Args: args}, Fail, Pass, "without the Landlock restriction"},
		{"a step without the ruleset", LandlockLaunch{Ruleset: rs, ABI: 7, Known: true, PreExec: &shim.Config{CanaryFD: 4}, Args: args}, Fail, Pass, "without the Landlock restriction"},
		{"another ruleset", LandlockLaunch{Ruleset: rs, ABI: 7, Known: true, PreExec: &shim.Config{Ruleset: `{"ruleset":{"handledAccessFS":1}}`}, Args: args}, Fail, Pass, "another ruleset"},
		{"other args", LandlockLaunch{Ruleset: rs, ABI: 7, Known: true, PreExec: &shim.Config{Ruleset: rs}, Args: []string{"sh"}}, Fail, Pass, `the init execs ["sh"]`},
		{"backend cannot say", LandlockLaunch{Ruleset: rs, ABI: 7}, Unavailable, Pass, "does not report"},
		{"ABI shrank since the plan", LandlockLaunch{Ruleset: rs, ABI: 3, Known: true, PreExec: &shim.Config{Ruleset: rs}, Args: args}, Pass, Fail, "ABI 3 lacks fs ioctl_dev (ABI 5)"},
		{"ABI unreadable", LandlockLaunch{Ruleset: rs, ABIErr: errors.New("EIO"), Known: true, PreExec: &shim.Config{Ruleset: rs}, Args: args}, Pass, Unavailable, "EIO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := CheckLandlock(&tt.in, args)
			if len(res) != 2 || res[0].Verdict != tt.shim || res[1].Verdict != tt.abi {
				t.Fatalf("got %v; want shim %s, abi %s", res, tt.shim, tt.abi)
			}
			if tt.wantInFind != "" && !strings.Contains(res[0].Found+res[1].Found, tt.wantInFind) {
				t.Fatalf("found %q / %q; want %q", res[0].Found, res[1].Found, tt.wantInFind)
			}
		})
	}
}

func TestCheckPastShim(t *testing.T) {
	clone := [2]uint64{1, 100}
	tests := []struct {
		name string
		now  [2]uint64
		err  error
		want Verdict
	}{
		{"exec'd the process", [2]uint64{8, 7}, nil, Pass},
		{"still the init's sealed executable", clone, nil, Fail},
		{"exited already", [2]uint64{}, errors.New("no such process"), Unavailable},
	}
	for _, tt := range tests {
		if got := CheckPastShim(clone, tt.now, tt.err); got.Verdict != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, got, tt.want)
		}
	}
}
