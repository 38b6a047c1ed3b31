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

// The bundle's own hooks are every hook but vetto-runtime's poststart and
// poststop entries — and only those two: an entry that looks like
// vetto's in another phase is the bundle's, it would run on the host.
func TestBundleHooks(t *testing.T) {
	own := func(phase string) specs.Hook { return RuntimeHook("/usr/bin/vetto-runtime", phase) }
	user := specs.Hook{Path: "/usr/local/bin/notify"}
	for _, tc := range []struct {
		name  string
		hooks *specs.Hooks
		want  []string
	}{
		{"none", nil, nil},
		{"only vetto's own", &specs.Hooks{Poststart: []specs.Hook{own(RuntimeHookPoststart)}, Poststop: []specs.Hook{own(RuntimeHookPoststop)}}, nil},
		{"the bundle's after vetto's", &specs.Hooks{Poststart: []specs.Hook{own(RuntimeHookPoststart), user}}, []string{"hooks.poststart[1]"}},
		{"vetto's poststart entry in createRuntime", &specs.Hooks{CreateRuntime: []specs.Hook{own(RuntimeHookPoststart)}}, []string{"hooks.createRuntime[0]"}},
		{"vetto's poststop entry in poststart", &specs.Hooks{Poststart: []specs.Hook{own(RuntimeHookPoststop)}}, []string{"hooks.poststart[0]"}},
		{"every phase, in order", &specs.Hooks{
			Prestart: []specs.Hook{user}, CreateRuntime: []specs.Hook{user}, CreateContainer: []specs.Hook{user},
			StartContainer: []specs.Hook{user}, Poststart: []specs.Hook{user}, Poststop: []specs.Hook{user},
		}, []string{"hooks.prestart[0]", "hooks.createRuntime[0]", "hooks.createContainer[0]", "hooks.startContainer[0]", "hooks.poststart[0]", "hooks.poststop[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, b := range BundleHooks(tc.hooks) {
				got = append(got, b.Field())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
