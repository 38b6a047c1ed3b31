package linux

import (
	"github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/selinux/go-selinux"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// fixupConfig adjusts what specconv made of a valid spec where libcontainer
// would refuse it, or apply it wrongly, although the spec allows it and
// the kernel can do it (docs/conformance.md, V3–V5). None of these changes
// what the container may do.
func fixupConfig(c *configs.Config) {
	// A FIFO has no device number: config-linux.md makes major and minor
	// optional for type "p", mknod(2) ignores them, and libcontainer then
	// refuses the node it made because its 0:0 differs from the spec's.
	for _, d := range c.Devices {
		if d.Type == config.FifoDevice && (d.Major != 0 || d.Minor != 0) {
			logrus.Debugf("device %s: a FIFO has no major:minor; ignoring %d:%d", d.Path, d.Major, d.Minor)
			d.Major, d.Minor = 0, 0
		}
	}
	// The kernel ignores the data argument of a bind mount (it is
	// filesystem options, and a bind creates no filesystem); libcontainer
	// refuses a bind mount that has any.
	for _, m := range c.Mounts {
		if m.Flags&unix.MS_BIND != 0 && m.Data != "" {
			logrus.Debugf("mount %s: a bind mount takes no filesystem options; ignoring %q", m.Destination, m.Data)
			m.Data = ""
		}
	}
	// An SELinux mount label means nothing when SELinux is disabled, and
	// go-selinux would still add context="…" to the container's tmpfs
	// mounts, which the kernel then refuses. The process label is not
	// dropped: that one is a boundary, and setting it fails closed.
	if c.MountLabel != "" && !selinux.GetEnabled() {
		logrus.Debugf("SELinux is disabled; ignoring mountLabel %q", c.MountLabel)
		c.MountLabel = ""
	}
}
