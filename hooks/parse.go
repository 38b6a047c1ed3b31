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

// parseStat reads the state letter and start time (field 22) of
// /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from the last ')'.
// pfExiting is PF_EXITING in a task's flags (field 9 of stat): the task
// is in do_exit, which may already have taken it out of its cgroups and
// namespaces before it reads as a zombie.
const pfExiting = 0x4

func parseStat(text string) (ProcState, error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return ProcState{}, fmt.Errorf("no command name in %q", text)
	}
	fields := strings.Fields(text[i+1:])
	// fields[0] is field 3 (state); flags is field 9, start time 22.
	if len(fields) < 20 || len(fields[0]) != 1 {
		return ProcState{}, fmt.Errorf("short stat line %q", text)
	}
	flags, err := strconv.ParseUint(fields[6], 10, 64)
	if err != nil {
		return ProcState{}, fmt.Errorf("flags %q: %w", fields[6], err)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return ProcState{}, fmt.Errorf("start time %q: %w", fields[19], err)
	}
	return ProcState{State: fields[0][0], Start: start, Exiting: flags&pfExiting != 0}, nil
}

// parseMountinfo reads /proc/<pid>/mountinfo (proc(5)): root (field 4),
// mount point (5), per-mount options (6), and after the "-" separator the
// filesystem type.
func parseMountinfo(text string) ([]Mount, error) {
	var out []Mount
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 7 || sep < 0 || sep+1 >= len(fields) {
			return nil, fmt.Errorf("malformed mountinfo line %q", line)
		}
		m := Mount{Root: unescapeOctal(fields[3]), Point: unescapeOctal(fields[4]), FSType: fields[sep+1]}
		for _, o := range strings.Split(fields[5], ",") {
			if o == "ro" {
				m.ReadOnly = true
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// unescapeOctal undoes the kernel's \NNN escapes of space, tab, newline
// and backslash in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
