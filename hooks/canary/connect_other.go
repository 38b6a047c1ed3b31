//go:build !linux

package canary

import "net"

// connectOnce makes one TCP connection to addr and closes it, within
// dialTimeout.
func connectOnce(addr string) error {
	conn, err := net.DialTimeout("tcp4", addr, dialTimeout)
	if err != nil {
		return err
	}
	return conn.Close()
}
