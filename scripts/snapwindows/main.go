// Command snapwindows splits the calls of a paddock bench run (its --samples
// file) into those due while some ensemble member was writing a snapshot and
// the others, and prints the percentiles of each as one JSON object, with
// the calls also split by how many members were writing one at once
// ("by_members_snapshotting": "0", "1", "2", ...). The windows come from
// the members' logs (one file per member): each "snapshot saved" line gives
// the time a snapshot ended and how long it took, and each slow-fsync
// warning (fsync.warningthresholdms) the time a WAL fsync ended and how long
// it took. "tail" says how many of the run's slowest calls (at or above its
// p99) were in flight during a slow fsync or a snapshot of some member.
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

// window is a snapshot being written, or a slow fsync, in Unix µs.
type window struct{ from, to int64 }

// sample is one call: when it was due and how long it took, in µs.
type sample struct{ start, lat int64 }

// stats are the percentiles of one group of calls, in ms.
type stats struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
}

// tailStats attributes the slowest calls: of the N calls at or above
// ThresholdMS, how many were in flight while some member's WAL fsync was
// slow, while some member wrote a snapshot, and during neither.
type tailStats struct {
	ThresholdMS    float64 `json:"threshold_ms"`
	N              int     `json:"n"`
	DuringSlowSync int     `json:"during_slow_fsync"`
	DuringSnapshot int     `json:"during_snapshot"`
	Neither        int     `json:"neither"`
}

func main() {
	samplesPath := flag.String("samples", "", "paddock bench --samples file (start_us,latency_us per line)")
	flag.Parse()
	if *samplesPath == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: snapwindows -samples FILE MEMBER.log...")
		os.Exit(2)
	}
	var members [][]window
	var allSnaps, slowSyncs []window
	for _, p := range flag.Args() {
		snaps, syncs, err := windows(p)
		if err != nil {
			fatal(err)
		}
		members = append(members, snaps)
		allSnaps = append(allSnaps, snaps...)
		slowSyncs = append(slowSyncs, syncs...)
	}
	samples, err := readSamples(*samplesPath)
	if err != nil {
		fatal(err)
	}
	byCount := split(samples, members)
	var outside, during []int64
	counts := map[string]stats{}
	for k, lat := range byCount {
		if k == 0 {
			outside = lat
		} else {
			during = append(during, lat...)
		}
		counts[strconv.Itoa(k)] = summarize(lat)
	}
	out := map[string]any{
		"snapshots": len(allSnaps), "slow_fsyncs": len(slowSyncs),
		"during_snapshot": summarize(during), "no_snapshot": summarize(outside),
		"by_members_snapshotting": counts,
		"tail":                    tail(samples, 0.99, slowSyncs, allSnaps),
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "snapwindows:", err)
	os.Exit(1)
}

// windows reads one member's log: its snapshot windows and its slow WAL
// fsyncs.
func windows(path string) (snaps, syncs []window, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		snap := strings.Contains(line, `msg="snapshot saved"`)
		if !snap && !strings.Contains(line, `msg="fsync-ing the write ahead log took longer`) {
			continue
		}
		var end time.Time
		var took time.Duration
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue // a word of a quoted message
			}
			switch k {
			case "time":
				end, err = time.Parse(time.RFC3339Nano, v)
			case "took":
				took, err = time.ParseDuration(v)
			case "took_ms":
				var ms float64
				ms, err = strconv.ParseFloat(v, 64)
				took = time.Duration(ms * float64(time.Millisecond))
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %q: %w", path, line, err)
			}
		}
		if end.IsZero() || took == 0 {
			return nil, nil, fmt.Errorf("%s: no time or duration in %q", path, line)
		}
		w := window{end.Add(-took).UnixMicro(), end.UnixMicro()}
		if snap {
			snaps = append(snaps, w)
		} else {
			syncs = append(syncs, w)
		}
	}
	return snaps, syncs, sc.Err()
}

// readSamples reads a --samples file.
func readSamples(path string) ([]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		a, b, ok := strings.Cut(sc.Text(), ",")
		start, err1 := strconv.ParseInt(a, 10, 64)
		lat, err2 := strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: want start_us,latency_us, got %q", path, n, sc.Text())
		}
		out = append(out, sample{start, lat})
	}
	return out, sc.Err()
}

// split returns the latencies (µs) of the calls indexed by how many members
// had a snapshot window open when the call started (members holds each
// member's windows): index 0 holds the calls due while no member was
// writing one.
func split(samples []sample, members [][]window) [][]int64 {
	byCount := make([][]int64, len(members)+1)
	for _, s := range samples {
		k := 0
		for _, wins := range members {
			if slices.ContainsFunc(wins, func(w window) bool { return w.from <= s.start && s.start <= w.to }) {
				k++
			}
		}
		byCount[k] = append(byCount[k], s.lat)
	}
	return byCount
}

// tail attributes the calls at or above quantile q of the run: whether each
// was in flight (from due to done) during a slow fsync, a snapshot, or
// neither. A call during both counts for both.
func tail(samples []sample, q float64, syncs, snaps []window) tailStats {
	if len(samples) == 0 {
		return tailStats{}
	}
	lats := make([]int64, len(samples))
	for i, s := range samples {
		lats[i] = s.lat
	}
	slices.Sort(lats)
	threshold := lats[min(len(lats)-1, int(q*float64(len(lats))))]
	out := tailStats{ThresholdMS: float64(threshold) / 1000}
	overlaps := func(wins []window, s sample) bool {
		return slices.ContainsFunc(wins, func(w window) bool { return w.from <= s.start+s.lat && s.start <= w.to })
	}
	for _, s := range samples {
		if s.lat < threshold {
			continue
		}
		out.N++
		inSync, inSnap := overlaps(syncs, s), overlaps(snaps, s)
		if inSync {
			out.DuringSlowSync++
		}
		if inSnap {
			out.DuringSnapshot++
		}
		if !inSync && !inSnap {
			out.Neither++
		}
	}
	return out
}

func summarize(lat []int64) stats {
	if len(lat) == 0 {
		return stats{}
	}
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1000 }
	return stats{N: len(lat), P50: at(0.5), P99: at(0.99), P999: at(0.999), Max: float64(lat[len(lat)-1]) / 1000}
}
