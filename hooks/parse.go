package hooks

import (
	"fmt"
	"strconv"
	"strings"
)

// parseStatus reads the security fields of /proc/<pid>/status.
func parseStatus(text string) (ProcStatus, error) {
	var st ProcStatus
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		var err error
		switch key {
		case "Seccomp":
			st.Seccomp, err = strconv.Atoi(val)
		case "NoNewPrivs":
			st.NoNewPrivs, err = strconv.Atoi(val)
		case "CapInh":
			st.CapInh, err = strconv.ParseUint(val, 16, 64)
		case "CapPrm":
			st.CapPrm, err = strconv.ParseUint(val, 16, 64)
		case "CapEff":
			st.CapEff, err = strconv.ParseUint(val, 16, 64)
		case "CapBnd":
			st.CapBnd, err = strconv.ParseUint(val, 16, 64)
		case "CapAmb":
			st.CapAmb, err = strconv.ParseUint(val, 16, 64)
		default:
			continue
		}
		if err != nil {
			return ProcStatus{}, fmt.Errorf("status field %s=%q: %w", key, val, err)
		}
		seen[key] = true
	}
	for _, k := range []string{"Seccomp", "NoNewPrivs", "CapInh", "CapPrm", "CapEff", "CapBnd"} {
		if !seen[k] {
			return ProcStatus{}, fmt.Errorf("status has no %s field", k)
		}
	}
	return st, nil
}

// parseIDMap reads uid_map/gid_map lines: "container host size".
func parseIDMap(text string) ([]IDMapping, error) {
	var out []IDMapping
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("id map line %q", line)
		}
		var nums [3]uint32
		for i, s := range f {
			n, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("id map line %q: %w", line, err)
			}
			nums[i] = uint32(n)
		}
		out = append(out, IDMapping{ContainerID: nums[0], HostID: nums[1], Size: nums[2]})
	}
	return out, nil
}
