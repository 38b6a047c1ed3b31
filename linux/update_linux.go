package linux

import (
	"github.com/opencontainers/cgroups"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Update applies the resource limits r sets (nil fields stay as they are)
// to the running container's cgroups.
func (c *container) Update(r *specs.LinuxResources) error {
	config := c.lc.Config()
	res := config.Cgroups.Resources
	if r.BlockIO != nil && r.BlockIO.Weight != nil {
		res.BlkioWeight = *r.BlockIO.Weight
	}
	if cpu := r.CPU; cpu != nil {
		if cpu.Shares != nil {
			res.CpuShares = *cpu.Shares
			res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(*cpu.Shares)
		}
		if cpu.Quota != nil {
			res.CpuQuota = *cpu.Quota
		}
		if cpu.Period != nil {
			res.CpuPeriod = *cpu.Period
		}
		if cpu.Burst != nil {
			res.CpuBurst = cpu.Burst
		}
		if cpu.RealtimeRuntime != nil {
			res.CpuRtRuntime = *cpu.RealtimeRuntime
		}
		if cpu.RealtimePeriod != nil {
			res.CpuRtPeriod = *cpu.RealtimePeriod
		}
		if cpu.Cpus != "" {
			res.CpusetCpus = cpu.Cpus
		}
		if cpu.Mems != "" {
			res.CpusetMems = cpu.Mems
		}
		if cpu.Idle != nil {
			res.CPUIdle = cpu.Idle
		}
	}
	if m := r.Memory; m != nil {
		if m.Limit != nil {
			res.Memory = *m.Limit
		}
		if m.Reservation != nil {
			res.MemoryReservation = *m.Reservation
		}
		if m.Swap != nil {
			res.MemorySwap = *m.Swap
		}
		if m.CheckBeforeUpdate != nil {
			res.MemoryCheckBeforeUpdate = *m.CheckBeforeUpdate
		}
	}
	if r.Pids != nil && r.Pids.Limit != nil {
		res.PidsLimit = r.Pids.Limit
	}
	if len(r.Unified) > 0 {
		if res.Unified == nil {
			res.Unified = map[string]string{}
		}
		for k, v := range r.Unified {
			res.Unified[k] = v
		}
	}
	// As runc: update does not change device rules, and must not reset
	// rules a device plugin added on top of the container's.
	config.Cgroups.SkipDevices = true
	return mapErr(c.lc.Set(config))
}
