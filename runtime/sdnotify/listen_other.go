//go:build !linux

package sdnotify

import "net"

// listen binds a datagram socket at path.
func listen(path string) (*net.UnixConn, error) {
	return net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
}
