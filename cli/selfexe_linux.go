package cli

// selfExe is the file to run to start this program again: the file this
// process runs, through /proc/self/exe, whatever is now at the path it
// was run from. A container with a writable bind of that directory could
// have put its own program there, which a monitor begun once the workload
// runs would otherwise run as root.
func selfExe(string) string { return "/proc/self/exe" }
