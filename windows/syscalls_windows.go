//go:build windows

package windows

// The calls golang.org/x/sys/windows lacks, as lazy bindings to the
// system DLLs, all in this one file. Each looks its procedure up first
// and returns an error if the DLL lacks it (an old Windows): a missing
// procedure must refuse a launch, never panic.

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	modadvapi32 = windows.NewLazySystemDLL("advapi32.dll")
	modkernel32 = windows.NewLazySystemDLL("kernel32.dll")
	moduserenv  = windows.NewLazySystemDLL("userenv.dll")

	procCreateRestrictedToken                     = modadvapi32.NewProc("CreateRestrictedToken")
	procInitializeAcl                             = modadvapi32.NewProc("InitializeAcl")
	procAddAce                                    = modadvapi32.NewProc("AddAce")
	procLookupPrivilegeNameW                      = modadvapi32.NewProc("LookupPrivilegeNameW")
	procIsProcessInJob                            = modkernel32.NewProc("IsProcessInJob")
	procCreateAppContainerProfile                 = moduserenv.NewProc("CreateAppContainerProfile")
	procDeriveAppContainerSidFromAppContainerName = moduserenv.NewProc("DeriveAppContainerSidFromAppContainerName")
	procDeleteAppContainerProfile                 = moduserenv.NewProc("DeleteAppContainerProfile")
)

// Values winnt.h / processthreadsapi.h define that x/sys does not.
const (
	procThreadAttributeSecurityCapabilities = 0x00020009 // PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES
	procThreadAttributeJobList              = 0x0002000D // PROC_THREAD_ATTRIBUTE_JOB_LIST (Windows 10)

	disableMaxPrivilege = 0x1 // CreateRestrictedToken's DISABLE_MAX_PRIVILEGE

	tokenIsAppContainer  = 29 // TOKEN_INFORMATION_CLASS
	tokenCapabilities    = 30
	tokenAppContainerSid = 31

	aclRevision = 2

	jobObjectBasicAccountingInformation = 1
	jobObjectBasicProcessIDList         = 3
)

// securityCapabilities is SECURITY_CAPABILITIES.
type securityCapabilities struct {
	AppContainerSid *windows.SID
	Capabilities    *windows.SIDAndAttributes
	CapabilityCount uint32
	Reserved        uint32
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

func call(p *windows.LazyProc, args ...uintptr) (uintptr, syscall.Errno, error) {
	if err := p.Find(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", p.Name, err)
	}
	r, _, errno := syscall.SyscallN(p.Addr(), args...)
	return r, errno, nil
}

// boolCall is a BOOL-returning call: FALSE is the error in GetLastError.
func boolCall(p *windows.LazyProc, args ...uintptr) error {
	r, errno, err := call(p, args...)
	if err != nil {
		return err
	}
	if r == 0 {
		if errno == 0 {
			errno = syscall.EINVAL
		}
		return fmt.Errorf("%s: %w", p.Name, errno)
	}
	return nil
}

// hresultCall is an HRESULT-returning call: S_OK is 0.
func hresultCall(p *windows.LazyProc, args ...uintptr) error {
	r, _, err := call(p, args...)
	if err != nil {
		return err
	}
	if r != 0 {
		return fmt.Errorf("%s: HRESULT %#08x", p.Name, uint32(r))
	}
	return nil
}

// createRestrictedToken is CreateRestrictedToken with SIDs to make
// deny-only and no restricting SIDs.
func createRestrictedToken(existing windows.Token, flags uint32, disable []windows.SIDAndAttributes) (windows.Token, error) {
	var p *windows.SIDAndAttributes
	if len(disable) > 0 {
		p = &disable[0]
	}
	var tok windows.Token
	err := boolCall(procCreateRestrictedToken, uintptr(existing), uintptr(flags), uintptr(len(disable)), uintptr(unsafe.Pointer(p)),
		0, 0, 0, 0, uintptr(unsafe.Pointer(&tok)))
	return tok, err
}

// isProcessInJob is IsProcessInJob.
func isProcessInJob(process, job windows.Handle) (bool, error) {
	var in int32
	err := boolCall(procIsProcessInJob, uintptr(process), uintptr(job), uintptr(unsafe.Pointer(&in)))
	return in != 0, err
}

// initializeACL and addACE build an ACL entry by entry (teardown copies
// a DACL without the container's entries).
func initializeACL(buf []byte) (*windows.ACL, error) {
	acl := (*windows.ACL)(unsafe.Pointer(&buf[0]))
	return acl, boolCall(procInitializeAcl, uintptr(unsafe.Pointer(acl)), uintptr(len(buf)), aclRevision)
}

func addACE(acl *windows.ACL, ace *windows.ACCESS_ALLOWED_ACE) error {
	return boolCall(procAddAce, uintptr(unsafe.Pointer(acl)), aclRevision, 0xFFFFFFFF, uintptr(unsafe.Pointer(ace)), uintptr(ace.Header.AceSize))
}

// lookupPrivilegeName is LookupPrivilegeNameW on the local system.
func lookupPrivilegeName(luid windows.LUID) (string, error) {
	buf := make([]uint16, 64)
	n := uint32(len(buf))
	if err := boolCall(procLookupPrivilegeNameW, 0, uintptr(unsafe.Pointer(&luid)), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))); err != nil {
		return "", err
	}
	return windows.UTF16ToString(buf[:n]), nil
}

// createAppContainerProfile makes a profile with no capability and
// returns its SID (copied: the system's is freed).
func createAppContainerProfile(name, description string) (*windows.SID, error) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, err
	}
	d, err := windows.UTF16PtrFromString(description)
	if err != nil {
		return nil, err
	}
	var sid *windows.SID
	if err := hresultCall(procCreateAppContainerProfile, uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(d)), 0, 0, uintptr(unsafe.Pointer(&sid))); err != nil {
		return nil, err
	}
	defer windows.FreeSid(sid)
	return sid.Copy()
}

// deleteAppContainerProfile removes the profile called name.
func deleteAppContainerProfile(name string) error {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return err
	}
	return hresultCall(procDeleteAppContainerProfile, uintptr(unsafe.Pointer(n)))
}
