//go:build !linux

package hooks

import "net"

// connectOnce makes one TCP connection to addr and closes it, within
// probeDialTimeout.
func connectOnce(addr string) error {
	conn, err := net.DialTimeout("tcp4", addr, probeDialTimeout)
	if err != nil {
		return err
	}
	return conn.Close()
}
