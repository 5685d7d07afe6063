package server

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/watch"
)

var opAbbrevs = map[proto.OpCode]string{
	proto.OpPing: "PING", proto.OpCreateSession: "SESS", proto.OpCloseSession: "CLOS",
	proto.OpMulti: "MULT", proto.OpMultiRead: "MLTR", proto.OpCreate: "CREA", proto.OpCreate2: "CREA",
	proto.OpCreateTTL: "CREA", proto.OpCreateContainer: "CREA", proto.OpDelete: "DELE",
	proto.OpDeleteContainer: "DELE", proto.OpSetData: "SETD", proto.OpSetACL: "SETA",
	proto.OpCheck: "CHEC", proto.OpSync: "SYNC", proto.OpExists: "EXIS", proto.OpGetData: "GETD",
	proto.OpSetWatches: "SETW", proto.OpSetWatches2: "STW2", proto.OpAddWatch: "ADDW",
	proto.OpGetACL: "GETA", proto.OpGetChildren: "GETC", proto.OpGetChildren2: "GETC",
	proto.OpGetAllChildrenNumber: "GETACN", proto.OpCheckWatches: "CHKW",
	proto.OpRemoveWatches: "REMW", proto.OpGetEphemerals: "GETE", proto.OpWhoAmI: "HOMI",
	proto.OpAuth: "AUTH",
}

// opAbbrev is the short op name ZooKeeper shows as lop= in cons.
func opAbbrev(op proto.OpCode) string {
	if s, ok := opAbbrevs[op]; ok {
		return s
	}
	return "NA"
}

// fourLetterWord answers a four-letter-word command and closes the
// connection, as ZooKeeper does on the client port.
func (s *Server) fourLetterWord(c *conn, cmd string, r *bufio.Reader) {
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	var out string
	switch {
	case !s.cfg.FourLetterWords.Allowed(cmd):
		out = cmd + " is not executed because it is not in the whitelist.\n"
	default:
		out = s.runFourLetterWord(cmd, r)
	}
	io.WriteString(c.nc, out)
}

func (s *Server) runFourLetterWord(cmd string, r *bufio.Reader) string {
	var b strings.Builder
	switch cmd {
	case "ruok":
		return "imok"
	case "srvr":
		s.writeServerStats(&b, false)
	case "stat":
		s.writeServerStats(&b, true)
	case "conf":
		s.writeConf(&b)
	case "cons":
		for _, c := range s.connections() {
			c.writeCons(&b)
		}
		b.WriteString("\n")
	case "crst":
		for _, c := range s.connections() {
			c.stats.reset()
		}
		return "Connection stats reset.\n"
	case "srst":
		s.stats.reset()
		return "Server stats reset.\n"
	case "envi":
		s.writeEnv(&b)
	case "mntr":
		s.writeMntr(&b)
	case "wchs":
		watchers, paths, total := s.watches.Summary()
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n", watchers, paths, total)
	case "wchc":
		s.watches.ByWatcher(func(w watch.Watcher, paths []string) {
			fmt.Fprintf(&b, "0x%x\n", w.(*conn).sessionID)
			for _, p := range sortedCopy(paths) {
				fmt.Fprintf(&b, "\t%s\n", p)
			}
		})
		b.WriteString("\n")
	case "wchp":
		s.watches.ByPath(func(path string, ws []watch.Watcher) {
			fmt.Fprintf(&b, "%s\n", path)
			for _, w := range ws {
				fmt.Fprintf(&b, "\t0x%x\n", w.(*conn).sessionID)
			}
		})
		b.WriteString("\n")
	case "dump":
		s.writeDump(&b)
	case "isro":
		return "rw"
	case "dirs":
		fmt.Fprintf(&b, "datadir_size: %d\nlogdir_size: %d\n", dirSize(s.cfg.DataDir), dirSize(s.cfg.DataLogDir))
	case "gtmk":
		return "0"
	case "stmk":
		var mask [8]byte
		io.ReadFull(r, mask[:])
		return "0"
	case "hash":
		return "\n"
	}
	return b.String()
}

func (s *Server) mode() string { return "standalone" }

func (s *Server) writeServerStats(b *strings.Builder, clients bool) {
	fmt.Fprintf(b, "Zookeeper version: %s, built for Paddock\n", Version)
	if clients {
		b.WriteString("Clients:\n")
		for _, c := range s.connections() {
			fmt.Fprintf(b, " %s[1](queued=%d,recved=%d,sent=%d)\n", "/"+c.remote,
				len(c.items), c.stats.received.Load(), c.stats.sent.Load())
		}
		b.WriteString("\n")
	}
	min, avg, max, _ := s.stats.latency.get()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%.4f/%d\n", min, avg, max)
	fmt.Fprintf(b, "Received: %d\n", s.stats.received.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.stats.sent.Load())
	fmt.Fprintf(b, "Connections: %d\n", len(s.connections()))
	fmt.Fprintf(b, "Outstanding: %d\n", len(s.outstanding))
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.lastZxid())
	fmt.Fprintf(b, "Mode: %s\n", s.mode())
	fmt.Fprintf(b, "Node count: %d\n", s.nodeCount())
}

func (s *Server) writeConf(b *strings.Builder) {
	fmt.Fprintf(b, "clientPort=%d\n", s.cfg.ClientPort)
	fmt.Fprintf(b, "secureClientPort=-1\n")
	fmt.Fprintf(b, "dataDir=%s\n", s.cfg.DataDir)
	fmt.Fprintf(b, "dataDirSize=%d\n", dirSize(s.cfg.DataDir))
	fmt.Fprintf(b, "dataLogDir=%s\n", s.cfg.DataLogDir)
	fmt.Fprintf(b, "dataLogSize=%d\n", dirSize(s.cfg.DataLogDir))
	fmt.Fprintf(b, "tickTime=%d\n", s.cfg.TickTime.Milliseconds())
	fmt.Fprintf(b, "maxClientCnxns=%d\n", s.cfg.MaxClientCnxns)
	fmt.Fprintf(b, "minSessionTimeout=%d\n", s.cfg.MinSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "maxSessionTimeout=%d\n", s.cfg.MaxSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "clientPortListenBacklog=-1\n")
	fmt.Fprintf(b, "serverId=%d\n", s.cfg.ServerID)
}

func (c *conn) writeCons(b *strings.Builder) {
	cs := &c.stats
	min, avg, max, _ := cs.latency.get()
	cs.mu.Lock()
	lop, lcxid, lresp, llat := cs.lastOp, cs.lastCxid, cs.lastResp, cs.lastLatency
	cs.mu.Unlock()
	if lop == "" {
		lop = "NA"
	}
	fmt.Fprintf(b, " /%s[1](queued=%d,recved=%d,sent=%d,sid=0x%x,lop=%s,est=%d,to=%d,lcxid=0x%x,lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%.0f,maxlat=%d)\n",
		c.remote, len(c.items), cs.received.Load(), cs.sent.Load(), c.sessionID, lop,
		cs.established.UnixMilli(), c.timeout, lcxid, c.s.lastZxid(), lresp.UnixMilli(), llat, min, avg, max)
}

func (s *Server) writeEnv(b *strings.Builder) {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	b.WriteString("Environment:\n")
	fmt.Fprintf(b, "zookeeper.version=%s, built for Paddock\n", Version)
	fmt.Fprintf(b, "host.name=%s\n", host)
	fmt.Fprintf(b, "go.version=%s\n", runtime.Version())
	fmt.Fprintf(b, "os.name=%s\n", runtime.GOOS)
	fmt.Fprintf(b, "os.arch=%s\n", runtime.GOARCH)
	fmt.Fprintf(b, "user.dir=%s\n", wd)
	fmt.Fprintf(b, "os.memory.free=%dMB\n", 0)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(b, "os.memory.total=%dMB\n", ms.Sys>>20)
}

func (s *Server) writeMntr(b *strings.Builder) {
	min, avg, max, _ := s.stats.latency.get()
	watchers, _, total := s.watches.Summary()
	_ = watchers
	s.mu.RLock()
	t := s.fsm.Tree()
	nodes, ephemerals, dataSize := t.NodeCount(), t.EphemeralCount(), t.DataSize()
	sessions := len(s.fsm.Sessions())
	s.mu.RUnlock()
	kv := [][2]any{
		{"zk_version", Version + ", built for Paddock"},
		{"zk_server_state", s.mode()},
		{"zk_avg_latency", fmt.Sprintf("%.4f", avg)},
		{"zk_max_latency", max},
		{"zk_min_latency", min},
		{"zk_packets_received", s.stats.received.Load()},
		{"zk_packets_sent", s.stats.sent.Load()},
		{"zk_num_alive_connections", len(s.connections())},
		{"zk_outstanding_requests", len(s.outstanding)},
		{"zk_znode_count", nodes},
		{"zk_watch_count", total},
		{"zk_ephemerals_count", ephemerals},
		{"zk_approximate_data_size", dataSize},
		{"zk_open_file_descriptor_count", openFDs()},
		{"zk_max_file_descriptor_count", maxFDs()},
		{"zk_global_sessions", sessions},
		{"zk_local_sessions", 0},
		{"zk_uptime", time.Since(s.started).Milliseconds()},
	}
	for _, p := range kv {
		fmt.Fprintf(b, "%s\t%v\n", p[0], p[1])
	}
}

func (s *Server) writeDump(b *strings.Builder) {
	buckets := s.tracker.Snapshot()
	total := 0
	times := make([]time.Time, 0, len(buckets))
	for t, ids := range buckets {
		times = append(times, t)
		total += len(ids)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	b.WriteString("SessionTracker dump:\n")
	fmt.Fprintf(b, "Session Sets (%d)/(%d):\n", len(times), total)
	for _, t := range times {
		ids := buckets[t]
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		fmt.Fprintf(b, "%d expire at %s:\n", len(ids), t.Format("Mon Jan 02 15:04:05 MST 2006"))
		for _, id := range ids {
			fmt.Fprintf(b, "\t0x%x\n", id)
		}
	}
	s.mu.RLock()
	t := s.fsm.Tree()
	owners := t.EphemeralSessions()
	fmt.Fprintf(b, "ephemeral nodes dump:\nSessions with Ephemerals (%d):\n", len(owners))
	for _, id := range owners {
		fmt.Fprintf(b, "0x%x:\n", id)
		for _, p := range t.Ephemerals(id) {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	s.mu.RUnlock()
	b.WriteString("Connections with Ephemerals (0):\n")
}

func dirSize(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
