package hooks

import (
	"regexp"
	"testing"
)

// The nonce names the canary files the workload must not guess: 128 bits,
// hex, a new one every time.
func TestNewNonce(t *testing.T) {
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 64 {
		n, err := newNonce()
		if err != nil {
			t.Fatal(err)
		}
		if !hex32.MatchString(n) {
			t.Fatalf("nonce %q: want 32 hex digits", n)
		}
		if seen[n] {
			t.Fatalf("nonce %q drawn twice", n)
		}
		seen[n] = true
	}
	// A draw fills the whole buffer, whatever its size.
	b := make([]byte, 4096)
	if err := fillRandom(b); err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, c := range b {
		if c == 0 {
			zeros++
		}
	}
	if zeros > 64 { // about 16 expected
		t.Errorf("%d zero bytes in 4096 random ones: the buffer was not filled", zeros)
	}
}
