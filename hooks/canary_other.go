//go:build !linux

package hooks

import (
	"errors"
	"net"
)

// Canaries judge a container from procfs and its mount namespace; no other
// platform has them, so the checks that need these are UNAVAILABLE there.
var errNoProcfs = errors.New("canary host facts need Linux procfs")

func acceptedSince(net.Listener) (int, error) { return 0, errNoProcfs }

func removeInContainer(int, string) error { return errNoProcfs }

// holdRoots: no procfs to hold roots of; f reads as it does.
func holdRoots(f PostFacts, _ int, _ string) (PostFacts, func()) { return f, func() {} }
