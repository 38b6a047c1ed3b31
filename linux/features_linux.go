package linux

import (
	"fmt"

	"github.com/opencontainers/runc/libcontainer/apparmor"
	"github.com/opencontainers/runc/libcontainer/capabilities"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/seccomp"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	selinux "github.com/opencontainers/selinux/go-selinux"
)

// Annotation keys of the features document.
const (
	annotationVersion   = "dev.vetto.runtime.version"
	annotationCommit    = "dev.vetto.runtime.commit"
	annotationSeccomp   = "io.github.seccomp.libseccomp.version"
	annotationBackend   = "dev.vetto.runtime.backend"
	annotationCheckpont = "org.opencontainers.runc.checkpoint.enabled"
)

// Features reports what this build supports on this host: what
// libcontainer implements, narrowed by what the host has (seccomp compiled
// in, AppArmor, SELinux). Fields left nil are not claimed. Checkpoint and
// restore are not implemented, and say so.
func (b *Backend) Features() (*features.Features, error) {
	t, f := true, false
	apparmorOn := apparmor.IsEnabled()
	selinuxOn := selinux.GetEnabled()
	feat := &features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: specs.Version,
		Hooks:         configs.KnownHookNames(),
		MountOptions:  specconv.KnownMountOptions(),
		Annotations: map[string]string{
			annotationVersion:   b.Version,
			annotationBackend:   "libcontainer",
			annotationCheckpont: "false",
		},
		Linux: &features.Linux{
			Namespaces:   specconv.KnownNamespaces(),
			Capabilities: capabilities.KnownCapabilities(),
			Cgroup: &features.Cgroup{
				V1: &t, V2: &t, Systemd: &t, SystemdUser: &t, Rdma: &t,
			},
			Apparmor: &features.Apparmor{Enabled: &apparmorOn},
			Selinux:  &features.Selinux{Enabled: &selinuxOn},
			MemoryPolicy: &features.MemoryPolicy{
				Modes: specconv.KnownMemoryPolicyModes(),
				Flags: specconv.KnownMemoryPolicyFlags(),
			},
		},
		PotentiallyUnsafeConfigAnnotations: []string{"bundle", "org.systemd.property.", "org.criu.config"},
	}
	if b.Commit != "" {
		feat.Annotations[annotationCommit] = b.Commit
	}
	if seccomp.Enabled {
		feat.Linux.Seccomp = &features.Seccomp{
			Enabled:        &t,
			Actions:        seccomp.KnownActions(),
			Operators:      seccomp.KnownOperators(),
			Archs:          seccomp.KnownArchs(),
			KnownFlags:     seccomp.KnownFlags(),
			SupportedFlags: seccomp.SupportedFlags(),
		}
		major, minor, patch := seccomp.Version()
		feat.Annotations[annotationSeccomp] = fmt.Sprintf("%d.%d.%d", major, minor, patch)
	} else {
		feat.Linux.Seccomp = &features.Seccomp{Enabled: &f}
	}
	return feat, nil
}
