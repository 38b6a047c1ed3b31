package linux

import (
	"syscall"
	"testing"
)

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want syscall.Signal
		ok   bool
	}{
		{"9", syscall.SIGKILL, true},
		{"KILL", syscall.SIGKILL, true},
		{"SIGKILL", syscall.SIGKILL, true},
		{"sigterm", syscall.SIGTERM, true},
		{"hup", syscall.SIGHUP, true},
		{"USR1", syscall.SIGUSR1, true},
		{"RTMIN", 34, true},
		{"SIGRTMIN+3", 37, true},
		{"RTMAX-1", 63, true},
		{"RTMAX+1", 0, false},
		{"0", 0, false},
		{"65", 0, false},
		{"-1", 0, false},
		{"NOPE", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSignal(tt.in)
			if tt.ok != (err == nil) || got != tt.want {
				t.Fatalf("ParseSignal(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}
