package hooks

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// fillRandom fills b from the kernel's CSPRNG with getrandom(2), what
// crypto/rand reads too; called directly because crypto/rand's first call
// in a process sets up the vDSO's per-thread state first (0.2 ms here),
// for the one 16-byte nonce a command draws. Blocks only before the
// kernel's pool is initialised, as crypto/rand does.
func fillRandom(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("getrandom: %w", err)
		}
		b = b[n:]
	}
	return nil
}
