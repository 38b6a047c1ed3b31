package runtime

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// More fds than any process can have is refused by the count that asked
// for them, before one is looked at.
func TestExaminePassedBounds(t *testing.T) {
	tests := []struct {
		listen, preserve int
		want             string
	}{
		{99999999999, 0, "LISTEN_FDS=99999999999: more fds"},
		{math.MaxInt, 0, "LISTEN_FDS="},
		{0, 99999999999, "--preserve-fds=99999999999: more fds"},
		{0, math.MaxInt, "--preserve-fds="},
		{1 << 19, 1 << 19, "--preserve-fds=524288: more fds"},
	}
	for _, tt := range tests {
		_, err := examinePassed(tt.listen, tt.preserve)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("examinePassed(%d, %d) = %v, want invalid input saying %q", tt.listen, tt.preserve, err, tt.want)
		}
	}
}
