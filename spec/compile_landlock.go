package spec

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Landlock filesystem access rights, as numbered in the kernel's uapi
// header linux/landlock.h (LANDLOCK_ACCESS_FS_*). The annotation carries
// numbers, not names, as the review of runtime-spec PR #1241 asks: a new
// kernel right then needs no new spec or runtime release to be expressed.
const (
	llExecute    uint64 = 1 << 0
	llWriteFile  uint64 = 1 << 1
	llReadFile   uint64 = 1 << 2
	llReadDir    uint64 = 1 << 3
	llRemoveDir  uint64 = 1 << 4
	llRemoveFile uint64 = 1 << 5
	llMakeChar   uint64 = 1 << 6
	llMakeDir    uint64 = 1 << 7
	llMakeReg    uint64 = 1 << 8
	llMakeSock   uint64 = 1 << 9
	llMakeFifo   uint64 = 1 << 10
	llMakeBlock  uint64 = 1 << 11
	llMakeSym    uint64 = 1 << 12
	llRefer      uint64 = 1 << 13 // ABI 2
	llTruncate   uint64 = 1 << 14 // ABI 3
	llIoctlDev   uint64 = 1 << 15 // ABI 5
)

// Access sets the rules grant.
const (
	// llHandled is every right up to ABI 5: all of them are denied
	// except where a rule grants them.
	llHandled = llIoctlDev<<1 - 1
	llRead    = llExecute | llReadFile | llReadDir
	// llWrite is everything on a writable root except creating device
	// nodes (CAP_MKNOD is never granted either).
	llWrite = llHandled &^ (llMakeChar | llMakeBlock)
	// Device files: read, write and ioctl (terminals), no exec, no
	// creation. /proc: read, and write its files (/proc/self/…).
	llDev     = llReadFile | llWriteFile | llReadDir | llIoctlDev
	llProc    = llReadFile | llWriteFile | llReadDir
	llSysRead = llReadFile | llReadDir
)

// landlockSpec is the dev.vetto.landlock annotation. Its shape follows the
// process.landlock object proposed in runtime-spec PRs #1111/#1241
// (ruleset.handledAccessFS, rules.pathBeneath[].allowedAccess and .paths)
// with numeric access rights, so it can move into that field unchanged
// once one is merged. Paths are container paths (after pivot_root).
type landlockSpec struct {
	Ruleset struct {
		HandledAccessFS uint64 `json:"handledAccessFS"`
	} `json:"ruleset"`
	Rules struct {
		PathBeneath []landlockPathBeneath `json:"pathBeneath"`
	} `json:"rules"`
}

type landlockPathBeneath struct {
	AllowedAccess uint64   `json:"allowedAccess"`
	Paths         []string `json:"paths"`
}

// landlock derives the rules from the mounts: Landlock only allows, so
// read-only binds get llRead and writable ones llWrite; the masks need no
// rule (a masked path shows nothing to allow). It is what the mount
// namespace already enforces, again, from inside the process: a second
// wall for when the first one is misconfigured or bypassed.
func (c *compiler) landlock() (string, error) {
	byAccess := map[uint64][]string{}
	add := func(access uint64, path string) {
		if !contains(byAccess[access], path) {
			byAccess[access] = append(byAccess[access], path)
		}
	}
	if c.in.Rootfs != "" {
		add(llRead, "/")
	}
	for _, m := range c.mounts {
		if m.write {
			add(llWrite, m.dest)
		} else {
			add(llRead, m.dest)
		}
	}
	add(llDev, "/dev")
	add(llWrite&^llExecute, "/dev/shm")
	add(llProc, "/proc")
	add(llSysRead, "/sys")

	var ll landlockSpec
	ll.Ruleset.HandledAccessFS = llHandled
	accesses := make([]uint64, 0, len(byAccess))
	for a := range byAccess {
		accesses = append(accesses, a)
	}
	sort.Slice(accesses, func(i, j int) bool { return accesses[i] < accesses[j] })
	for _, a := range accesses {
		paths := byAccess[a]
		sort.Strings(paths)
		ll.Rules.PathBeneath = append(ll.Rules.PathBeneath, landlockPathBeneath{AllowedAccess: a, Paths: paths})
	}
	data, err := json.Marshal(ll)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", AnnotationLandlock, err)
	}
	return string(data), nil
}
