package bench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		file string
		want time.Duration
		err  error
	}{
		// utime 1520 + stime 377 ticks; the command name holds spaces and
		// parentheses.
		{"stat-spaces.txt", 18970 * time.Millisecond, nil},
		{"stat-plain.txt", 100 * time.Millisecond, nil}, // 7 + 3 ticks
		{"stat-short.txt", 0, errProcFormat},
		{"stat-badnum.txt", 0, errProcFormat},
		{"stat-nocomm.txt", 0, errProcFormat},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := parseStatCPU(readTestdata(t, tt.file))
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("CPU %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseStatusRSS(t *testing.T) {
	tests := []struct {
		file string
		want int64
		err  error
	}{
		{"status-paddock.txt", 62560 << 10, nil},
		{"status-kthread.txt", 0, errProcFormat}, // no VmRSS line
		{"status-badunit.txt", 0, errProcFormat},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := parseStatusRSS(readTestdata(t, tt.file))
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("RSS %d, want %d", got, tt.want)
			}
		})
	}
}

// TestProcReader reads a process's figures from a proc directory laid out
// as Linux lays out /proc.
func TestProcReader(t *testing.T) {
	p := newProcReader(filepath.Join("testdata", "proc"))
	s, err := p.sampleCPU([]int{4242})
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0] != 18970*time.Millisecond {
		t.Errorf("sampleCPU = %v, want [18.97s]", s)
	}
	rss, err := p.rss(4242)
	if err != nil || rss != 62560<<10 {
		t.Errorf("rss = %d, %v; want %d", rss, err, 62560<<10)
	}
	if _, err := p.sampleCPU([]int{4242, 4243}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sampleCPU of a missing process: %v, want a not-exist error", err)
	}
}

// TestProcReaderLive reads this test process's own entry in the real /proc.
func TestProcReaderLive(t *testing.T) {
	p := newProcReader("")
	pid := os.Getpid()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cpu, err := p.cpu(pid)
		if err != nil {
			t.Fatal(err)
		}
		if cpu > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("this process's CPU time stays 0")
		}
		for i := range 1_000_000 { // burn some CPU; there is no event to wait on
			_ = i * i
		}
	}
	rss, err := p.rss(pid)
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1<<20 {
		t.Errorf("this process's RSS is %d bytes, want at least 1 MiB", rss)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
