package spec

import (
	"reflect"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestWithRuntimeHooks(t *testing.T) {
	user := specs.Hook{Path: "/bin/true"}
	own := RuntimeHook("/usr/bin/vetto-runtime", RuntimeHookPoststart)
	elsewhere := RuntimeHook("/opt/vetto/vetto-runtime", RuntimeHookPoststop)
	for _, tc := range []struct {
		name                string
		in                  *specs.Hooks
		wantStart, wantStop []specs.Hook
	}{
		{"none", nil,
			[]specs.Hook{own}, []specs.Hook{RuntimeHook("/usr/bin/vetto-runtime", RuntimeHookPoststop)}},
		{"ours go first", &specs.Hooks{Poststart: []specs.Hook{user}},
			[]specs.Hook{own, user}, []specs.Hook{RuntimeHook("/usr/bin/vetto-runtime", RuntimeHookPoststop)}},
		{"present anywhere, at any path: not added again", &specs.Hooks{Poststart: []specs.Hook{user, own}, Poststop: []specs.Hook{elsewhere}},
			[]specs.Hook{user, own}, []specs.Hook{elsewhere}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WithRuntimeHooks(tc.in, "/usr/bin/vetto-runtime")
			if !reflect.DeepEqual(got.Poststart, tc.wantStart) || !reflect.DeepEqual(got.Poststop, tc.wantStop) {
				t.Fatalf("got %+v / %+v", got.Poststart, got.Poststop)
			}
			if again := WithRuntimeHooks(got, "/usr/bin/vetto-runtime"); !reflect.DeepEqual(again, got) {
				t.Fatal("not idempotent")
			}
			if left := WithoutRuntimeHooks(got.Poststart, RuntimeHookPoststart); len(left) != len(got.Poststart)-1 {
				t.Fatalf("WithoutRuntimeHooks left %+v", left)
			}
		})
	}
	for _, h := range []specs.Hook{
		{Path: "/x", Args: []string{"vetto-runtime", "hook", "poststop"}},
		{Path: "/x", Args: []string{"other", "hook", "poststart"}},
		{Path: "/x", Args: []string{"vetto-runtime", "hook", "poststart", "extra"}},
	} {
		if IsRuntimeHook(h, RuntimeHookPoststart) {
			t.Errorf("%+v taken for vetto's poststart hook", h)
		}
	}
}
