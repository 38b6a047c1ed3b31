package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "unlimited", 512: "512B", 4 << 30: "4GiB", 1536 << 20: "1.5GiB", 2e9: "1.86GiB", 1 << 40: "1TiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// noteUnseen is how `policy explain` grouped denied paths before PathRule
// had Unseen: by the words of the note. It stays here as the oracle that
// the compiler's Unseen says the same of every golden policy.
func noteUnseen(r PathRule) Unseen {
	switch {
	case r.Note == "not visible in the sandbox":
		return UnseenHidden
	case strings.Contains(r.Note, "could create it"):
		return UnseenCreatable
	case strings.HasPrefix(r.Note, "does not exist"):
		return UnseenAbsent
	}
	return Seen
}

func TestUnseenAgreesWithNote(t *testing.T) {
	files, err := filepath.Glob("testdata/compile/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden policies: %v", err)
	}
	in := testInputs()
	seen := map[Unseen]int{}
	// A denied path absent inside the writable project, and one absent
	// outside it, besides the goldens.
	policies := []string{"[filesystem]\ndeny = [\"$PROJECT/.env-nowhere\", \"/opt/nowhere\"]\n"}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		policies = append(policies, string(data))
	}
	for i, src := range policies {
		p, err := ParsePolicy([]byte(src), fmt.Sprintf("policy%d.toml", i))
		if err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		pl, err := Explain(p, in)
		if err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		for _, r := range pl.Paths {
			if r.Access != AccessMasked {
				continue
			}
			seen[r.Unseen]++
			if want := noteUnseen(r); r.Unseen != want {
				t.Errorf("policy %d: %s (note %q): Unseen %d, the note says %d", i, r.Path, r.Note, r.Unseen, want)
			}
		}
	}
	for _, u := range []Unseen{Seen, UnseenAbsent, UnseenCreatable} {
		if seen[u] == 0 {
			t.Errorf("no masked path of kind %d in the policies: the test no longer covers it", u)
		}
	}
}

// The explanation groups denied paths by Unseen, whatever the note says.
func TestWriteExplanationGroupsByUnseen(t *testing.T) {
	pl := &Plan{Profile: "default", Level: "standard", Network: "off", Spec: &specs.Spec{Linux: &specs.Linux{}}, Paths: []PathRule{
		{Path: "/a", Access: AccessMasked, Origin: "o", Note: "does not exist", Unseen: UnseenHidden},
		{Path: "/b", Access: AccessMasked, Origin: "o", Note: "x", Unseen: UnseenCreatable},
		{Path: "/c", Access: AccessMasked, Origin: "o", Note: "not visible in the sandbox", Unseen: UnseenAbsent},
		{Path: "/d", Access: AccessMasked, Origin: "o", Note: "does not exist", Unseen: Seen},
	}}
	var b strings.Builder
	if err := WriteExplanation(&b, "p", pl); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Masked (unreadable, even by root in the sandbox):\n  /d  o  (does not exist)\n",
		"(the sandbox could create it):\n  /b\n",
		"not visible in the sandbox at all:\n  /a\n",
		"absent on this host:\n  /c\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explanation lacks %q:\n%s", want, out)
		}
	}
}
