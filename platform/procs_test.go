package platform

import "testing"

func TestRunnableTasks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0.52 0.58 0.59 3/250 12345\n", 3, true},
		{"12.00 9.10 4.00 34/901 777", 34, true},
		{"0.00 0.00 0.00 1/1 1", 1, true},
		{"", 0, false},
		{"0.52 0.58 0.59", 0, false},
		{"0.52 0.58 0.59 3 12345", 0, false},
		{"0.52 0.58 0.59 x/250 12345", 0, false},
		{"0.52 0.58 0.59 -1/250 12345", 0, false},
	} {
		got, ok := runnableTasks(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("runnableTasks(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestProcsForLoad(t *testing.T) {
	for _, tc := range []struct {
		procs, running, want int
	}{
		{2, 1, 2},   // idle host: this process alone
		{2, 2, 2},   // one CPU still idle for the second P
		{2, 3, 1},   // more runnable than CPUs: none idle
		{2, 40, 1},  // 32 lifecycles at once
		{8, 8, 8},   // busy, but not over
		{8, 9, 1},   // over
		{1, 40, 1},  // one CPU: nothing to take away
		{16, 3, 16}, // a big idle host
	} {
		if got := procsForLoad(tc.procs, tc.running); got != tc.want {
			t.Errorf("procsForLoad(%d, %d) = %d, want %d", tc.procs, tc.running, got, tc.want)
		}
	}
}
