package hooks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// capBits maps capability names to their bit in /proc/<pid>/status masks
// (spec.CapabilityBits).
var capBits = spec.CapabilityBits

// CapMask turns capability names into a mask. Names the kernel does not
// know are an error: a spec that names one asks for something unknowable.
func CapMask(names []string) (uint64, error) {
	var m uint64
	for _, n := range names {
		b, ok := capBits[strings.ToUpper(n)]
		if !ok {
			return 0, fmt.Errorf("unknown capability %q", n)
		}
		m |= 1 << b
	}
	return m, nil
}

// CapNames lists the names of the bits set in m, for messages.
func CapNames(m uint64) []string {
	var out []string
	for n, b := range capBits {
		if m&(1<<b) != 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	if extra := m &^ allCaps(); extra != 0 {
		out = append(out, fmt.Sprintf("unknown bits %#x", extra))
	}
	return out
}

func allCaps() uint64 {
	var m uint64
	for _, b := range capBits {
		m |= 1 << b
	}
	return m
}

// capDiff says what differs between two masks, by name.
func capDiff(want, got uint64) string {
	var parts []string
	if missing := want &^ got; missing != 0 {
		parts = append(parts, "missing "+strings.Join(CapNames(missing), ","))
	}
	if extra := got &^ want; extra != 0 {
		parts = append(parts, "extra "+strings.Join(CapNames(extra), ","))
	}
	return strings.Join(parts, "; ")
}
