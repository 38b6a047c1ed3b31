//go:build !linux

package runtime

import "errors"

// watchRecord: only Linux runs a monitor (it needs host facts); elsewhere
// a monitor polls.
func (s Store) watchRecord(string) (Watcher, error) {
	return nil, errors.New("record watch: not on this platform")
}
