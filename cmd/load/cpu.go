package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuTime is the processor time process pid has used so far, in user and
// kernel mode together, read from /proc; false where there is none (not
// Linux) or the process is gone.
func cpuTime(pid int) (time.Duration, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return statCPUTime(stat)
}

// statCPUTime reads a /proc/PID/stat line. The command's name, its second
// field, is in parentheses and may hold spaces and parentheses: the fields
// are counted from the last ')', where the third begins. utime and stime
// are the 14th and 15th, in ticks of USER_HZ, which Linux fixes at 100 a
// second.
func statCPUTime(stat []byte) (time.Duration, bool) {
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0, false
	}
	user, err1 := strconv.ParseInt(fields[11], 10, 64)
	kernel, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(user+kernel) * (time.Second / 100), true
}

// process is one process a cpuMeter reads, by the name its figure is
// printed with.
type process struct {
	name string
	pid  int
}

// cpuMeter adds up the processor time of some processes over the turns of
// one side of a comparison: what each spent per request served is the
// work that side costs, whatever share of the machine's cores it got.
type cpuMeter struct {
	processes []process
	spent     []time.Duration
	ok        bool
}

func newCPUMeter(processes ...process) *cpuMeter {
	return &cpuMeter{processes: processes, spent: make([]time.Duration, len(processes)), ok: len(processes) > 0}
}

// turn runs one turn, adding what each process spent during it.
func (m *cpuMeter) turn(run func()) {
	before := make([]time.Duration, len(m.processes))
	for i, p := range m.processes {
		t, ok := cpuTime(p.pid)
		before[i], m.ok = t, m.ok && ok
	}
	run()
	for i, p := range m.processes {
		t, ok := cpuTime(p.pid)
		m.spent[i] += t - before[i]
		m.ok = m.ok && ok
	}
}

// per says each process's processor time for each one of served, in unit;
// empty when some could not be read.
func (m *cpuMeter) per(served int, unit time.Duration) string {
	if !m.ok || served == 0 {
		return ""
	}
	symbol := map[time.Duration]string{time.Microsecond: "µs", time.Millisecond: "ms"}[unit]
	var parts []string
	for i, p := range m.processes {
		parts = append(parts, fmt.Sprintf("%s %.2f %s", p.name, float64(m.spent[i])/float64(served)/float64(unit), symbol))
	}
	return strings.Join(parts, ", ")
}
