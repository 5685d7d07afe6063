// Command snapwindows splits the calls of a paddock bench run (its --samples
// file) into those due while some ensemble member was writing a snapshot and
// the others, and prints the percentiles of each as one JSON object. The
// snapshot windows come from the members' logs: each "snapshot saved" line
// gives the time a snapshot ended and how long it took.
//
//	go run ./scripts/snapwindows -samples run.csv member1.log member2.log ...
//
// scripts/snapshot-latency.sh runs it after each run.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// window is a snapshot being written, in Unix µs.
type window struct{ from, to int64 }

// stats are the percentiles of one group of calls, in ms.
type stats struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
}

func main() {
	samplesPath := flag.String("samples", "", "paddock bench --samples file (start_us,latency_us per line)")
	flag.Parse()
	if *samplesPath == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: snapwindows -samples FILE MEMBER.log...")
		os.Exit(2)
	}
	var wins []window
	for _, p := range flag.Args() {
		w, err := windows(p)
		if err != nil {
			fatal(err)
		}
		wins = append(wins, w...)
	}
	during, outside, err := split(*samplesPath, wins)
	if err != nil {
		fatal(err)
	}
	out := map[string]any{"snapshots": len(wins), "during_snapshot": summarize(during), "no_snapshot": summarize(outside)}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "snapwindows:", err)
	os.Exit(1)
}

// windows reads the snapshot windows of one member's log.
func windows(path string) ([]window, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []window
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="snapshot saved"`) {
			continue
		}
		var end time.Time
		var took time.Duration
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "time":
				end, err = time.Parse(time.RFC3339Nano, v)
			case "took":
				took, err = time.ParseDuration(v)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", path, line, err)
			}
		}
		if end.IsZero() || took == 0 {
			return nil, fmt.Errorf("%s: no time or took in %q", path, line)
		}
		out = append(out, window{end.Add(-took).UnixMicro(), end.UnixMicro()})
	}
	return out, sc.Err()
}

// split reads the samples and returns the latencies (µs) of the calls that
// started inside a window and of the others.
func split(path string, wins []window) (during, outside []int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		a, b, ok := strings.Cut(sc.Text(), ",")
		start, err1 := strconv.ParseInt(a, 10, 64)
		lat, err2 := strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("%s:%d: want start_us,latency_us, got %q", path, n, sc.Text())
		}
		in := slices.ContainsFunc(wins, func(w window) bool { return w.from <= start && start <= w.to })
		if in {
			during = append(during, lat)
		} else {
			outside = append(outside, lat)
		}
	}
	return during, outside, sc.Err()
}

func summarize(lat []int64) stats {
	if len(lat) == 0 {
		return stats{}
	}
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1000 }
	return stats{N: len(lat), P50: at(0.5), P99: at(0.99), P999: at(0.999), Max: float64(lat[len(lat)-1]) / 1000}
}
