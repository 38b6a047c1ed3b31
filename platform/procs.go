package platform

import (
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
)

// FitProcsToLoad gives this process one P (GOMAXPROCS 1) when the host has
// no idle CPU, and leaves Go's default (one P per usable CPU) otherwise.
//
// A runtime command is short and mostly one thread of work; its second P
// pays only for the codec warm-up (WarmCodecs), which overlaps the command
// line's set-up on an idle CPU. On a host with no idle CPU — 32 lifecycles
// started at once on 2 CPUs, a CI runner at full load — there is nothing
// to overlap on, and the second P costs CPU the other processes need: the
// scheduler's spinning, its wake-ups and timer sleeps between goroutines.
// Measured on the 2-CPU test host (docs/performance.md, the fifth
// round's analysis): 32 parallel `run`s took 10 % longer with two Ps than
// with one, and a `run` on an idle host 3 % longer with one P than with
// two.
//
// The load is the kernel's count of runnable tasks (/proc/loadavg's
// fourth field, this process included) at the moment main starts: a hint,
// read once, that changes how fast, never what, the command does. A
// GOMAXPROCS the user set is theirs; where /proc/loadavg cannot be read
// (macOS, Windows, a /proc without it) nothing changes.
func FitProcsToLoad() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	running, ok := runnableTasks(string(data))
	if !ok {
		return
	}
	procs := goruntime.GOMAXPROCS(0)
	if want := procsForLoad(procs, running); want != procs {
		goruntime.GOMAXPROCS(want)
	}
}

// procsForLoad is the number of Ps for a process that would have procs,
// when running tasks (itself among them) are runnable on the host: one
// when more tasks are runnable than there are CPUs (none is idle: a
// second P would only take time from another task), procs otherwise.
func procsForLoad(procs, running int) int {
	if procs > 1 && running > procs {
		return 1
	}
	return procs
}

// runnableTasks reads the runnable count from /proc/loadavg's text,
// "0.52 0.58 0.59 3/250 12345": the number before the slash of the
// fourth field.
func runnableTasks(loadavg string) (int, bool) {
	fields := strings.Fields(loadavg)
	if len(fields) < 4 {
		return 0, false
	}
	runnable, _, found := strings.Cut(fields[3], "/")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(runnable)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
