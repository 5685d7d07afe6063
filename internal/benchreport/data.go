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
	SeriesClients         = "clients"          // get and set by client count
	SeriesMemory          = "memory"           // the populate run of the memory phase
	SeriesRestartPopulate = "restart-populate" // the populate run before the restarts
)

// Header describes the machine, the software and the settings of a run of
// the script.
type Header struct {
	Date             string   `json:"date"`
	Command          string   `json:"command"`
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
	Duration        string  `json:"duration"`
	Warmup          string  `json:"warmup"`
	Reps            int     `json:"reps"`
	Sessions        int     `json:"sessions"`
	Inflight        int     `json:"inflight"`
	Workloads       string  `json:"workloads"`
	ClientCounts    string  `json:"client_counts"`
	ClientInflight  int     `json:"client_inflight"`
	ClientWorkloads string  `json:"client_workloads"`
	Znodes          int64   `json:"znodes"`
	MemZnodes       int64   `json:"mem_znodes"`
	MemSettleS      float64 `json:"mem_settle_s"`
	Prewarm         string  `json:"prewarm"`
	TickTime        int     `json:"tick_time"`
	Modes           string  `json:"modes"`
	Phases          string  `json:"phases"`
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
}

// Memory is the RSS of a fresh server, idle and holding Znodes znodes.
type Memory struct {
	Server       string  `json:"server"`
	Rep          int     `json:"rep"`
	Mode         string  `json:"mode"`
	Znodes       int64   `json:"znodes"`
	IdleRSSBytes int64   `json:"idle_rss_bytes"`
	RSSBytes     int64   `json:"rss_bytes"`
	SettleS      float64 `json:"settle_s"`
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
}

// Data is everything one results file holds, in file order.
type Data struct {
	Header   Header
	Runs     []Run
	Memory   []Memory
	Restarts []Restart
}

// maxLine bounds one JSON line; a bench result is a few hundred bytes.
const maxLine = 1 << 20

// Read parses a results file. It needs exactly one header, first; blank
// lines are skipped; an unknown record type is an error.
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
		switch kind.Type {
		case "header":
			if sawHeader {
				return nil, fmt.Errorf("benchreport: line %d: a second header", line)
			}
			sawHeader = true
			err = json.Unmarshal(b, &d.Header)
		case "bench":
			var run Run
			if err = json.Unmarshal(b, &run); err == nil {
				err = checkServer(run.Server)
				d.Runs = append(d.Runs, run)
			}
		case "memory":
			var m Memory
			if err = json.Unmarshal(b, &m); err == nil {
				err = checkServer(m.Server)
				d.Memory = append(d.Memory, m)
			}
		case "restart":
			var rs Restart
			if err = json.Unmarshal(b, &rs); err == nil {
				err = checkServer(rs.Server)
				d.Restarts = append(d.Restarts, rs)
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
