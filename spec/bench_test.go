package spec

// Benchmarks of the pure, per-launch parts of spec (issue 8): a policy
// parsed and compiled into a bundle (`spec --policy`), and a bundle's
// config.json parsed and validated (every create). They measure, never
// assert a time; `make bench` puts their numbers in docs/performance.md.
// Inputs are the golden policies under testdata/compile and the fake host
// of compile_test.go, so no file system is touched inside the loop.

import (
	"os"
	"path/filepath"
	"testing"
)

// benchPolicies: the built-in default profile as is, and the policy that
// exercises the most filesystem rules.
var benchPolicies = []string{"default", "filesystem"}

func readGolden(b *testing.B, name string) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "compile", name))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParsePolicy(b *testing.B) {
	for _, name := range benchPolicies {
		b.Run(name, func(b *testing.B) {
			data := readGolden(b, name+".toml")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParsePolicy(data, name+".toml"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, name := range benchPolicies {
		b.Run(name, func(b *testing.B) {
			p, err := ParsePolicy(readGolden(b, name+".toml"), name+".toml")
			if err != nil {
				b.Fatal(err)
			}
			in := testInputs()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(p, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseValidate is what create does with config.json before
// anything else: decode it and collect every violation. The input is the
// spec the default policy compiles to (mounts, masks, seccomp profile).
func BenchmarkParseValidate(b *testing.B) {
	data := readGolden(b, "default.json")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := Validate(s); err != nil {
			b.Fatal(err)
		}
	}
}
