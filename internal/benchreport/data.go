package benchreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/paddockhq/paddock/internal/bench"
)

// Server names as the script writes them.
const (
	ZooKeeper = "zookeeper"
	Paddock   = "paddock"
)

// Series of bench records.
const (
	SeriesWorkload        = "workload"         // every workload at SESSIONS x INFLIGHT
	SeriesLatency         = "latency"          // workloads at the same offered rate on both kinds
	SeriesClients         = "clients"          // get and set by client count
	SeriesMemory          = "memory"           // the populate run of the memory phase
	SeriesRestartPopulate = "restart-populate" // the populate run before the restarts
)

// Modes of the script's runs.
const (
	ModeStandalone = "standalone"
	ModeEnsemble   = "ensemble"
)

// Header describes the machine, the software and the settings of a run of
// the script. The script writes one per mode it measures; the records after
// a header, until the next, belong to it.
type Header struct {
	Date    string `json:"date"`
	Command string `json:"command"`
	// Mode and Members say what the records after the header measured
	// (empty and 0 in results written before ensembles were measured).
	Mode             string   `json:"mode"`
	Members          int      `json:"members"`
	Nproc            int      `json:"nproc"`
	CPUModel         string   `json:"cpu_model"`
	MemBytes         int64    `json:"mem_bytes"`
	Kernel           string   `json:"kernel"`
	Load1            float64  `json:"load1"`
	ZooKeeperVersion string   `json:"zookeeper_version"`
	ZooKeeperPackage string   `json:"zookeeper_package"`
	Java             string   `json:"java"`
	ZKJVMFlags       string   `json:"zk_jvm_flags"`
	PaddockVersion   string   `json:"paddock_version"`
	PaddockRevision  string   `json:"paddock_revision"`
	PaddockModified  bool     `json:"paddock_modified"`
	Go               string   `json:"go"`
	Settings         Settings `json:"settings"`
}

// Settings are the script's knobs as they were for the run.
type Settings struct {
	Duration  string `json:"duration"`
	Warmup    string `json:"warmup"`
	Reps      int    `json:"reps"`
	Sessions  int    `json:"sessions"`
	Inflight  int    `json:"inflight"`
	Workloads string `json:"workloads"`
	// LatencyWorkloads and LatencyLoad are the latency phase's workloads
	// and its load, a fraction of ZooKeeper's closed-loop rate.
	LatencyWorkloads string  `json:"latency_workloads"`
	LatencyLoad      float64 `json:"latency_load"`
	ClientCounts     string  `json:"client_counts"`
	ClientInflight   int     `json:"client_inflight"`
	ClientWorkloads  string  `json:"client_workloads"`
	Znodes           int64   `json:"znodes"`
	MemZnodes        int64   `json:"mem_znodes"`
	MemSettleS       float64 `json:"mem_settle_s"`
	Prewarm          string  `json:"prewarm"`
	PrewarmEach      string  `json:"prewarm_each"` // of each other workload; absent in older results
	TickTime         int     `json:"tick_time"`
	Modes            string  `json:"modes"`
	Phases           string  `json:"phases"`
	FailoverWriters  int     `json:"failover_writers"`
	FailoverWarmup   string  `json:"failover_warmup"`
}

// Run is one paddock bench run: its result and where it belongs.
type Run struct {
	Series string  `json:"series"`
	Server string  `json:"server"`
	Rep    int     `json:"rep"`
	Mode   string  `json:"mode"`
	Load1  float64 `json:"load1"`
	// Failed says paddock bench exited with an error; Args and Error are
	// set when it printed no result at all.
	Failed bool   `json:"failed"`
	Args   string `json:"args"`
	Error  string `json:"error"`
	bench.Result
	// Header is the index in Data.Headers of the header the run follows.
	Header int `json:"-"`
}

// Memory is the RSS of a fresh server, idle and holding Znodes znodes. For
// an ensemble IdleRSSBytes and RSSBytes are the members' sums, and the
// Member fields have each member's.
type Memory struct {
	Server       string  `json:"server"`
	Rep          int     `json:"rep"`
	Mode         string  `json:"mode"`
	Znodes       int64   `json:"znodes"`
	IdleRSSBytes int64   `json:"idle_rss_bytes"`
	RSSBytes     int64   `json:"rss_bytes"`
	SettleS      float64 `json:"settle_s"`

	Members            int     `json:"members"`
	MemberIdleRSSBytes []int64 `json:"member_idle_rss_bytes"`
	MemberRSSBytes     []int64 `json:"member_rss_bytes"`
	Header             int     `json:"-"`
}

// Restart is one kill -9 and restart of a server holding Znodes znodes.
type Restart struct {
	Server string `json:"server"`
	Rep    int    `json:"rep"`
	Mode   string `json:"mode"`
	Znodes int64  `json:"znodes"`
	// ServingS is the time from the new process's start until it answered
	// "srvr" with its mode; ReadS until a paddock bench get of one call
	// had succeeded.
	ServingS       float64 `json:"serving_s"`
	ReadS          float64 `json:"read_s"`
	RSSBeforeBytes int64   `json:"rss_before_bytes"`
	RSSAfterBytes  int64   `json:"rss_after_bytes"`
	DataDirBytes   int64   `json:"data_dir_bytes"`
	Load1          float64 `json:"load1"`
	Header         int     `json:"-"`
}

// Failover is one kill -9 of an ensemble's leader under write load
// (scripts/failover), then the restart of the killed member. Times are in
// seconds from just before the kill; -1 means it did not happen within the
// program's timeout.
type Failover struct {
	Server string  `json:"server"`
	Rep    int     `json:"rep"`
	Mode   string  `json:"mode"`
	Load1  float64 `json:"load1"`
	Failed bool    `json:"failed"`
	Error  string  `json:"error"`

	Members         int     `json:"members"`
	Writers         int     `json:"writers"`
	SessionTimeoutS float64 `json:"session_timeout_s"`
	KilledMember    int     `json:"killed_member"`
	WritersOnLeader int     `json:"writers_on_leader"`
	Recovered       bool    `json:"recovered"`
	NewLeaderMember int     `json:"new_leader_member"`
	// LeaderS is the time until a surviving member answered srvr as leader;
	// FirstWriteS until the first write issued after the kill was
	// acknowledged; AllWritersS until every writer had one acknowledged.
	LeaderS         float64          `json:"leader_s"`
	FirstWriteS     float64          `json:"first_write_s"`
	AllWritersS     float64          `json:"all_writers_s"`
	WritesAfterKill int64            `json:"writes_after_kill"`
	ErrorsAfterKill map[string]int64 `json:"errors_after_kill"`
	// RejoinS is the time from the killed member's new process start until
	// it answered srvr with its mode; nil when it was not restarted.
	RejoinS *float64 `json:"rejoin_s"`
	Header  int      `json:"-"`
}

// Data is everything one results file holds, in file order.
type Data struct {
	// Header is the first header; Headers all of them, in file order.
	Header    Header
	Headers   []Header
	Runs      []Run
	Memory    []Memory
	Restarts  []Restart
	Failovers []Failover
}

// maxLine bounds one JSON line; a bench result is a few hundred bytes.
const maxLine = 1 << 20

// Read parses a results file: a header first, then records, and possibly
// further headers (one per mode the script measured, or per run appended to
// the file), each followed by its records. Blank lines are skipped; an
// unknown record type is an error.
func Read(r io.Reader) (*Data, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var (
		d         Data
		sawHeader bool
		line      int
	)
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &kind); err != nil {
			return nil, fmt.Errorf("benchreport: line %d: %w", line, err)
		}
		if kind.Type != "header" && !sawHeader {
			return nil, fmt.Errorf("benchreport: line %d: a %q record before the header", line, kind.Type)
		}
		var err error
		hdr := len(d.Headers) - 1
		switch kind.Type {
		case "header":
			var h Header
			if err = json.Unmarshal(b, &h); err == nil {
				if !sawHeader {
					d.Header = h
				}
				sawHeader = true
				d.Headers = append(d.Headers, h)
			}
		case "bench":
			var run Run
			if err = json.Unmarshal(b, &run); err == nil {
				err = checkServer(run.Server)
				run.Header = hdr
				d.Runs = append(d.Runs, run)
			}
		case "memory":
			var m Memory
			if err = json.Unmarshal(b, &m); err == nil {
				err = checkServer(m.Server)
				m.Header = hdr
				d.Memory = append(d.Memory, m)
			}
		case "restart":
			var rs Restart
			if err = json.Unmarshal(b, &rs); err == nil {
				err = checkServer(rs.Server)
				rs.Header = hdr
				d.Restarts = append(d.Restarts, rs)
			}
		case "failover":
			var f Failover
			if err = json.Unmarshal(b, &f); err == nil {
				err = checkServer(f.Server)
				f.Header = hdr
				d.Failovers = append(d.Failovers, f)
			}
		default:
			err = fmt.Errorf("unknown record type %q", kind.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("benchreport: line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("benchreport: line %d: %w", line+1, err)
	}
	if !sawHeader {
		return nil, errors.New("benchreport: no header record")
	}
	return &d, nil
}

func checkServer(s string) error {
	if s != ZooKeeper && s != Paddock {
		return fmt.Errorf("unknown server %q (want %q or %q)", s, ZooKeeper, Paddock)
	}
	return nil
}
