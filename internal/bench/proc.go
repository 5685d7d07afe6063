package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// userHZ is USER_HZ, the unit of the CPU times in /proc/PID/stat: 100 on
// every Linux architecture Go runs on.
const userHZ = 100

// errProcFormat reports a /proc file that does not look as expected.
var errProcFormat = errors.New("bench: unexpected /proc format")

// parseStatCPU returns the user+system CPU time of a process from the
// contents of /proc/PID/stat (fields 14 utime and 15 stime, in clock ticks).
// The command name, field 2, is in parentheses and may itself contain
// spaces and parentheses, so fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: stat has no command name", errProcFormat)
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("%w: stat has %d fields after the command name, want at least 13", errProcFormat, len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: stat CPU time %q", errProcFormat, s)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// parseStatusRSS returns the resident set size in bytes from the contents
// of /proc/PID/status (the "VmRSS:  N kB" line).
func parseStatusRSS(status []byte) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("%w: VmRSS line %q", errProcFormat, bytes.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("%w: VmRSS line %q", errProcFormat, bytes.TrimSpace(line))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("%w: status has no VmRSS line (a kernel thread or a zombie?)", errProcFormat)
}

// procReader reads processes' CPU time and RSS under a proc mount point.
type procReader struct{ dir string }

func newProcReader(dir string) procReader {
	if dir == "" {
		dir = "/proc"
	}
	return procReader{dir}
}

// cpu returns pid's user+system CPU time so far.
func (p procReader) cpu(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	d, err := parseStatCPU(b)
	if err != nil {
		return 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	return d, nil
}

// rss returns pid's resident set size in bytes.
func (p procReader) rss(pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	n, err := parseStatusRSS(b)
	if err != nil {
		return 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	return n, nil
}

// cpuSample is the CPU time of each server process at one moment.
type cpuSample []time.Duration

// sampleCPU reads the CPU time of every pid.
func (p procReader) sampleCPU(pids []int) (cpuSample, error) {
	s := make(cpuSample, len(pids))
	for i, pid := range pids {
		d, err := p.cpu(pid)
		if err != nil {
			return nil, err
		}
		s[i] = d
	}
	return s, nil
}
