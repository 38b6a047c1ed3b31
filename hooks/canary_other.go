//go:build !linux

package hooks

import (
	"errors"
	"net"
)

// Canaries judge a container from procfs and its mount namespace; no other
// platform has them, so the checks that need these are UNAVAILABLE there.
var errNoProcfs = errors.New("canary host facts need Linux procfs")

// loopbackListener: the listener, without the host facts to judge it by.
type loopbackListener struct{ l net.Listener }

func listenLoopback() (*loopbackListener, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &loopbackListener{l: l}, nil
}

func (l *loopbackListener) Addr() string           { return l.l.Addr().String() }
func (l *loopbackListener) Close()                 { l.l.Close() }
func (l *loopbackListener) accepted() (int, error) { return 0, errNoProcfs }

func removeInContainer(int, string) error { return errNoProcfs }

// holdRoots: no procfs to hold roots of; f reads as it does.
func holdRoots(f PostFacts, _ int, _ string) (PostFacts, func()) { return f, func() {} }
