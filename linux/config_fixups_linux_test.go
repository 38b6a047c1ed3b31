package linux

import (
	"testing"

	"github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/selinux/go-selinux"
	"golang.org/x/sys/unix"
)

func TestFixupConfig(t *testing.T) {
	fifo := &config.Device{Path: "/dev/f", Rule: config.Rule{Type: config.FifoDevice, Major: 8, Minor: 666}}
	char := &config.Device{Path: "/dev/c", Rule: config.Rule{Type: config.CharDevice, Major: 1, Minor: 3}}
	bind := &configs.Mount{Destination: "/b", Flags: unix.MS_BIND | unix.MS_REC, Data: "mode=755,size=1k"}
	tmpfs := &configs.Mount{Destination: "/t", Device: "tmpfs", Data: "size=1k"}
	c := &configs.Config{
		Devices:    []*config.Device{fifo, char},
		Mounts:     []*configs.Mount{bind, tmpfs},
		MountLabel: "system_u:object_r:container_file_t:s0",
	}
	fixupConfig(c)
	tests := []struct {
		name      string
		got, want any
	}{
		{"fifo numbers dropped", [2]int64{fifo.Major, fifo.Minor}, [2]int64{0, 0}},
		{"char device kept", [2]int64{char.Major, char.Minor}, [2]int64{1, 3}},
		{"bind data dropped", bind.Data, ""},
		{"tmpfs data kept", tmpfs.Data, "size=1k"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if want := map[bool]string{true: "system_u:object_r:container_file_t:s0", false: ""}[selinux.GetEnabled()]; c.MountLabel != want {
		t.Errorf("mount label %q, want %q (SELinux enabled: %v)", c.MountLabel, want, selinux.GetEnabled())
	}
}

func TestSameDeviceSet(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want bool
	}{
		{"same order", []string{"c 1:3 rwm", "b *:* m"}, []string{"c 1:3 rwm", "b *:* m"}, true},
		{"other order", []string{"c 1:3 rwm", "b *:* m"}, []string{"b *:* m", "c 1:3 rwm"}, true},
		{"narrower access", []string{"c 1:3 rwm"}, []string{"c 1:3 rw"}, false},
		{"missing entry", []string{"c 1:3 rwm", "b *:* m"}, []string{"c 1:3 rwm"}, false},
		{"duplicate is not a substitute", []string{"c 1:3 rwm", "b *:* m"}, []string{"c 1:3 rwm", "c 1:3 rwm"}, false},
	}
	for _, tt := range tests {
		if got := sameDeviceSet(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: sameDeviceSet(%q, %q) = %v", tt.name, tt.a, tt.b, got)
		}
	}
}
