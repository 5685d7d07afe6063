package benchreport_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/benchreport"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

const (
	resultsFile = "testdata/results.jsonl"
	goldenFile  = "testdata/section.golden.md"
	// sendLateFile has open-loop runs whose results carry the load
	// generator's send lateness (send_late_us, latency_less_send_late_us).
	sendLateFile   = "testdata/sendlate.jsonl"
	sendLateGolden = "testdata/sendlate.golden.md"
	// reportCommand is the command the golden section shows.
	reportCommand = "go run ./scripts/benchreport -in bench-results/results.jsonl -out docs"
)

func readResults(t *testing.T) *benchreport.Data {
	t.Helper()
	return readFile(t, resultsFile)
}

func readFile(t *testing.T, name string) *benchreport.Data {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := benchreport.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func markdown(t *testing.T) []byte {
	t.Helper()
	return markdownOf(t, resultsFile)
}

func markdownOf(t *testing.T, in string) []byte {
	t.Helper()
	return benchreport.Markdown(benchreport.Summarize(readFile(t, in)),
		benchreport.MarkdownOptions{ReportCommand: reportCommand, ChartDir: benchreport.ChartDir})
}

// TestMarkdownGolden renders testdata/results.jsonl and compares it with the
// golden section; go test -run TestMarkdownGolden -update rewrites it.
func TestMarkdownGolden(t *testing.T) {
	checkGolden(t, resultsFile, goldenFile)
}

// TestMarkdownGoldenSendLate renders results whose equal-load runs carry
// the load generator's send lateness: the equal-load table gets the p99
// less send lateness of both servers and their ratio, and "—" for a server
// whose runs did not record it.
func TestMarkdownGoldenSendLate(t *testing.T) {
	checkGolden(t, sendLateFile, sendLateGolden)
}

func checkGolden(t *testing.T, in, golden string) {
	t.Helper()
	got := markdownOf(t, in)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Markdown differs from %s (rerun with -update if the change is intended):\n%s",
			golden, lineDiff(string(want), string(got)))
	}
	if again := markdownOf(t, in); !bytes.Equal(again, got) {
		t.Error("two renderings of the same results differ")
	}
}

// lineDiff shows the first differing line of want and got.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(no line differs)"
}

// TestSummarize checks the aggregation itself on the test data: medians
// over repetitions, failed runs left out, ratios of medians.
func TestSummarize(t *testing.T) {
	s := benchreport.Summarize(readResults(t))
	if len(s.Modes) != 2 || s.Modes[0].Mode != "standalone" || s.Modes[1].Mode != "ensemble" {
		t.Fatalf("modes = %+v, want standalone then ensemble", s.Modes)
	}
	ms := s.Modes[0]
	if ms.Members != 1 || ms.Header.PaddockRevision != "0123456789ab" || ms.Failover != nil {
		t.Errorf("standalone: members %d, revision %q, failover %v; want 1, the first header's, none",
			ms.Members, ms.Header.PaddockRevision, ms.Failover)
	}
	if len(ms.Workloads) != 2 || ms.Workloads[0].Workload != "get" || ms.Workloads[1].Workload != "watch-fanout" {
		t.Fatalf("workload rows = %+v, want get then watch-fanout", ms.Workloads)
	}
	get := ms.Workloads[0]
	wantStat(t, "get ZooKeeper ops/s", get.ZK.OpsPerS, benchreport.Stat{Median: 55000, Min: 50000, Max: 60000, N: 2})
	wantStat(t, "get Paddock p99", get.PD.P99, benchreport.Stat{Median: 9500, Min: 9000, Max: 10000, N: 2})
	if r, ok := benchreport.Ratio(get.ZK.OpsPerS, get.PD.OpsPerS); !ok || math.Abs(r-210000.0/55000) > 1e-12 {
		t.Errorf("get throughput ratio = %v, %v; want %v", r, ok, 210000.0/55000)
	}
	fan := ms.Workloads[1]
	if fan.ZK.Failed != 1 || fan.ZK.OpsPerS.N != 1 || fan.ZK.OpsPerS.Median != 600 {
		t.Errorf("watch-fanout ZooKeeper: failed %d, ops/s %+v; want the failed run left out", fan.ZK.Failed, fan.ZK.OpsPerS)
	}
	if fan.PD.Errors != 2 {
		t.Errorf("watch-fanout Paddock errors = %d, want 2", fan.PD.Errors)
	}
	if len(s.Failed) != 1 || len(s.WithErrors) != 1 || len(s.FailedFailovers) != 1 {
		t.Errorf("failed %d, with errors %d, failed failovers %d; want 1, 1 and 1",
			len(s.Failed), len(s.WithErrors), len(s.FailedFailovers))
	}
	if len(ms.Clients) != 2 || ms.Clients[0].Sessions != 1 || ms.Clients[1].Sessions != 4 {
		t.Errorf("client rows = %+v, want sessions 1 then 4", ms.Clients)
	}
	if ms.Memory == nil || ms.Restart == nil {
		t.Fatal("memory or restart figures missing")
	}
	// Paddock: (52e6-12e6)/1e5 = 400 and (50.5e6-12.5e6)/1e5 = 380 B per znode.
	wantStat(t, "Paddock RSS per znode", ms.Memory.PD.PerZnode, benchreport.Stat{Median: 390, Min: 380, Max: 400, N: 2})
	wantStat(t, "ZooKeeper populate rate", ms.Memory.ZK.PopulateRate, benchreport.Stat{Median: 12500, Min: 12500, Max: 12500, N: 1})
	wantStat(t, "Paddock restart serving", ms.Restart.PD.Serving, benchreport.Stat{Median: 1.5, Min: 1.25, Max: 1.75, N: 2})
	wantStat(t, "standalone load", ms.Load1, benchreport.Stat{Median: 1.5, Min: 1, Max: 3, N: 20})
	wantStat(t, "load", s.Load1, benchreport.Stat{Median: 2, Min: 1, Max: 4.5, N: 37})
}

// TestSummarizeEnsemble checks the ensemble records: the mode takes the
// second header, CPU and RSS are the members' sums, the largest member is
// kept apart, and a failed failover is left out of the failover figures.
func TestSummarizeEnsemble(t *testing.T) {
	s := benchreport.Summarize(readResults(t))
	if len(s.Modes) != 2 {
		t.Fatalf("modes = %+v, want two", s.Modes)
	}
	ms := s.Modes[1]
	if ms.Members != 3 || ms.Header.PaddockRevision != "fedcba987654" || ms.Header.Settings.Workloads != "set" {
		t.Errorf("ensemble: members %d, header %+v; want 3 and the second header", ms.Members, ms.Header)
	}
	if len(ms.Workloads) != 2 || ms.Workloads[0].Workload != "set" || ms.Workloads[1].Workload != "mixed" ||
		len(ms.Clients) != 0 || ms.Restart != nil {
		t.Fatalf("ensemble rows = %+v, want a set and a mixed row and no clients or restart", ms)
	}
	set, mixed := ms.Workloads[0], ms.Workloads[1]
	if set.Rate != 0 {
		t.Errorf("closed-loop set row has rate %v, want 0", set.Rate)
	}
	// The latency series: its own rows, at the offered rate, kept apart
	// from the closed-loop runs of the same workload.
	if len(ms.Latency) != 1 || ms.Latency[0].Workload != "set" || ms.Latency[0].Rate != 5000 {
		t.Fatalf("latency rows = %+v, want one set row at 5000 calls/s", ms.Latency)
	}
	lat := ms.Latency[0]
	if ms.LatencyLoad != 0.5 {
		t.Errorf("latency load %v, want the header's 0.5", ms.LatencyLoad)
	}
	wantStat(t, "equal-load ZooKeeper p99", lat.ZK.P99, benchreport.Stat{Median: 100000, Min: 95000, Max: 105000, N: 2})
	wantStat(t, "equal-load Paddock ops/s", lat.PD.OpsPerS, benchreport.Stat{Median: 5000, Min: 5000, Max: 5000, N: 2})
	if set.ReadRatio != 0 || mixed.ReadRatio != 0.8 {
		t.Errorf("read ratios: set %v, mixed %v; want 0 and the recorded 0.8", set.ReadRatio, mixed.ReadRatio)
	}
	wantStat(t, "ensemble ZooKeeper CPU/op", set.ZK.CPUPerOp, benchreport.Stat{Median: 145, Min: 140, Max: 150, N: 2})
	wantStat(t, "ensemble Paddock RSS", set.PD.RSS, benchreport.Stat{Median: 125e6, Min: 120e6, Max: 130e6, N: 2})
	wantStat(t, "ensemble Paddock largest member", set.PD.MaxMemberRSS, benchreport.Stat{Median: 55e6, Min: 50e6, Max: 60e6, N: 2})
	wantStat(t, "ensemble ZooKeeper largest member", set.ZK.MaxMemberRSS, benchreport.Stat{Median: 425e6, Min: 400e6, Max: 450e6, N: 2})
	if ms.Memory == nil {
		t.Fatal("ensemble memory missing")
	}
	wantStat(t, "ensemble Paddock largest member with znodes", ms.Memory.PD.MaxMember, benchreport.Stat{Median: 100e6, Min: 100e6, Max: 100e6, N: 1})
	// (270e6 - 42e6) / 1e5 = 2280 B per znode over the three members.
	wantStat(t, "ensemble Paddock RSS per znode", ms.Memory.PD.PerZnode, benchreport.Stat{Median: 2280, Min: 2280, Max: 2280, N: 1})

	f := ms.Failover
	if f == nil {
		t.Fatal("failover figures missing")
	}
	if f.PD.Failed != 1 || f.ZK.Failed != 0 || f.PD.Writers != 8 || f.PD.SessionTimeoutS != 10 {
		t.Errorf("failover: failed %d/%d, writers %d, timeout %v; want 0/1, 8, 10", f.ZK.Failed, f.PD.Failed, f.PD.Writers, f.PD.SessionTimeoutS)
	}
	wantStat(t, "Paddock new leader", f.PD.Leader, benchreport.Stat{Median: 0.7, Min: 0.6, Max: 0.8, N: 2})
	wantStat(t, "ZooKeeper every writer", f.ZK.AllWriters, benchreport.Stat{Median: 1.8, Min: 1.6, Max: 2, N: 2})
	wantStat(t, "Paddock rejoin (failed rep left out)", f.PD.Rejoin, benchreport.Stat{Median: 0.6, Min: 0.5, Max: 0.7, N: 2})
	wantStat(t, "Paddock failed writes", f.PD.FailedWrites, benchreport.Stat{Median: 27, Min: 24, Max: 30, N: 2})
	if r, ok := benchreport.Ratio(f.ZK.FirstWrite, f.PD.FirstWrite); !ok || math.Abs(r-0.72/1.0) > 1e-9 {
		t.Errorf("first write ratio = %v, %v; want 0.72", r, ok)
	}
}

// TestReadHeaders checks that each record belongs to the header before it.
func TestReadHeaders(t *testing.T) {
	const in = `{"type":"header","date":"2026-01-01T00:00:00Z","command":"a"}
{"type":"bench","server":"paddock","mode":"standalone","series":"workload","workload":"get"}
{"type":"header","date":"2026-01-02T00:00:00Z","command":"b","mode":"ensemble","members":3}
{"type":"bench","server":"zookeeper","mode":"ensemble","series":"workload","workload":"get"}
{"type":"failover","server":"paddock","mode":"ensemble","leader_s":0.5}
{"type":"memory","server":"paddock","mode":"ensemble","members":3,"member_rss_bytes":[1,2,3]}
`
	d, err := benchreport.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Headers) != 2 || d.Header.Command != "a" || d.Headers[1].Members != 3 {
		t.Fatalf("headers = %+v (first %+v), want a then b with 3 members", d.Headers, d.Header)
	}
	if len(d.Runs) != 2 || d.Runs[0].Header != 0 || d.Runs[1].Header != 1 {
		t.Errorf("runs = %+v, want the first under header 0, the second under header 1", d.Runs)
	}
	if len(d.Failovers) != 1 || d.Failovers[0].Header != 1 || d.Failovers[0].LeaderS != 0.5 {
		t.Errorf("failovers = %+v, want one under header 1", d.Failovers)
	}
	if len(d.Memory) != 1 || d.Memory[0].Header != 1 || len(d.Memory[0].MemberRSSBytes) != 3 {
		t.Errorf("memory = %+v, want one under header 1 with 3 members", d.Memory)
	}
}

// TestSummarizeCommands checks that a mode measured by several runs of the
// script (say, a failover phase appended to an ensemble run) names every
// run's command, once, in file order, and that the section shows them.
func TestSummarizeCommands(t *testing.T) {
	const in = `{"type":"header","date":"2026-01-01T00:00:00Z","command":"a"}
{"type":"bench","server":"paddock","mode":"standalone","series":"workload","workload":"get"}
{"type":"header","date":"2026-01-02T00:00:00Z","command":"b","mode":"ensemble","members":3}
{"type":"bench","server":"zookeeper","mode":"ensemble","series":"workload","workload":"get"}
{"type":"header","date":"2026-01-03T00:00:00Z","command":"c","mode":"ensemble","members":3}
{"type":"failover","server":"paddock","mode":"ensemble","leader_s":0.5}
{"type":"header","date":"2026-01-04T00:00:00Z","command":"b","mode":"ensemble","members":3}
{"type":"failover","server":"zookeeper","mode":"ensemble","leader_s":0.7}
`
	d, err := benchreport.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	s := benchreport.Summarize(d)
	if len(s.Modes) != 2 || !slices.Equal(s.Modes[0].Commands, []string{"a"}) || !slices.Equal(s.Modes[1].Commands, []string{"b", "c"}) {
		t.Fatalf("modes %+v", s.Modes)
	}
	md := string(benchreport.Markdown(s, benchreport.MarkdownOptions{ReportCommand: "report"}))
	if !strings.Contains(md, "```sh\na\nb\nc\nreport\n```") {
		t.Fatalf("commands not listed in order:\n%s", md)
	}
}

func wantStat(t *testing.T, what string, got, want benchreport.Stat) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func TestNewStat(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want benchreport.Stat
	}{
		{nil, benchreport.Stat{}},
		{[]float64{5}, benchreport.Stat{Median: 5, Min: 5, Max: 5, N: 1}},
		{[]float64{3, 1, 2}, benchreport.Stat{Median: 2, Min: 1, Max: 3, N: 3}},
		{[]float64{4, 1, 3, 2}, benchreport.Stat{Median: 2.5, Min: 1, Max: 4, N: 4}},
	} {
		in := append([]float64(nil), tc.in...)
		if got := benchreport.NewStat(tc.in); got != tc.want {
			t.Errorf("NewStat(%v) = %+v, want %+v", in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Errorf("NewStat reordered its argument: %v", tc.in)
			}
		}
	}
	if _, ok := benchreport.Ratio(benchreport.Stat{}, benchreport.NewStat([]float64{1})); ok {
		t.Error("Ratio with no ZooKeeper figure reported ok")
	}
}

func TestReadErrors(t *testing.T) {
	const header = `{"type":"header","date":"2026-01-01T00:00:00Z"}` + "\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "no header"},
		{"record before header", `{"type":"restart","server":"paddock"}` + "\n" + header, "before the header"},
		{"unknown failover server", header + `{"type":"failover","server":"etcd"}`, `unknown server "etcd"`},
		{"unknown type", header + `{"type":"surprise"}`, `unknown record type "surprise"`},
		{"unknown server", header + `{"type":"bench","server":"etcd"}`, `unknown server "etcd"`},
		{"bad JSON", header + `{"type":"bench",`, "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := benchreport.Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGenerate runs the whole command on a copy of a document: the charts
// are SVG files, the section between the markers is the golden one with the
// command Generate names, and the rest of the document is untouched.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	before := "# Benchmarks\n\nIntro.\n\n## Side by side\n\nHand-written.\n\n" + benchreport.BeginMarker + "\n"
	after := benchreport.EndMarker + "\n\n## Go client\n\nAppended by someone else.\n"
	doc := before + "old generated text\n" + after
	if err := os.WriteFile(filepath.Join(dir, benchreport.DocName), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	written, err := benchreport.Generate(benchreport.Options{In: resultsFile, OutDir: dir, Command: reportCommand})
	if err != nil {
		t.Fatal(err)
	}
	var charts int
	for _, p := range written {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".svg") {
			charts++
			if !bytes.Contains(b, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(b), []byte("</svg>")) {
				t.Errorf("%s is not an SVG document", p)
			}
			if !bytes.Contains(b, []byte("Arial")) {
				t.Errorf("%s names no fallback font", p)
			}
		}
	}
	if charts != 9 {
		t.Errorf("wrote %d charts (%v), want 9: standalone throughput, latency, clients, memory, restart; "+
			"ensemble throughput, latency, memory, failover", charts, written)
	}
	got, err := os.ReadFile(filepath.Join(dir, benchreport.DocName))
	if err != nil {
		t.Fatal(err)
	}
	want := before + string(markdown(t)) + after
	if string(got) != want {
		t.Errorf("document after Generate:\n%s", lineDiff(want, string(got)))
	}
	if st, err := os.Stat(filepath.Join(dir, benchreport.DocName)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("document mode = %v, %v; want 0600 kept", st.Mode().Perm(), err)
	}
	for _, ref := range []string{"benchmarks/standalone-throughput.svg", "benchmarks/standalone-restart.svg",
		"benchmarks/ensemble-throughput.svg", "benchmarks/ensemble-failover.svg"} {
		if !strings.Contains(string(got), "]("+ref+")") {
			t.Errorf("document does not link %s", ref)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(ref))); err != nil {
			t.Errorf("linked chart: %v", err)
		}
	}
}

// TestSummarizeStalledRun checks that a run that completed no call counts
// in the throughput (its rate is 0) but not in the latency or CPU figures,
// which it has none of.
func TestSummarizeStalledRun(t *testing.T) {
	const in = `{"type":"header","date":"2026-01-01T00:00:00Z","command":"a","mode":"ensemble","members":3}
{"type":"bench","server":"zookeeper","mode":"ensemble","series":"workload","workload":"watch-fanout","ops":4000,"ops_per_s":500,"latency_us":{"p50":1000,"p90":2000,"p99":4000,"p999":5000},"server_cpu_us_per_op":2000}
{"type":"bench","server":"zookeeper","mode":"ensemble","series":"workload","workload":"watch-fanout","ops":0,"ops_per_s":0,"latency_us":{"p50":0,"p90":0,"p99":0,"p999":0},"server_cpu_us_per_op":0}
{"type":"bench","server":"paddock","mode":"ensemble","series":"workload","workload":"watch-fanout","ops":6000,"ops_per_s":800,"latency_us":{"p50":700,"p90":900,"p99":1500,"p999":3000},"server_cpu_us_per_op":1200}
`
	d, err := benchreport.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	ms := benchreport.Summarize(d).Modes[0]
	if len(ms.Workloads) != 1 {
		t.Fatalf("rows %+v, want one", ms.Workloads)
	}
	zk := ms.Workloads[0].ZK
	wantStat(t, "ZooKeeper ops/s", zk.OpsPerS, benchreport.Stat{Median: 250, Min: 0, Max: 500, N: 2})
	wantStat(t, "ZooKeeper p99", zk.P99, benchreport.Stat{Median: 4000, Min: 4000, Max: 4000, N: 1})
	wantStat(t, "ZooKeeper CPU/op", zk.CPUPerOp, benchreport.Stat{Median: 2000, Min: 2000, Max: 2000, N: 1})
}

// TestSummarizeSendLate checks the p99 less send lateness and the p99 of
// the send lateness: medians over the runs that recorded them, none for
// runs without them.
func TestSummarizeSendLate(t *testing.T) {
	d := readFile(t, sendLateFile)
	if r := d.Runs[4]; r.SendLate == nil || r.LatencyLessSendLate == nil || r.LatencyLessSendLate.P99 != 2500 {
		t.Fatalf("run %+v: send lateness not read", r)
	}
	ms := benchreport.Summarize(d).Modes[0]
	if len(ms.Latency) != 2 || ms.Latency[0].Workload != "get" || ms.Latency[1].Workload != "set" {
		t.Fatalf("latency rows = %+v, want get then set", ms.Latency)
	}
	get, set := ms.Latency[0], ms.Latency[1]
	wantStat(t, "get ZooKeeper p99 less send lateness", get.ZK.P99LessSendLate, benchreport.Stat{Median: 2600, Min: 2500, Max: 2700, N: 2})
	wantStat(t, "get Paddock p99 less send lateness", get.PD.P99LessSendLate, benchreport.Stat{Median: 320, Min: 310, Max: 330, N: 2})
	wantStat(t, "get Paddock send lateness p99", get.PD.SendLateP99, benchreport.Stat{Median: 1060, Min: 1050, Max: 1070, N: 2})
	wantStat(t, "set ZooKeeper p99 less send lateness (not recorded)", set.ZK.P99LessSendLate, benchreport.Stat{})
	wantStat(t, "set Paddock p99 less send lateness", set.PD.P99LessSendLate, benchreport.Stat{Median: 1950, Min: 1900, Max: 2000, N: 2})
	// Older results and the closed-loop runs have none.
	wantStat(t, "closed-loop get p99 less send lateness", ms.Workloads[0].PD.P99LessSendLate, benchreport.Stat{})
	for _, m := range benchreport.Summarize(readResults(t)).Modes {
		for _, p := range m.Latency {
			if p.ZK.P99LessSendLate.N+p.PD.P99LessSendLate.N+p.ZK.SendLateP99.N+p.PD.SendLateP99.N != 0 {
				t.Errorf("%s %s: send lateness figures from results without them: %+v", m.Mode, p.Workload, p)
			}
		}
	}
}

// TestEqualLoadSendLateBothServers checks that the equal-load table gets
// the p99 less send lateness only when both servers' runs recorded it.
func TestEqualLoadSendLateBothServers(t *testing.T) {
	const header = `{"type":"header","date":"2026-01-01T00:00:00Z","command":"a","settings":{"sessions":16,"inflight":16}}` + "\n"
	const zkOld = `{"type":"bench","server":"zookeeper","mode":"standalone","series":"latency","workload":"get","rate":1000,"ops":5000,"ops_per_s":1000,"latency_us":{"p50":500,"p90":900,"p99":2000,"p999":3000}}` + "\n"
	const zkNew = `{"type":"bench","server":"zookeeper","mode":"standalone","series":"latency","workload":"get","rate":1000,"ops":5000,"ops_per_s":1000,"latency_us":{"p50":500,"p90":900,"p99":2000,"p999":3000},"send_late_us":{"p99":1000},"latency_less_send_late_us":{"p99":1200}}` + "\n"
	const pdNew = `{"type":"bench","server":"paddock","mode":"standalone","series":"latency","workload":"get","rate":1000,"ops":5000,"ops_per_s":1000,"latency_us":{"p50":300,"p90":600,"p99":1500,"p999":2000},"send_late_us":{"p99":1000},"latency_less_send_late_us":{"p99":300}}` + "\n"
	for _, tc := range []struct {
		name, in string
		want     bool
	}{
		{"both servers", header + zkNew + pdNew, true},
		{"Paddock only", header + zkOld + pdNew, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := benchreport.Read(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			md := string(benchreport.Markdown(benchreport.Summarize(d), benchreport.MarkdownOptions{ReportCommand: "report"}))
			const row = "| get | 1,000 | 1,000 | 1,000 | 500 µs | 300 µs | 0.60× | 2.00 ms | 1.50 ms | 0.75× | 3.00 ms | 2.00 ms | 0.67× |"
			withLate := row + " 1.20 ms | 300 µs | 0.25× |\n"
			if got := strings.Contains(md, "p99 less send lateness"); got != tc.want {
				t.Errorf("section names p99 less send lateness: %v, want %v:\n%s", got, tc.want, md)
			}
			if want := map[bool]string{true: withLate, false: row + "\n"}[tc.want]; !strings.Contains(md, want) {
				t.Errorf("section has no row %q:\n%s", want, md)
			}
		})
	}
}
