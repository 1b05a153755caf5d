package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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

// process is one process a cpuMeter reads (or several, as the database's
// server processes), by the name its figure is printed with: cpu is its
// processor time so far.
type process struct {
	name string
	cpu  func() (time.Duration, bool)
}

// pid is the process of id pid.
func pid(name string, id int) process {
	return process{name, func() (time.Duration, bool) { return cpuTime(id) }}
}

// postgresServer is every process of the PostgreSQL server on this
// machine: one per connection, and its writers; other databases' work
// counts too. A connection opened during a turn counts from its start, and
// one closed takes its time with it; the pools keep theirs open.
var postgresServer = process{"PostgreSQL", func() (time.Duration, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var total time.Duration
	found := false
	for _, name := range stats {
		stat, err := os.ReadFile(name)
		if err != nil || !bytes.Contains(stat, []byte(" (postgres) ")) {
			continue
		}
		if t, ok := statCPUTime(stat); ok {
			total, found = total+t, true
		}
	}
	return total, found
}}

// cpuMeter adds up the processor time of some processes over the turns of
// one side of a comparison: what each spent per request served is the
// work that side costs, whatever share of the machine's cores it got.
type cpuMeter struct {
	processes []process
	spent     []time.Duration
	// unread marks the processes whose time could not be read at some turn
	// (no /proc, a database on another machine): they are left out.
	unread []bool
}

func newCPUMeter(processes ...process) *cpuMeter {
	return &cpuMeter{processes: processes, spent: make([]time.Duration, len(processes)), unread: make([]bool, len(processes))}
}

// turn runs one turn, adding what each process spent during it.
func (m *cpuMeter) turn(run func()) {
	before := make([]time.Duration, len(m.processes))
	for i, p := range m.processes {
		t, ok := p.cpu()
		before[i], m.unread[i] = t, m.unread[i] || !ok
	}
	run()
	for i, p := range m.processes {
		t, ok := p.cpu()
		m.spent[i] += t - before[i]
		m.unread[i] = m.unread[i] || !ok
	}
}

// per says each process's processor time for each of served requests or
// checkouts (those that failed too), in unit; empty when none could be read.
func (m *cpuMeter) per(served int, unit time.Duration) string {
	if served == 0 {
		return ""
	}
	symbol := map[time.Duration]string{time.Microsecond: "µs", time.Millisecond: "ms"}[unit]
	var parts []string
	for i, p := range m.processes {
		if !m.unread[i] {
			parts = append(parts, fmt.Sprintf("%s %.2f %s", p.name, float64(m.spent[i])/float64(served)/float64(unit), symbol))
		}
	}
	return strings.Join(parts, ", ")
}
