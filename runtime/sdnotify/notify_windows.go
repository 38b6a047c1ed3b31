package sdnotify

import "errors"

// Notify is unsupported on Windows, which has no datagram unix sockets
// and no systemd.
func Notify(addr string, pid int) error {
	return errors.New(Env + " is not supported on Windows")
}
