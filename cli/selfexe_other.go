//go:build !linux

package cli

// selfExe is the file to run to start this program again: its path. There
// is no /proc/self/exe here; what keeps a container from replacing the
// file there is the evaluator, which refuses a writable mount of the
// runtime's executable (bundle.runtime-state-writable).
func selfExe(self string) string { return self }
