package benchreport

import (
	"cmp"
	"slices"
)

// Stat is one figure over the repetitions of a measurement.
type Stat struct {
	Median, Min, Max float64
	N                int // values; 0 means not measured
}

// NewStat returns the median, minimum and maximum of xs (the median of an
// even count is the mean of the middle two).
func NewStat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stat{Median: med, Min: s[0], Max: s[n-1], N: n}
}

// Ratio returns pd.Median / zk.Median, or false when either is missing or
// ZooKeeper's is not positive.
func Ratio(zk, pd Stat) (float64, bool) {
	if zk.N == 0 || pd.N == 0 || zk.Median <= 0 {
		return 0, false
	}
	return pd.Median / zk.Median, true
}

// Both holds one figure for each server.
type Both[T any] struct {
	ZK, PD T
}

// Figures are one server's figures for one group of bench runs. CPUPerOp
// and RSS are summed over an ensemble's members; MaxMemberRSS is the largest
// member's RSS at the end of each run.
type Figures struct {
	OpsPerS, P50, P90, P99, P999, CPUPerOp, RSS Stat
	MaxMemberRSS                                Stat
	// P99LessSendLate and SendLateP99 are, for open-loop runs whose
	// results have them (latency_less_send_late_us, send_late_us), the p99
	// of each call's latency less the load generator's lateness in sending
	// it, and the p99 of that lateness; N is 0 for older results.
	P99LessSendLate, SendLateP99 Stat
	// Errors sums the errors the measured runs counted; Failed counts the
	// runs that failed (and are left out of the figures).
	Errors int64
	Failed int
}

// Pair is one row of a table: the same workload and load on both servers.
type Pair struct {
	Workload           string
	Sessions, Inflight int
	// ReadRatio is the mixed workload's fraction of gets (0 for the others,
	// and for results that did not record it).
	ReadRatio float64
	// Rate is the calls a second both servers were offered on a fixed
	// schedule (SeriesLatency); 0 for closed loops.
	Rate float64
	Both[Figures]
}

// MemoryFigures are a server's memory with Znodes znodes.
type MemoryFigures struct {
	Znodes int64
	// Idle is the RSS of the fresh server; RSS after populating Znodes znodes
	// and a quiet period; PerZnode is (RSS - Idle) / Znodes per repetition.
	// For an ensemble they are sums over the members, and MaxMember is the
	// largest member's RSS with the znodes.
	Idle, RSS, PerZnode Stat
	MaxMember           Stat
	// PopulateRate is the populate run's znodes per second.
	PopulateRate Stat
	// SettleS is the quiet period before RSS was read, in seconds.
	SettleS float64
}

// RestartFigures are a server's restarts with Znodes znodes.
type RestartFigures struct {
	Znodes                       int64
	Serving, Read                Stat // seconds from the process start
	DataDir, RSSBefore, RSSAfter Stat // bytes
	PopulateRate                 Stat // znodes per second while populating
}

// FailoverFigures are a server's leader failovers (seconds from the kill).
type FailoverFigures struct {
	// Leader: until a surviving member answered srvr as leader; FirstWrite:
	// until the first write issued after the kill was acknowledged;
	// AllWriters: until every writer had one; Rejoin: from the killed
	// member's restart until it served again. Failed repetitions (and
	// figures of -1, not reached) are left out.
	Leader, FirstWrite, AllWriters, Rejoin Stat
	// WritersOnLeader is how many writers were connected to the leader
	// when it was killed; FailedWrites the writes issued after the kill
	// that failed, per repetition.
	WritersOnLeader, FailedWrites Stat
	Writers                       int
	SessionTimeoutS               float64
	Failed                        int
}

// ModeSummary is everything measured in one mode (standalone, ...).
type ModeSummary struct {
	Mode string
	// Header is the header the mode's first record follows; Members the
	// servers of each kind (1 standalone, 3 for an ensemble).
	Header  Header
	Members int
	// Commands are the script's command lines of every run whose records
	// the mode holds, in file order.
	Commands []string
	// Load1 is the 1-minute load average before each of the mode's runs.
	Load1 Stat
	// Workloads are the runs of SeriesWorkload, in order of first
	// appearance; Latency those of SeriesLatency, likewise; Clients those of
	// SeriesClients, by workload (in order of first appearance) and then by
	// sessions.
	Workloads, Latency, Clients []Pair
	// LatencyLoad is the latency phase's load, as a fraction of
	// ZooKeeper's closed-loop rate, from the header its runs follow (0 if
	// unknown).
	LatencyLoad float64
	Memory      *Both[MemoryFigures]   // nil without a memory phase
	Restart     *Both[RestartFigures]  // nil without a restart phase
	Failover    *Both[FailoverFigures] // nil without a failover phase
}

// Summary is a results file, aggregated.
type Summary struct {
	Header Header
	// Headers are every run's headers, in file order.
	Headers []Header
	Modes   []ModeSummary
	// Load1 is the 1-minute load average before each run.
	Load1 Stat
	// Failed lists the failed bench runs; WithErrors the others whose
	// measured window counted errors; FailedFailovers the failover
	// measurements that failed.
	Failed, WithErrors []Run
	FailedFailovers    []Failover
}

// Summarize aggregates d: per mode, series, workload and client count, the
// median and range of each figure over the repetitions, per server.
func Summarize(d *Data) *Summary {
	s := &Summary{Header: d.Header, Headers: d.Headers}
	var loads []float64
	var modes []string
	addMode := func(m string) {
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	for _, r := range d.Runs {
		addMode(r.Mode)
		loads = append(loads, r.Load1)
		switch {
		case r.Failed:
			s.Failed = append(s.Failed, r)
		case r.Errors > 0:
			s.WithErrors = append(s.WithErrors, r)
		}
	}
	for _, m := range d.Memory {
		addMode(m.Mode)
	}
	for _, r := range d.Restarts {
		addMode(r.Mode)
		loads = append(loads, r.Load1)
	}
	for _, f := range d.Failovers {
		addMode(f.Mode)
		loads = append(loads, f.Load1)
		if f.Failed {
			s.FailedFailovers = append(s.FailedFailovers, f)
		}
	}
	s.Load1 = NewStat(loads)
	for _, m := range modes {
		s.Modes = append(s.Modes, summarizeMode(d, m))
	}
	return s
}

func summarizeMode(d *Data, mode string) ModeSummary {
	ms := ModeSummary{Mode: mode}
	var runs []Run
	var loads []float64
	first := -1 // file order is header order, so the lowest index is the first record's
	var seen []int
	see := func(h int) {
		if first < 0 || h < first {
			first = h
		}
		if !slices.Contains(seen, h) {
			seen = append(seen, h)
		}
	}
	for _, r := range d.Runs {
		if r.Mode == mode {
			runs = append(runs, r)
			loads = append(loads, r.Load1)
			see(r.Header)
			ms.Members = max(ms.Members, len(r.ServerProcs))
		}
	}
	for _, m := range d.Memory {
		if m.Mode == mode {
			see(m.Header)
			ms.Members = max(ms.Members, m.Members)
		}
	}
	for _, r := range d.Restarts {
		if r.Mode == mode {
			loads = append(loads, r.Load1)
			see(r.Header)
		}
	}
	for _, f := range d.Failovers {
		if f.Mode == mode {
			loads = append(loads, f.Load1)
			see(f.Header)
			ms.Members = max(ms.Members, f.Members)
		}
	}
	if first >= 0 && first < len(d.Headers) {
		ms.Header = d.Headers[first]
	} else {
		ms.Header = d.Header
	}
	slices.Sort(seen)
	for _, h := range seen {
		if h >= 0 && h < len(d.Headers) && !slices.Contains(ms.Commands, d.Headers[h].Command) {
			ms.Commands = append(ms.Commands, d.Headers[h].Command)
		}
	}
	if len(ms.Commands) == 0 {
		ms.Commands = []string{ms.Header.Command}
	}
	if ms.Header.Members > 0 {
		ms.Members = ms.Header.Members
	}
	ms.Members = max(ms.Members, 1)
	ms.Load1 = NewStat(loads)
	ms.Workloads = pairs(runs, SeriesWorkload)
	ms.Latency = pairs(runs, SeriesLatency)
	for _, r := range runs {
		if r.Series == SeriesLatency && r.Header >= 0 && r.Header < len(d.Headers) && ms.LatencyLoad == 0 {
			ms.LatencyLoad = d.Headers[r.Header].Settings.LatencyLoad
		}
	}
	ms.Clients = pairs(runs, SeriesClients)
	slices.SortStableFunc(ms.Clients, func(a, b Pair) int {
		return cmp.Or(cmp.Compare(firstIndex(ms.Clients, a.Workload), firstIndex(ms.Clients, b.Workload)),
			cmp.Compare(a.Sessions, b.Sessions))
	})
	ms.Memory = memory(d, runs, mode)
	ms.Restart = restart(d, runs, mode)
	ms.Failover = failover(d, mode)
	return ms
}

func firstIndex(ps []Pair, workload string) int {
	return slices.IndexFunc(ps, func(p Pair) bool { return p.Workload == workload })
}

// pairs groups the runs of one series by workload, sessions, inflight and
// offered rate.
func pairs(runs []Run, series string) []Pair {
	type key struct {
		workload           string
		sessions, inflight int
		rate               float64
	}
	var keys []key
	groups := map[key]*Both[[]Run]{}
	ratios := map[key]float64{}
	for _, r := range runs {
		if r.Series != series {
			continue
		}
		k := key{r.Workload, r.Sessions, r.Inflight, r.Rate}
		if r.ReadRatio != nil {
			ratios[k] = *r.ReadRatio
		}
		g := groups[k]
		if g == nil {
			g = &Both[[]Run]{}
			groups[k] = g
			keys = append(keys, k)
		}
		if r.Server == ZooKeeper {
			g.ZK = append(g.ZK, r)
		} else {
			g.PD = append(g.PD, r)
		}
	}
	out := make([]Pair, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		out = append(out, Pair{
			Workload: k.workload, Sessions: k.sessions, Inflight: k.inflight,
			ReadRatio: ratios[k], Rate: k.rate,
			Both: Both[Figures]{ZK: figures(g.ZK), PD: figures(g.PD)},
		})
	}
	return out
}

// figures aggregates one server's runs of one group, leaving out failed runs.
func figures(runs []Run) Figures {
	var f Figures
	var ops, p50, p90, p99, p999, cpu, rss, maxMember, p99LessLate, lateP99 []float64
	for _, r := range runs {
		if r.Failed {
			f.Failed++
			continue
		}
		f.Errors += r.Errors
		ops = append(ops, r.OpsPerS)
		if r.Ops > 0 {
			// A run that completed no call (a stalled server) has a rate
			// of 0 but no latencies and no CPU per op: its zeros would
			// pull the medians down.
			p50 = append(p50, float64(r.Latency.P50))
			p90 = append(p90, float64(r.Latency.P90))
			p99 = append(p99, float64(r.Latency.P99))
			p999 = append(p999, float64(r.Latency.P999))
			if r.ServerCPUUsPerOp != nil {
				cpu = append(cpu, *r.ServerCPUUsPerOp)
			}
			if r.LatencyLessSendLate != nil {
				p99LessLate = append(p99LessLate, float64(r.LatencyLessSendLate.P99))
			}
			if r.SendLate != nil {
				lateP99 = append(lateP99, float64(r.SendLate.P99))
			}
		}
		if r.ServerRSSBytes != nil {
			rss = append(rss, float64(*r.ServerRSSBytes))
		}
		if len(r.ServerProcs) > 0 {
			var m int64
			for _, p := range r.ServerProcs {
				m = max(m, p.RSSBytes)
			}
			maxMember = append(maxMember, float64(m))
		}
	}
	f.OpsPerS, f.P50, f.P90, f.P99, f.P999 = NewStat(ops), NewStat(p50), NewStat(p90), NewStat(p99), NewStat(p999)
	f.CPUPerOp, f.RSS, f.MaxMemberRSS = NewStat(cpu), NewStat(rss), NewStat(maxMember)
	f.P99LessSendLate, f.SendLateP99 = NewStat(p99LessLate), NewStat(lateP99)
	return f
}

// populateRates returns, per server, the rates of the series' successful
// populate runs.
func populateRates(runs []Run, series string) Both[Stat] {
	var zk, pd []float64
	for _, r := range runs {
		if r.Series != series || r.Failed {
			continue
		}
		if r.Server == ZooKeeper {
			zk = append(zk, r.OpsPerS)
		} else {
			pd = append(pd, r.OpsPerS)
		}
	}
	return Both[Stat]{ZK: NewStat(zk), PD: NewStat(pd)}
}

func memory(d *Data, runs []Run, mode string) *Both[MemoryFigures] {
	var ms Both[[]Memory]
	for _, m := range d.Memory {
		if m.Mode != mode {
			continue
		}
		if m.Server == ZooKeeper {
			ms.ZK = append(ms.ZK, m)
		} else {
			ms.PD = append(ms.PD, m)
		}
	}
	if len(ms.ZK)+len(ms.PD) == 0 {
		return nil
	}
	rates := populateRates(runs, SeriesMemory)
	agg := func(list []Memory, rate Stat) MemoryFigures {
		var f MemoryFigures
		var idle, rss, per, maxMember []float64
		for _, m := range list {
			f.Znodes, f.SettleS = m.Znodes, m.SettleS
			idle = append(idle, float64(m.IdleRSSBytes))
			rss = append(rss, float64(m.RSSBytes))
			if m.Znodes > 0 {
				per = append(per, float64(m.RSSBytes-m.IdleRSSBytes)/float64(m.Znodes))
			}
			if len(m.MemberRSSBytes) > 0 {
				maxMember = append(maxMember, float64(slices.Max(m.MemberRSSBytes)))
			}
		}
		f.Idle, f.RSS, f.PerZnode, f.PopulateRate = NewStat(idle), NewStat(rss), NewStat(per), rate
		f.MaxMember = NewStat(maxMember)
		return f
	}
	return &Both[MemoryFigures]{ZK: agg(ms.ZK, rates.ZK), PD: agg(ms.PD, rates.PD)}
}

func restart(d *Data, runs []Run, mode string) *Both[RestartFigures] {
	var rs Both[[]Restart]
	for _, r := range d.Restarts {
		if r.Mode != mode {
			continue
		}
		if r.Server == ZooKeeper {
			rs.ZK = append(rs.ZK, r)
		} else {
			rs.PD = append(rs.PD, r)
		}
	}
	if len(rs.ZK)+len(rs.PD) == 0 {
		return nil
	}
	rates := populateRates(runs, SeriesRestartPopulate)
	agg := func(list []Restart, rate Stat) RestartFigures {
		var f RestartFigures
		var serving, read, data, before, after []float64
		for _, r := range list {
			f.Znodes = r.Znodes
			serving = append(serving, r.ServingS)
			read = append(read, r.ReadS)
			data = append(data, float64(r.DataDirBytes))
			before = append(before, float64(r.RSSBeforeBytes))
			after = append(after, float64(r.RSSAfterBytes))
		}
		f.Serving, f.Read, f.DataDir = NewStat(serving), NewStat(read), NewStat(data)
		f.RSSBefore, f.RSSAfter, f.PopulateRate = NewStat(before), NewStat(after), rate
		return f
	}
	return &Both[RestartFigures]{ZK: agg(rs.ZK, rates.ZK), PD: agg(rs.PD, rates.PD)}
}

func failover(d *Data, mode string) *Both[FailoverFigures] {
	var fs Both[[]Failover]
	for _, f := range d.Failovers {
		if f.Mode != mode {
			continue
		}
		if f.Server == ZooKeeper {
			fs.ZK = append(fs.ZK, f)
		} else {
			fs.PD = append(fs.PD, f)
		}
	}
	if len(fs.ZK)+len(fs.PD) == 0 {
		return nil
	}
	agg := func(list []Failover) FailoverFigures {
		var out FailoverFigures
		var leader, first, all, rejoin, onLeader, failed []float64
		reached := func(xs *[]float64, v float64) {
			if v >= 0 {
				*xs = append(*xs, v)
			}
		}
		for _, f := range list {
			if f.Writers > 0 {
				out.Writers, out.SessionTimeoutS = f.Writers, f.SessionTimeoutS
			}
			if f.Failed {
				out.Failed++
				continue
			}
			if f.RejoinS != nil {
				rejoin = append(rejoin, *f.RejoinS)
			}
			reached(&leader, f.LeaderS)
			reached(&first, f.FirstWriteS)
			reached(&all, f.AllWritersS)
			onLeader = append(onLeader, float64(f.WritersOnLeader))
			var n int64
			for _, c := range f.ErrorsAfterKill {
				n += c
			}
			failed = append(failed, float64(n))
		}
		out.Leader, out.FirstWrite, out.AllWriters, out.Rejoin = NewStat(leader), NewStat(first), NewStat(all), NewStat(rejoin)
		out.WritersOnLeader, out.FailedWrites = NewStat(onLeader), NewStat(failed)
		return out
	}
	return &Both[FailoverFigures]{ZK: agg(fs.ZK), PD: agg(fs.PD)}
}
