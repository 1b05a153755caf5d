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

// process is one process a cpuMeter reads, or several (the database's
// server processes), by the name its figure is printed with: times is the
// processor time each has used so far, by process id; empty when none
// could be read.
type process struct {
	name  string
	times func() map[int]time.Duration
}

// pid is the process of id pid.
func pid(name string, id int) process {
	return process{name, func() map[int]time.Duration {
		if t, ok := cpuTime(id); ok {
			return map[int]time.Duration{id: t}
		}
		return nil
	}}
}

// postgresServer is every process of the PostgreSQL server on this
// machine: one per connection, its writers, its vacuum workers; other
// databases' work counts too.
var postgresServer = process{"PostgreSQL", func() map[int]time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	times := map[int]time.Duration{}
	for _, name := range stats {
		stat, err := os.ReadFile(name)
		if err != nil || !bytes.Contains(stat, []byte(" (postgres) ")) {
			continue
		}
		id, _ := strconv.Atoi(filepath.Base(filepath.Dir(name)))
		if t, ok := statCPUTime(stat); ok {
			times[id] = t
		}
	}
	return times
}}

// cpuMeter adds up the processor time of some processes over the turns of
// one side of a comparison: what each spent per request served is the
// work that side costs, whatever share of the machine's cores it got.
type cpuMeter struct {
	processes []process
	spent     []time.Duration
	// unread marks the processes whose time could not be read at some turn
	// (no /proc, no -pid, a database on another machine): they are left
	// out.
	unread []bool
}

func newCPUMeter(processes ...process) *cpuMeter {
	return &cpuMeter{processes: processes, spent: make([]time.Duration, len(processes)), unread: make([]bool, len(processes))}
}

// turn runs one turn, adding what each process spent during it: a process
// started during the turn counts from its start; one that ended during it
// is left out, its last time unknown (a vacuum worker, say), so that no
// figure goes below what was spent.
func (m *cpuMeter) turn(run func()) {
	before := make([]map[int]time.Duration, len(m.processes))
	for i, p := range m.processes {
		before[i] = p.times()
	}
	run()
	for i, p := range m.processes {
		after := p.times()
		if len(before[i]) == 0 || len(after) == 0 {
			m.unread[i] = true
		}
		for id, t := range after {
			m.spent[i] += t - before[i][id]
		}
	}
}

// per says each process's processor time for each of served requests or
// checkouts (those that failed too), in unit; empty when none could be read.
func (m *cpuMeter) per(served int, unit time.Duration) string {
	if served == 0 {
		return ""
	}
	symbol := map[time.Duration]string{time.Microsecond: "µs", time.Millisecond: "ms", time.Second: "s"}[unit]
	var parts []string
	for i, p := range m.processes {
		if !m.unread[i] {
			parts = append(parts, fmt.Sprintf("%s %.2f %s", p.name, float64(m.spent[i])/float64(served)/float64(unit), symbol))
		}
	}
	return strings.Join(parts, ", ")
}
