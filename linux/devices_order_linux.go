package linux

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	devices "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// orderDevices puts the container's device rules in order where
// libcontainer manages a cgroup v1 devices controller for it.
func orderDevices(c *container, config *configs.Config) error {
	if config.Cgroups == nil || config.Cgroups.Resources == nil ||
		config.Cgroups.Resources.SkipDevices || config.RootlessCgroups {
		return nil
	}
	return orderDeviceRules(c.CgroupPaths()["devices"], config.Cgroups.Resources.Devices)
}

// orderDeviceRules rewrites a cgroup v1 devices controller so that its
// rules stand in the order the container's config lists them: the spec's
// linux.resources.devices first, then the defaults libcontainer appends.
//
// config-linux.md: "The runtime MUST apply entries in the listed order."
// libcontainer computes the end state right (it emulates the kernel's
// whitelist from a deny-all start, applying the rules in order) but writes
// only the difference from the cgroup's current state, in its emulator's
// sorted order, so devices.list does not show the spec's order. Here the
// same sequence is written to the kernel itself — deny everything, then
// each rule in order — and the resulting whitelist must be the one
// libcontainer had set; if it is not, the container is not started.
//
// cgroup v2 has no rule list (an eBPF program holds the rules, built in
// order), so there is nothing to do there: dir is "" then.
func orderDeviceRules(dir string, rules []*devices.Rule) error {
	if dir == "" {
		return nil
	}
	list := filepath.Join(dir, "devices.list")
	before, err := readDeviceList(list)
	if err != nil {
		return err
	}
	// Each write(2) to devices.allow or devices.deny is one rule: both
	// are opened once for the whole sequence.
	w := deviceRuleWriter{dir: dir, fds: map[string]int{}}
	defer w.close()
	if err := w.write("devices.deny", "a"); err != nil {
		return err
	}
	for _, r := range rules {
		file := "devices.deny"
		if r.Allow {
			file = "devices.allow"
		}
		if err := w.write(file, r.CgroupString()); err != nil {
			return err
		}
	}
	after, err := readDeviceList(list)
	if err != nil {
		return err
	}
	if !sameDeviceSet(before, after) {
		return fmt.Errorf("devices cgroup %s: rules written in order give %q, libcontainer set %q", dir, after, before)
	}
	return nil
}

// deviceRuleWriter writes rules to a devices controller's devices.allow
// and devices.deny, each file opened at its first rule.
type deviceRuleWriter struct {
	dir string
	fds map[string]int
}

func (w *deviceRuleWriter) write(file, rule string) error {
	path := filepath.Join(w.dir, file)
	fd, ok := w.fds[file]
	if !ok {
		var err error
		if fd, err = unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("write %q to %s: %w", rule, path, err)
		}
		w.fds[file] = fd
	}
	for {
		n, err := unix.Write(fd, []byte(rule))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write %q to %s: %w", rule, path, err)
		}
		if n != len(rule) {
			return fmt.Errorf("write %q to %s: %d of %d bytes written", rule, path, n, len(rule))
		}
		return nil
	}
}

func (w *deviceRuleWriter) close() {
	for _, fd := range w.fds {
		unix.Close(fd)
	}
}

// readDeviceList reads devices.list: one "type major:minor access" entry
// a line, in the order the kernel keeps them.
func readDeviceList(path string) ([]string, error) {
	data, err := hooks.ReadKernelFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

// sameDeviceSet says whether two devices.list contents describe the same
// whitelist. The kernel keeps one entry per type and device number (adding
// access to an existing entry widens it), so the entries, in any order,
// are the whole state.
func sameDeviceSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := make(map[string]int, len(a))
	for _, e := range a {
		seen[e]++
	}
	for _, e := range b {
		if seen[e] == 0 {
			return false
		}
		seen[e]--
	}
	return true
}
