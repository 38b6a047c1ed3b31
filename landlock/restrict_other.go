//go:build !linux

package landlock

import "errors"

// errNoLandlock: Landlock is a Linux LSM.
var errNoLandlock = errors.New("landlock: only Linux has Landlock")

// HostABI is 0: no other kernel has Landlock.
func HostABI() (int, error) { return 0, nil }

// RestrictThread always fails: there is nothing to restrict with.
func RestrictThread(string) error { return errNoLandlock }

// RestrictThread always fails: there is nothing to restrict with.
func (*Ruleset) RestrictThread() error { return errNoLandlock }
