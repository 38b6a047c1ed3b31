//go:build !linux

package hooks

import "crypto/rand"

func fillRandom(b []byte) error {
	_, err := rand.Read(b)
	return err
}
