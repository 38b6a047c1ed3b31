//go:build !vetto_faultinject

package containerinit

// shimFault: nothing, in every real build (fault_inject_linux.go).
func shimFault([]string) {}

// shimRuleset is the plan's ruleset, in every real build.
func shimRuleset(rs string, _ []string) string { return rs }
