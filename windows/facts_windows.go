//go:build windows

package windows

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tokenInfo reads one class of token information into an 8-aligned
// buffer.
func tokenInfo(t windows.Token, class uint32) (unsafe.Pointer, error) {
	n := uint32(256)
	for {
		buf := make([]uint64, (n+7)/8)
		err := windows.GetTokenInformation(t, class, (*byte)(unsafe.Pointer(&buf[0])), uint32(len(buf)*8), &n)
		if err == nil {
			return unsafe.Pointer(&buf[0]), nil
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) && !errors.Is(err, windows.ERROR_BAD_LENGTH) {
			return nil, err
		}
	}
}

// readFacts reads, from the holder (outside the job, holding its handle
// and the process's), what the kernel says of the process: its job
// membership, the job's limits, and its token.
func readFacts(process, job windows.Handle, pid int) Facts {
	f := Facts{Pid: pid}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	in, err := isProcessInJob(process, job)
	f.InJob, f.InJobErr = in, errText(err)

	var lim windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	err = windows.QueryInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&lim)), uint32(unsafe.Sizeof(lim)), nil)
	if f.LimitsErr = errText(err); err == nil {
		f.LimitFlags = lim.BasicLimitInformation.LimitFlags
		f.ActiveProcessLimit = lim.BasicLimitInformation.ActiveProcessLimit
		f.JobMemoryLimit = uint64(lim.JobMemoryLimit)
	}
	var ui windows.JOBOBJECT_BASIC_UI_RESTRICTIONS
	err = windows.QueryInformationJobObject(job, windows.JobObjectBasicUIRestrictions, uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui)), nil)
	if f.UIErr = errText(err); err == nil {
		f.UIRestrictions = ui.UIRestrictionsClass
	}

	var tok windows.Token
	if err := windows.OpenProcessToken(process, windows.TOKEN_QUERY, &tok); err != nil {
		s := "open the process token: " + err.Error()
		f.IntegrityErr, f.AppContainerErr, f.CapabilitiesErr, f.PrivilegesErr, f.GroupsErr = s, s, s, s, s
		return f
	}
	defer tok.Close()
	if p, err := tokenInfo(tok, windows.TokenIntegrityLevel); err != nil {
		f.IntegrityErr = err.Error()
	} else if sid := (*windows.Tokenmandatorylabel)(p).Label.Sid; sid.SubAuthorityCount() > 0 {
		f.Integrity = sid.SubAuthority(uint32(sid.SubAuthorityCount()) - 1)
	} else {
		f.IntegrityErr = "a mandatory label without a RID"
	}
	if p, err := tokenInfo(tok, tokenIsAppContainer); err != nil {
		f.AppContainerErr = err.Error()
	} else if f.AppContainer = *(*uint32)(p) != 0; f.AppContainer {
		if p, err := tokenInfo(tok, tokenAppContainerSid); err != nil {
			f.AppContainerErr = err.Error()
		} else if sid := *(**windows.SID)(p); sid != nil {
			f.AppContainerSID = sid.String()
		}
	}
	if p, err := tokenInfo(tok, tokenCapabilities); err != nil {
		f.CapabilitiesErr = err.Error()
	} else {
		f.Capabilities = int((*windows.Tokengroups)(p).GroupCount)
	}
	if p, err := tokenInfo(tok, windows.TokenPrivileges); err != nil {
		f.PrivilegesErr = err.Error()
	} else {
		f.Privileges = []string{}
		for _, la := range (*windows.Tokenprivileges)(p).AllPrivileges() {
			name, err := lookupPrivilegeName(la.Luid)
			if err != nil {
				f.PrivilegesErr = err.Error()
				break
			}
			f.Privileges = append(f.Privileges, name)
		}
	}
	admins, err := windows.StringToSid(sidAdministrators)
	if err != nil {
		f.GroupsErr = err.Error()
	} else if p, err := tokenInfo(tok, windows.TokenGroups); err != nil {
		f.GroupsErr = err.Error()
	} else {
		for _, g := range (*windows.Tokengroups)(p).AllGroups() {
			if g.Sid.Equals(admins) && g.Attributes&windows.SE_GROUP_ENABLED != 0 && g.Attributes&windows.SE_GROUP_USE_FOR_DENY_ONLY == 0 {
				f.AdminEnabled = true
			}
		}
	}
	return f
}

// jobActive is the number of live processes in job.
func jobActive(job windows.Handle) (uint32, error) {
	var acc jobAccounting
	err := windows.QueryInformationJobObject(job, jobObjectBasicAccountingInformation, uintptr(unsafe.Pointer(&acc)), uint32(unsafe.Sizeof(acc)), nil)
	return acc.ActiveProcesses, err
}

// jobPids lists the pids in job (up to 1024; the count says if more).
func jobPids(job windows.Handle) ([]int, error) {
	const max = 1024
	var list struct {
		Assigned, InList uint32
		Pids             [max]uintptr
	}
	if err := windows.QueryInformationJobObject(job, jobObjectBasicProcessIDList, uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil); err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
		return nil, err
	}
	out := make([]int, 0, list.InList)
	for _, p := range list.Pids[:min(list.InList, max)] {
		out = append(out, int(p))
	}
	return out, nil
}
