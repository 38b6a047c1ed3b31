package cli

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// update's sizes read as runc reads them (go-units' RAMInBytes), and a
// size beyond int64 is an error, not a wrapped value.
func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"512", 512, false},
		{"-1", -1, false},
		{"256k", 256 << 10, false},
		{"64M", 64 << 20, false},
		{"2g", 2 << 30, false},
		{"2GiB", 2 << 30, false},
		{"1.5g", 3 << 29, false},
		{"2t", 2 << 40, false},
		{"4096p", 1 << 62, false},
		{"4096PB", 1 << 62, false},
		{"9223372036854775807", 9223372036854775807, false},
		{"8192p", 0, true},
		{"99999999999t", 0, true},
		{"1e9", 0, true},
		{"-5", 0, true},
		{"12x", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := parseBytes(tt.in)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("parseBytes(%q) = %d, %v; want %d (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// ps's own complaint about its arguments is the error, as bad input.
func TestPsTableSaysWhatPsSaid(t *testing.T) {
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("no ps on this host")
	}
	var out bytes.Buffer
	err := psTable(&out, []int{1}, []string{"--no-such-ps-option"})
	if !errors.Is(err, runtime.ErrInvalidInput) || !strings.Contains(err.Error(), "ps --no-such-ps-option: ") || strings.Contains(err.Error(), "exit status") {
		t.Fatalf("psTable with a bad option: %v; want bad input with ps's own message", err)
	}
}
