//go:build windows

package windows

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Access masks of the grants. A deny of writes names the write rights
// one by one: FILE_GENERIC_WRITE includes READ_CONTROL and SYNCHRONIZE,
// which reading needs too.
const (
	fileAllAccess = 0x001F01FF
	maskRead      = windows.FILE_GENERIC_READ | windows.FILE_GENERIC_EXECUTE
	maskWrite     = maskRead | windows.FILE_GENERIC_WRITE | windows.DELETE | fileDeleteChild
	maskDenyWrite = windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | windows.FILE_WRITE_EA | windows.FILE_WRITE_ATTRIBUTES |
		windows.DELETE | fileDeleteChild | windows.WRITE_DAC | windows.WRITE_OWNER
	maskDenyExecute = windows.FILE_EXECUTE
	fileDeleteChild = 0x00000040
	fileReadData    = 0x00000001
)

func grantMask(access string) (windows.ACCESS_MASK, windows.ACCESS_MODE, error) {
	switch access {
	case accessRead:
		return maskRead, windows.GRANT_ACCESS, nil
	case accessWrite:
		return maskWrite, windows.GRANT_ACCESS, nil
	case accessDeny:
		return fileAllAccess, windows.DENY_ACCESS, nil
	case accessDenyWrite:
		return maskDenyWrite, windows.DENY_ACCESS, nil
	case accessDenyExecute:
		return maskDenyExecute, windows.DENY_ACCESS, nil
	}
	return 0, 0, fmt.Errorf("unknown grant access %q", access)
}

// applyGrant adds g's entry for sid to g.Path's DACL, inheritable on a
// directory. SetNamedSecurityInfo carries it down the tree. A masked or
// hidden path that does not exist needs no entry unless something could
// create it: under a writable grant that is refused (the mask could not
// hold), elsewhere nothing can.
func applyGrant(g Grant, sid *windows.SID, writeRoots []string) (bool, error) {
	fi, err := os.Lstat(g.Path)
	if errors.Is(err, fs.ErrNotExist) {
		if g.Access == accessDeny {
			for _, w := range writeRoots {
				if under(g.Path, w) {
					return false, fmt.Errorf("grant: %s does not exist under the writable %s: the process could create it, and a deny entry needs an object", g.Path, w)
				}
			}
			return false, nil
		}
		return false, fmt.Errorf("grant %s on %s: %w", g.Access, g.Path, err)
	}
	if err != nil {
		return false, err
	}
	mask, mode, err := grantMask(g.Access)
	if err != nil {
		return false, err
	}
	inherit := uint32(windows.NO_INHERITANCE)
	if fi.IsDir() {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	sd, err := windows.GetNamedSecurityInfo(g.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return false, fmt.Errorf("grant %s: read DACL: %w", g.Path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return false, fmt.Errorf("grant %s: %w", g.Path, err)
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: mask,
		AccessMode:        mode,
		Inheritance:       inherit,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
			TrusteeValue: windows.TrusteeValueFromSID(sid),
		},
	}}, dacl)
	if err != nil {
		return false, fmt.Errorf("grant %s: %w", g.Path, err)
	}
	if err := windows.SetNamedSecurityInfo(g.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
		return false, fmt.Errorf("grant %s on %s: %w (system directories are readable by every AppContainer already: leave them out of the mounts)", g.Access, g.Path, err)
	}
	return true, nil
}

// aceSID is the SID of an allowed or denied ACE (same layout).
func aceSID(ace *windows.ACCESS_ALLOWED_ACE) *windows.SID {
	return (*windows.SID)(unsafe.Pointer(&ace.SidStart))
}

func isOwnEntry(ace *windows.ACCESS_ALLOWED_ACE, sid *windows.SID) bool {
	t := ace.Header.AceType
	return ace.Header.AceFlags&windows.INHERITED_ACE == 0 &&
		(t == windows.ACCESS_ALLOWED_ACE_TYPE || t == windows.ACCESS_DENIED_ACE_TYPE) && aceSID(ace).Equals(sid)
}

// removeGrants takes every explicit entry for sid off path's DACL (the
// entries inherited from a granted parent go when the parent's do).
func removeGrant(path string, sid *windows.SID) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ungrant %s: %w", path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return err
	}
	var keep []*windows.ACCESS_ALLOWED_ACE
	size := int(unsafe.Sizeof(windows.ACL{}))
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("ungrant %s: %w", path, err)
		}
		if isOwnEntry(ace, sid) {
			continue
		}
		keep = append(keep, ace)
		size += int(ace.Header.AceSize)
	}
	if len(keep) == int(dacl.AceCount) {
		return nil
	}
	buf := make([]uint64, (size+7)/8)
	acl, err := initializeACL(unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8))
	if err != nil {
		return err
	}
	for _, ace := range keep {
		if err := addACE(acl, ace); err != nil {
			return fmt.Errorf("ungrant %s: %w", path, err)
		}
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
		return fmt.Errorf("ungrant %s: %w", path, err)
	}
	return nil
}

// hasDenyEntry reads path's DACL back: is there an explicit deny of
// reading for sid? A host fact about the object.
func hasDenyEntry(path string, sid *windows.SID) (bool, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return false, err
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return false, err
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return false, err
		}
		if isOwnEntry(ace, sid) && ace.Header.AceType == windows.ACCESS_DENIED_ACE_TYPE && ace.Mask&fileReadData != 0 {
			return true, nil
		}
	}
	return false, nil
}
