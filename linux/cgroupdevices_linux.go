package linux

import (
	// Registers the device-rules manager with the cgroup managers; without
	// it no container with device rules (i.e. any) can be created. The
	// container's init needs none of it: it is linux/containerinit, which
	// this package does not import (the init executable stays small).
	_ "github.com/opencontainers/cgroups/devices"
)
