package runtime

import (
	"errors"
	"maps"
	"testing"
)

func TestSubCgroups(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   map[string]string
		bad    bool
	}{
		{"none", nil, nil, false},
		{"every hierarchy", []string{"sub"}, map[string]string{"": "sub"}, false},
		{"nested, leading slash", []string{"/a/b"}, map[string]string{"": "a/b"}, false},
		{"by controller", []string{"cpu,cpuacct:a", "memory:b"}, map[string]string{"cpu": "a", "cpuacct": "a", "memory": "b"}, false},
		{"climbs out", []string{"../other"}, nil, true},
		{"climbs out deeper", []string{"memory:a/../../x"}, nil, true},
		{"empty path", []string{"memory:"}, nil, true},
		{"empty controller", []string{"cpu,:a"}, nil, true},
		{"controller twice", []string{"cpu:a", "cpu:b"}, nil, true},
		{"unnamed among several", []string{"a", "cpu:b"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SubCgroups(tc.values)
			if tc.bad {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("SubCgroups(%q) = %v, %v; want invalid input", tc.values, got, err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Fatalf("SubCgroups(%q) = %v, %v; want %v", tc.values, got, err, tc.want)
			}
		})
	}
}
