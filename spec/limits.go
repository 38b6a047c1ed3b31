package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The cgroup v2 files through which linux.resources.unified can set the
// limits the levels require, besides the typed fields.
const (
	UnifiedMemoryMax = "memory.max"
	UnifiedPidsMax   = "pids.max"
)

// unifiedInterface are the files of a cgroup v2 directory that are the
// cgroup's own interface, not a resource: writing them through
// linux.resources.unified would move processes into the container's
// cgroup (any of the host's, by pid), kill or freeze it, or change its
// type or its children's controllers under the runtime.
var unifiedInterface = map[string]bool{
	"cgroup.procs": true, "cgroup.threads": true, "cgroup.kill": true,
	"cgroup.freeze": true, "cgroup.type": true, "cgroup.subtree_control": true,
}

// UnifiedInterfaceKeys lists, sorted, the keys of a unified map that name
// the cgroup's own interface files rather than resources.
func UnifiedInterfaceKeys(unified map[string]string) []string {
	var out []string
	for k := range unified {
		if unifiedInterface[strings.TrimSpace(k)] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// MemoryLimit is the memory limit res sets, in bytes, as the container
// gets it: libcontainer writes linux.resources.unified after the typed
// fields, so on cgroup v2 a "memory.max" there wins over memory.limit
// ("max" is -1, no limit). nil: res sets none. An error names a unified
// value that is not a limit.
func MemoryLimit(res *specs.LinuxResources) (*int64, error) {
	var typed *int64
	if res != nil && res.Memory != nil {
		typed = res.Memory.Limit
	}
	return limitOf(res, UnifiedMemoryMax, true, typed)
}

// PidsLimit is MemoryLimit for the pids limit ("pids.max"). A typed limit
// of 0 is 1: what libcontainer writes for it, with every cgroup driver
// (systemd's TasksMax cannot be 0), so what is checked and recorded is
// what the cgroup holds.
func PidsLimit(res *specs.LinuxResources) (*int64, error) {
	var typed *int64
	if res != nil && res.Pids != nil {
		typed = res.Pids.Limit
	}
	if typed != nil && *typed == 0 {
		one := int64(1)
		typed = &one
	}
	return limitOf(res, UnifiedPidsMax, false, typed)
}

// limitOf is the limit the unified file key sets, else the typed field's.
func limitOf(res *specs.LinuxResources, key string, size bool, typed *int64) (*int64, error) {
	if res != nil {
		if v, ok := res.Unified[key]; ok {
			n, err := parseUnifiedLimit(v, size)
			if err != nil {
				return nil, fmt.Errorf("linux.resources.unified[%q] = %q: %w", key, v, err)
			}
			return &n, nil
		}
	}
	if typed == nil {
		return nil, nil
	}
	n := *typed
	return &n, nil
}

// parseUnifiedLimit reads a limit the way the kernel does: "max" (-1), or
// a number of bytes or pids; a memory size may end in K, M, G, T, P or E
// (binary multiples, either case).
func parseUnifiedLimit(v string, size bool) (int64, error) {
	s := strings.TrimSpace(v)
	if s == "max" {
		return -1, nil
	}
	mult := int64(1)
	if size && s != "" {
		if i := strings.IndexByte("kmgtpe", lower(s[len(s)-1])); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf(`not "max" or a non-negative number`)
	}
	if n > (1<<63-1)/mult {
		return 1<<63 - 1, nil
	}
	return n * mult, nil
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// NoMemoryBound and NoPidsBound: a limit at or above them binds nothing,
// and is judged as a removal ("max", -1). The kernel stores a memory limit
// from 2^63 less a page up as "max" (PAGE_COUNTER_MAX); the line is drawn
// lower, at 4 EiB, far above any machine's memory and below that ceiling
// for every page size. No task count reaches PID_MAX_LIMIT, pids.max's
// largest value. Written as numbers, they passed for limits: strict took
// --memory 9223372036854775807 as a raise, not the removal it is.
const (
	NoMemoryBound int64 = 1 << 62
	NoPidsBound   int64 = 4194304
)

// MemoryBounded reports whether memory limit v binds: set, above 0, below
// NoMemoryBound.
func MemoryBounded(v *int64) bool { return v != nil && *v > 0 && *v < NoMemoryBound }

// PidsBounded is MemoryBounded for a pids limit.
func PidsBounded(v *int64) bool { return v != nil && *v > 0 && *v < NoPidsBound }

// MemoryUnbounded reports whether v is a memory limit that removes one:
// "max" (-1) or a value at or above NoMemoryBound.
func MemoryUnbounded(v int64) bool { return v < 0 || v >= NoMemoryBound }

// PidsUnbounded is MemoryUnbounded for a pids limit.
func PidsUnbounded(v int64) bool { return v < 0 || v >= NoPidsBound }
