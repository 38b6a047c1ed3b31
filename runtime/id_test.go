package runtime

import (
	"errors"
	"testing"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"c1", true},
		{"a.b_c+d-e", true},
		{"ABC123", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/b", false},
		{"/abs", false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			err := ValidateID(tt.id)
			if tt.ok && err != nil {
				t.Fatalf("ValidateID(%q) = %v, want nil", tt.id, err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidID) {
				t.Fatalf("ValidateID(%q) = %v, want ErrInvalidID", tt.id, err)
			}
		})
	}
}
