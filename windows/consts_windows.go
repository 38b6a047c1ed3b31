//go:build windows

package windows

import "golang.org/x/sys/windows"

// The untagged translator cannot import x/sys/windows; these fail to
// compile if one of its numbers is not the system's (an index out of
// [0,1) is a compile error).
var (
	_ = [1]struct{}{}[limitActiveProcess-windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS]
	_ = [1]struct{}{}[limitJobMemory-windows.JOB_OBJECT_LIMIT_JOB_MEMORY]
	_ = [1]struct{}{}[limitDieOnUnhandledException-windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION]
	_ = [1]struct{}{}[limitBreakawayOK-windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK]
	_ = [1]struct{}{}[limitSilentBreakawayOK-windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK]
	_ = [1]struct{}{}[limitKillOnJobClose-windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE]
	_ = [1]struct{}{}[uiHandles-windows.JOB_OBJECT_UILIMIT_HANDLES]
	_ = [1]struct{}{}[uiReadClipboard-windows.JOB_OBJECT_UILIMIT_READCLIPBOARD]
	_ = [1]struct{}{}[uiWriteClipboard-windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD]
	_ = [1]struct{}{}[uiSystemParameters-windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS]
	_ = [1]struct{}{}[uiDisplaySettings-windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS]
	_ = [1]struct{}{}[uiGlobalAtoms-windows.JOB_OBJECT_UILIMIT_GLOBALATOMS]
	_ = [1]struct{}{}[uiDesktop-windows.JOB_OBJECT_UILIMIT_DESKTOP]
	_ = [1]struct{}{}[uiExitWindows-windows.JOB_OBJECT_UILIMIT_EXITWINDOWS]
	_ = [1]struct{}{}[jobObjectBasicAccountingInformation-windows.JobObjectBasicAccountingInformation]
	_ = [1]struct{}{}[jobObjectBasicProcessIDList-windows.JobObjectBasicProcessIdList]
)
