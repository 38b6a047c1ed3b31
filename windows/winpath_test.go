package windows

import (
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`C:\`, `C:\`, true},
		{`c:/work/proj/`, `C:\work\proj`, true},
		{`C:\a\.\b\..\c`, `C:\a\c`, true},
		{`C:\..\x`, `C:\x`, true},
		{`C:relative`, "", false},
		{`\\server\share`, "", false},
		{`\\?\C:\x`, "", false},
		{`/usr`, "", false},
		{"C:\\a\x00b", "", false},
	}
	for _, tt := range tests {
		got, ok := cleanPath(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("cleanPath(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUnder(t *testing.T) {
	tests := []struct {
		p, root string
		want    bool
	}{
		{`C:\work\proj\a`, `C:\work\proj`, true},
		{`C:\WORK\Proj`, `C:\work\proj`, true},
		{`C:\work\project`, `C:\work\proj`, false},
		{`C:\x`, `C:\`, true},
		{`D:\x`, `C:\`, false},
	}
	for _, tt := range tests {
		if got := under(tt.p, tt.root); got != tt.want {
			t.Errorf("under(%q, %q) = %v", tt.p, tt.root, got)
		}
	}
	if joinPath(`C:\`, "a") != `C:\a` || joinPath(`C:\x`, "a") != `C:\x\a` {
		t.Error("joinPath")
	}
}

func TestFindProgram(t *testing.T) {
	files := map[string]bool{
		`C:\Windows\System32\cmd.exe`: true,
		`C:\tools\build.CMD`:          true,
		`C:\work\proj\run.bat`:        true,
		`C:\work\proj\bin\tool.exe`:   true,
	}
	// The host's file names compare without case, as NTFS does.
	exists := func(p string) bool {
		for f := range files {
			if strings.EqualFold(f, p) {
				return true
			}
		}
		return false
	}
	env := []string{`Path=C:\tools;relative\dir;C:\Windows\System32`}
	tests := []struct {
		name, cwd string
		env       []string
		want      string
		ok        bool
	}{
		{"cmd", `C:\`, env, `C:\Windows\System32\cmd.exe`, true},
		{"cmd.exe", `C:\`, env, `C:\Windows\System32\cmd.exe`, true},
		{"build", `C:\`, append(env, "PATHEXT=.CMD"), `C:\tools\build.CMD`, true},
		{`.\run.bat`, `C:\work\proj`, env, `C:\work\proj\run.bat`, true},
		{`bin\tool`, `C:\work\proj`, env, `C:\work\proj\bin\tool.exe`, true},
		// A bare name is never looked up in the current directory.
		{"run", `C:\work\proj`, env, "", false},
		{"missing", `C:\`, env, "", false},
	}
	for _, tt := range tests {
		got, err := findProgram(tt.name, tt.cwd, tt.env, exists)
		if (err == nil) != tt.ok || !strings.EqualFold(got, tt.want) {
			t.Errorf("findProgram(%q) = %q, %v; want %q ok=%v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}
