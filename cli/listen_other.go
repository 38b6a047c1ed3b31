//go:build !linux

package cli

// socketActivation: the macOS and Windows backends pass no socket
// activation on (systemd's LISTEN_FDS is Linux's).
func socketActivation() int { return 0 }
