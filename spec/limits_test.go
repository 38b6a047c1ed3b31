package spec

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestMemoryAndPidsLimit(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name      string
		res       *specs.LinuxResources
		mem, pids *int64
		memErr    bool
		pidsErr   bool
	}{
		{"none", nil, nil, nil, false, false},
		{"typed", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(1 << 30)}, Pids: &specs.LinuxPids{Limit: i64(64)}}, i64(1 << 30), i64(64), false, false},
		{"unified max wins over typed", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(1 << 30)}, Pids: &specs.LinuxPids{Limit: i64(64)},
			Unified: map[string]string{"memory.max": "max", "pids.max": "max"}}, i64(-1), i64(-1), false, false},
		{"typed pids 0 is pids.max 1", &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(0)}}, nil, i64(1), false, false},
		{"unified pids 0 is 0", &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(0)}, Unified: map[string]string{"pids.max": "0"}}, nil, i64(0), false, false},
		{"unified number", &specs.LinuxResources{Unified: map[string]string{"memory.max": "268435456\n", "pids.max": " 100 "}}, i64(256 << 20), i64(100), false, false},
		{"unified size suffixes", &specs.LinuxResources{Unified: map[string]string{"memory.max": "2G"}}, i64(2 << 30), nil, false, false},
		{"lower-case suffix", &specs.LinuxResources{Unified: map[string]string{"memory.max": "512m"}}, i64(512 << 20), nil, false, false},
		{"huge saturates", &specs.LinuxResources{Unified: map[string]string{"memory.max": "9999999999E"}}, i64(1<<63 - 1), nil, false, false},
		{"pids takes no suffix", &specs.LinuxResources{Unified: map[string]string{"pids.max": "1k"}}, nil, nil, false, true},
		{"not a number", &specs.LinuxResources{Unified: map[string]string{"memory.max": "lots"}}, nil, nil, true, false},
		{"negative", &specs.LinuxResources{Unified: map[string]string{"memory.max": "-1"}}, nil, nil, true, false},
		{"empty", &specs.LinuxResources{Unified: map[string]string{"pids.max": ""}}, nil, nil, false, true},
		{"other unified keys leave the typed ones", &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(5)}, Unified: map[string]string{"memory.high": "max"}}, nil, i64(5), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, err := MemoryLimit(tt.res)
			if (err != nil) != tt.memErr || !same(mem, tt.mem) {
				t.Errorf("MemoryLimit = %v, %v; want %v, error %v", show(mem), err, show(tt.mem), tt.memErr)
			}
			pids, err := PidsLimit(tt.res)
			if (err != nil) != tt.pidsErr || !same(pids, tt.pids) {
				t.Errorf("PidsLimit = %v, %v; want %v, error %v", show(pids), err, show(tt.pids), tt.pidsErr)
			}
		})
	}
}

func same(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(p *int64) any {
	if p == nil {
		return "nil"
	}
	return *p
}
