//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The tests run at the host's Landlock ABI, whatever it is: Debian 12's
// kernel has ABI 2, Debian 13's ABI 6, the CI host's more (the VM tier,
// docs/testing.md, runs them on each).
//
//   - Hand-written rulesets (llAllFS, landlockIntent) handle the rights
//     the host enforces, up to ABI 5: a ruleset that handles more is
//     refused at standard on an older kernel, which TestLandlockHostABI
//     checks once, instead of every Landlock test failing for it.
//   - Compiled policies handle every right up to ABI 5 whatever the host
//     (the compiler is pure), so on an older kernel `run` gets
//     --allow-degraded=landlock (runFlags) and enforces the rights the host
//     has, recorded as a degradation.

// hostLandlockABI is the kernel's Landlock ABI version; 0 without Landlock.
var hostLandlockABI = func() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}()

// landlockFSRights are the filesystem rights ABI abi has, up to ABI 5 (the
// last ABI that added one): 13 in ABI 1, refer in 2, truncate in 3,
// ioctl_dev in 5. Without Landlock, all of them: the tests then fail with
// the runtime's refusal, as they should.
func landlockFSRights(abi int) uint64 {
	switch {
	case abi <= 0 || abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	default:
		return 1<<13 - 1
	}
}

// llAllFS is every filesystem right this host enforces.
var llAllFS = landlockFSRights(hostLandlockABI)

func init() {
	if hostLandlockABI < 5 {
		runFlags = []string{"--allow-degraded=landlock"}
	}
}

// The host's ABI as vetto-runtime sees it, and what it does with a ruleset
// that handles more than the host enforces: the strict profile is refused
// (125) naming each missing right; with --allow-degraded=landlock it runs,
// enforcing exactly the host's rights and recording the degradation; the
// default profile carries that opt-in itself (docs/policy.md) and runs,
// naming the missing rights on the launch line. On a host with ABI 5 or
// later both simply run at standard.
func TestLandlockHostABI(t *testing.T) {
	abi := hostLandlockABI
	if abi == 0 {
		t.Fatal("no Landlock on this host: the Landlock tests need it")
	}
	e := newEnv(t)
	r := e.mustVetto("doctor", "--format", "json")
	var doc struct {
		Probes []struct{ Name, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("doctor --format json: %v: %s", err, r.stdout)
	}
	got := ""
	for _, p := range doc.Probes {
		if p.Name == "landlock" {
			got = p.Status + " " + p.Detail
		}
	}
	if !strings.HasPrefix(got, fmt.Sprintf("supported ABI %d ", abi)) && got != fmt.Sprintf("supported ABI %d", abi) {
		t.Errorf("doctor says landlock %q, the kernel ABI %d", got, abi)
	}
	t.Logf("host Landlock ABI %d; doctor: %s", abi, got)

	p := policyProject(e)
	const script = "cat README; echo ok > written; cat written"

	// The default profile: it runs either way; on an older kernel it says
	// which rights it could not enforce.
	bundle, _ := e.compilePolicy(`extends = "default"`, p, script)
	id := e.id()
	r = e.vetto("run", "--bundle", bundle, id)
	if r.code != 0 || !strings.Contains(r.stdout, "ok") {
		t.Fatalf("default profile on ABI %d: %s; want it to run", abi, r)
	}
	degradedLine := regexp.MustCompile(fmt.Sprintf(`degraded: .*landlock: the host's Landlock ABI %d does not enforce`, abi))
	if abi < 5 && !degradedLine.MatchString(r.stderr) {
		t.Errorf("default profile on ABI %d: stderr %q does not name the degradation", abi, r.stderr)
	}
	if abi >= 5 && strings.Contains(r.stderr, "degraded") {
		t.Errorf("default profile on ABI %d: stderr %q names a degradation", abi, r.stderr)
	}
	e.assertNothingLeft(id)
	if err := os.Remove(filepath.Join(p, "written")); err != nil {
		t.Fatal(err)
	}

	// The strict profile: refused on an older kernel, unless asked.
	bundle, _ = e.compilePolicy(`extends = "strict"`, p, script)
	id = e.id()
	r = e.vetto("run", "--bundle", bundle, id)
	if abi >= 5 {
		if r.code != 0 || !strings.Contains(r.stdout, "ok") {
			t.Fatalf("strict policy run on ABI %d: %s", abi, r)
		}
		return
	}
	if r.code != 125 || !strings.Contains(r.stderr, fmt.Sprintf("the host's Landlock ABI %d does not enforce", abi)) {
		t.Fatalf("strict policy run on ABI %d: %s; want 125 naming the host's ABI", abi, r)
	}
	for _, right := range []struct {
		name string
		abi  int
	}{{"fs refer", 2}, {"fs truncate", 3}, {"fs ioctl_dev", 5}} {
		named := strings.Contains(r.stderr, fmt.Sprintf("%s (ABI %d)", right.name, right.abi))
		if named != (abi < right.abi) {
			t.Errorf("refusal on ABI %d names %s (ABI %d): %v; stderr %q", abi, right.name, right.abi, named, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "level strict allows no degradation") {
		t.Errorf("strict refusal %q does not say strict allows no degradation", r.stderr)
	}
	e.assertNothingLeft(id)

	// A standard bundle that does not accept the degradation itself (the
	// default profile's, its dev.vetto.allow-degraded taken out): refused,
	// unless the caller accepts it.
	bundle, _ = e.compilePolicy(`extends = "default"`, p, script)
	editBundleConfig(t, bundle, func(s *specs.Spec) { delete(s.Annotations, "dev.vetto.allow-degraded") })
	id = e.id()
	if r = e.vetto("run", "--bundle", bundle, id); r.code != 125 || !strings.Contains(r.stderr, fmt.Sprintf("the host's Landlock ABI %d does not enforce", abi)) ||
		!strings.Contains(r.stderr, "--allow-degraded=landlock") {
		t.Fatalf("standard policy run without the opt-in on ABI %d: %s; want 125 naming the ABI and --allow-degraded=landlock", abi, r)
	}
	e.assertNothingLeft(id)

	// The opt-in: it runs, enforcing what the host has, and says so.
	id = e.id()
	r = e.vetto("run", "-d", "--allow-degraded=landlock", "--bundle", bundle, id)
	if r.code != 0 || !regexp.MustCompile(`degraded: .*landlock`).MatchString(r.stderr) {
		t.Fatalf("policy run with --allow-degraded=landlock on ABI %d: %s; want it to run and say degraded: landlock", abi, r)
	}
	e.waitStatus(id, "stopped")
	v := e.vettoState(id)
	var ruleset struct {
		Ruleset struct {
			HandledAccessFS uint64 `json:"handledAccessFS"`
		} `json:"ruleset"`
	}
	s, _ := v["landlock"].(string)
	if err := json.Unmarshal([]byte(s), &ruleset); err != nil {
		t.Fatalf("state's vetto.landlock %q: %v", s, err)
	}
	if got, want := ruleset.Ruleset.HandledAccessFS, landlockFSRights(abi); got != want {
		t.Errorf("enforced ruleset handles %#x, want the host's rights %#x", got, want)
	}
	if d, _ := json.Marshal(v["degraded"]); !strings.Contains(string(d), "landlock") {
		t.Errorf("state's vetto.degraded %s does not name landlock", d)
	}
	if data, err := os.ReadFile(filepath.Join(p, "written")); err != nil || string(data) != "ok\n" {
		t.Errorf("the write inside the project: %q, %v", data, err)
	}
	e.mustVetto("delete", id)
}

// editBundleConfig rewrites bundle's config.json through edit.
func editBundleConfig(t *testing.T, bundle string, edit func(*specs.Spec)) {
	t.Helper()
	editSpecFile(t, filepath.Join(bundle, "config.json"), edit)
}

// editSpecFile rewrites the spec at path through edit, keeping its mode.
func editSpecFile(t *testing.T, path string, edit func(*specs.Spec)) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	edit(&s)
	if data, err = json.Marshal(&s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
