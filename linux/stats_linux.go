package linux

import (
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/types"
)

// Stats reads the container's cgroup statistics and returns them in runc's
// `events` JSON shape (types.Stats), which containerd's runc shim parses.
func (c *container) Stats() (any, error) {
	ls, err := c.lc.Stats()
	if err != nil {
		return nil, mapErr(err)
	}
	cg := ls.CgroupStats
	if cg == nil {
		return &types.Stats{}, nil
	}
	var s types.Stats
	s.Pids.Current, s.Pids.Limit = cg.PidsStats.Current, cg.PidsStats.Limit
	u := cg.CpuStats.CpuUsage
	s.CPU.Usage = types.CpuUsage{
		Kernel: u.UsageInKernelmode, User: u.UsageInUsermode, Total: u.TotalUsage,
		Percpu: u.PercpuUsage, PercpuKernel: u.PercpuUsageInKernelmode, PercpuUser: u.PercpuUsageInUsermode,
	}
	t := cg.CpuStats.ThrottlingData
	s.CPU.Throttling = types.Throttling{Periods: t.Periods, ThrottledPeriods: t.ThrottledPeriods, ThrottledTime: t.ThrottledTime}
	s.CPU.PSI = cg.CpuStats.PSI
	s.CPUSet = types.CPUSet(cg.CPUSetStats)
	m := cg.MemoryStats
	s.Memory = types.Memory{
		Cache: m.Cache, Usage: memEntry(m.Usage), Swap: memEntry(m.SwapUsage),
		Kernel: memEntry(m.KernelUsage), KernelTCP: memEntry(m.KernelTCPUsage), Raw: m.Stats, PSI: m.PSI,
	}
	b := cg.BlkioStats
	s.Blkio = types.Blkio{
		IoServiceBytesRecursive: blkio(b.IoServiceBytesRecursive), IoServicedRecursive: blkio(b.IoServicedRecursive),
		IoQueuedRecursive: blkio(b.IoQueuedRecursive), IoServiceTimeRecursive: blkio(b.IoServiceTimeRecursive),
		IoWaitTimeRecursive: blkio(b.IoWaitTimeRecursive), IoMergedRecursive: blkio(b.IoMergedRecursive),
		IoTimeRecursive: blkio(b.IoTimeRecursive), SectorsRecursive: blkio(b.SectorsRecursive), PSI: b.PSI,
	}
	s.Hugetlb = make(map[string]types.Hugetlb, len(cg.HugetlbStats))
	for k, v := range cg.HugetlbStats {
		s.Hugetlb[k] = types.Hugetlb{Usage: v.Usage, Max: v.MaxUsage, Failcnt: v.Failcnt}
	}
	s.NetworkInterfaces = ls.Interfaces
	return &s, nil
}

func memEntry(d cgroups.MemoryData) types.MemoryEntry {
	return types.MemoryEntry{Limit: d.Limit, Usage: d.Usage, Max: d.MaxUsage, Failcnt: d.Failcnt}
}

func blkio(in []cgroups.BlkioStatEntry) []types.BlkioEntry {
	out := make([]types.BlkioEntry, 0, len(in))
	for _, e := range in {
		out = append(out, types.BlkioEntry{Major: e.Major, Minor: e.Minor, Op: e.Op, Value: e.Value})
	}
	return out
}
