package cli

import (
	"os"
)

// spawnDetached starts argv (path is argv[0]'s file) with env in /,
// its stdio null, and does not wait for it.
func spawnDetached(path string, argv, env []string, null *os.File) (int, error) {
	p, err := os.StartProcess(path, argv, &os.ProcAttr{Dir: "/", Env: env, Files: []*os.File{null, null, null}})
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	_ = p.Release()
	return pid, nil
}

// closeInherited: a Windows process inherits only the handles its
// spawner marked inheritable and listed; spawnDetached lists none.
func closeInherited() {}
