package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/paddockhq/paddock/internal/javatime"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/raftnode"
	"github.com/paddockhq/paddock/internal/watch"
)

// Four-letter words answer as Apache ZooKeeper 3.8 (standalone, NIO) does,
// line for line, so that scripts and monitoring tools parsing its output work
// unchanged. Deliberate differences, each for a client that parses strictly:
//
//   - the version's build date uses ZooKeeper 3.4's "MM/dd/yyyy HH:mm UTC"
//     layout, which go-zookeeper's FLWSrvr requires (it cannot parse 3.5+'s
//     "yyyy-MM-dd HH:mm UTC");
//   - cons prints every connection with the full set of fields, lcxid
//     included: ZooKeeper prints only queued/recved/sent for a connection
//     without a session (such as the one asking) and drops lcxid after a
//     reset, and go-zookeeper's FLWCons rejects both;
//   - envi reports the Go runtime (go.version) instead of the java.* keys;
//   - conf's dataDir and dataLogDir are the configured directories, where
//     ZooKeeper prints the directories of its snapshots and transaction
//     logs, <dir>/version-2: Paddock has no version-2 directory (its
//     snapshots and log are in the snap and wal subdirectories, in its own
//     format), and dataDirSize and dataLogSize are the sizes of what the
//     printed directories hold.
//
// mntr prints ZooKeeper's server gauges that Paddock has a value for, in
// ZooKeeper's order (see mntrKeys); ZooKeeper's pipeline counters and
// summaries (zk_*_latency splits, processor queues, fsync times…) have no
// Paddock equivalent and are left out.

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
// connection, as ZooKeeper does on the client port. Like ZooKeeper, it
// counts the command as a packet received (before answering, so srvr
// includes itself) and the answer as the packets ZooKeeper's NIO server
// writes it in (fourLetterPackets), after answering.
func (s *Server) fourLetterWord(c *conn, cmd string, r *bufio.Reader) {
	c.stats.received.Add(1)
	s.stats.received.Add(1)
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	var out string
	switch {
	case !s.cfg.FourLetterWords.Allowed(cmd):
		out = cmd + " is not executed because it is not in the whitelist.\n"
	case !s.serving.Load() && needsServing(cmd):
		out = notServing
		if cmd == "hash" {
			// DigestCommand prints it without println's newline.
			out = strings.TrimSuffix(notServing, "\n")
		}
	default:
		out = s.runFourLetterWord(cmd, r)
	}
	io.WriteString(c.nc, out)
	n := fourLetterPackets(out)
	c.stats.sent.Add(n)
	s.stats.sent.Add(n)
	// Forget the connection before the caller closes it, as ZooKeeper
	// does, so that a client which has seen the answer end never finds
	// this connection in the next command's output. (The caller's own
	// dropConn then finds nothing left to do.)
	s.dropConn(c)
}

// fourLetterChunk is the size in chars (UTF-16 code units) of the
// buffer through which ZooKeeper's four-letter words print their answer
// (a BufferedWriter's default): each time it fills, and once at the end if
// anything is left, NIOServerCnxn writes what it holds as one packet.
const fourLetterChunk = 8192

// fourLetterPackets is how many packets ZooKeeper counts as sent for a
// four-letter word's answer out: one per fourLetterChunk chars begun,
// none for an empty answer (hash on a standalone server, stmk without its
// mask).
func fourLetterPackets(out string) int64 {
	var chars int64
	for _, r := range out {
		chars += int64(utf16.RuneLen(r)) // an invalid byte is one U+FFFD
	}
	return (chars + fourLetterChunk - 1) / fourLetterChunk
}

// notServing is ZooKeeper's AbstractFourLetterCommand.ZK_NOT_SERVING as its
// commands print it (println: with a newline).
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// needsServing reports whether a four-letter word answers only notServing
// while the server does not serve, as in ZooKeeper: all but ruok, envi and
// the trace-mask words, which answer regardless, and isro, which answers
// "null" then (see runFourLetterWord).
func needsServing(cmd string) bool {
	switch cmd {
	case "ruok", "isro", "gtmk", "stmk", "envi":
		return false
	}
	return true
}

// defaultTraceMask is ZooKeeper's initial text trace mask (ZooTrace:
// client requests, server packets, sessions and warnings), which gtmk
// prints until stmk sets another.
const defaultTraceMask int64 = 1<<1 | 1<<4 | 1<<5 | 1<<8 // 306

// traceMask is a server's text trace mask: gtmk and the admin
// get_trace_mask report it, stmk sets it. Paddock writes no trace log, so
// the mask changes nothing else; it is kept so that tools setting it read
// back what they set, as with ZooKeeper. The zero value holds
// defaultTraceMask.
type traceMask struct {
	p atomic.Pointer[int64] // nil: defaultTraceMask
}

func (m *traceMask) get() int64 {
	if p := m.p.Load(); p != nil {
		return *p
	}
	return defaultTraceMask
}

func (m *traceMask) set(mask int64) { m.p.Store(&mask) }

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
		for _, ci := range s.connInfos() {
			s.writeConnection(&b, ci, false)
			b.WriteString("\n")
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
		writeEnv(&b)
	case "mntr":
		s.writeMntr(&b)
	case "wchs":
		watchers, paths, total := s.watches.Summary()
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n", watchers, paths, total)
	case "wchc":
		s.writeWatchesBySession(&b)
	case "wchp":
		s.writeWatchesByPath(&b)
	case "dump":
		s.writeDump(&b)
	case "isro":
		// ZooKeeper's IsroCommand: "null" without a running server.
		// Paddock has no read-only mode, so a serving server is "rw".
		if !s.serving.Load() {
			return "null"
		}
		return "rw"
	case "dirs":
		fmt.Fprintf(&b, "datadir_size: %d\nlogdir_size: %d\n", dirSize(s.cfg.DataDir), dirSize(s.cfg.DataLogDir))
	case "gtmk":
		return strconv.FormatInt(s.stats.traceMask.get(), 10)
	case "stmk":
		// The mask follows the word as a big-endian long (NIOServerCnxn).
		// Without it ZooKeeper answers nothing and keeps its mask.
		var buf [8]byte
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return ""
		}
		mask := int64(binary.BigEndian.Uint64(buf[:]))
		s.stats.traceMask.set(mask)
		return strconv.FormatInt(mask, 10)
	case "hash":
		// ZooKeeper lists its digest log here, which a standalone server
		// leaves empty.
		return ""
	}
	return b.String()
}

// writeServerStats writes srvr (and, with clients, stat): ZooKeeper's
// StatCommand.
func (s *Server) writeServerStats(b *strings.Builder, clients bool) {
	fmt.Fprintf(b, "Zookeeper version: %s\n", fullVersion())
	conns := s.connInfos()
	if clients {
		b.WriteString("Clients:\n")
		for _, ci := range conns {
			s.writeConnection(b, ci, true)
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	min, avg, max, _ := s.stats.latency.get()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", min, javaDouble(zkAverage(avg)), max)
	fmt.Fprintf(b, "Received: %d\n", s.stats.received.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.stats.sent.Load())
	fmt.Fprintf(b, "Connections: %d\n", len(conns))
	fmt.Fprintf(b, "Outstanding: %d\n", len(s.outstanding))
	fmt.Fprintf(b, "Zxid: 0x%s\n", hex64(s.lastZxid()))
	mode := s.mode()
	fmt.Fprintf(b, "Mode: %s\n", mode)
	fmt.Fprintf(b, "Node count: %d\n", zkNodeCount(s.nodeCount()))
	if mode == "leader" {
		last, min, max := s.stats.proposals.get()
		fmt.Fprintf(b, "Proposal sizes last/min/max: %d/%d/%d\n", last, min, max)
	}
}

// writeConf writes conf: ZooKeeperServer.dumpConf's keys, in its order.
func (s *Server) writeConf(b *strings.Builder) {
	fmt.Fprintf(b, "clientPort=%d\n", s.cfg.ClientPort)
	fmt.Fprintf(b, "secureClientPort=-1\n")
	fmt.Fprintf(b, "dataDir=%s\n", absPath(s.cfg.DataDir))
	fmt.Fprintf(b, "dataDirSize=%d\n", dirSize(s.cfg.DataDir))
	fmt.Fprintf(b, "dataLogDir=%s\n", absPath(s.cfg.DataLogDir))
	fmt.Fprintf(b, "dataLogSize=%d\n", dirSize(s.cfg.DataLogDir))
	fmt.Fprintf(b, "tickTime=%d\n", s.cfg.TickTime.Milliseconds())
	fmt.Fprintf(b, "maxClientCnxns=%d\n", s.cfg.MaxClientCnxns)
	fmt.Fprintf(b, "minSessionTimeout=%d\n", s.cfg.MinSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "maxSessionTimeout=%d\n", s.cfg.MaxSessionTimeout.Milliseconds())
	fmt.Fprintf(b, "clientPortListenBacklog=-1\n")
	fmt.Fprintf(b, "serverId=%d\n", s.confServerID())
	if !s.cfg.Standalone() {
		s.writeQuorumConf(b)
	}
}

// confServerID is the server id conf reports: a standalone ZooKeeper's
// is 0 (ZooKeeperServer.getServerId), whatever its myid file says.
func (s *Server) confServerID() int64 {
	if s.cfg.Standalone() {
		return 0
	}
	return s.cfg.ServerID
}

// writeQuorumConf adds what QuorumZooKeeperServer.dumpConf prints for an
// ensemble member: the limits, the election algorithm (always 3), this
// member's ports and peer type (0 participant, 1 observer), then the
// membership as QuorumMaj.toString prints it, which ends with the
// configuration's version (Paddock's never changes: 0) and no newline.
func (s *Server) writeQuorumConf(b *strings.Builder) {
	fmt.Fprintf(b, "initLimit=%d\n", s.cfg.InitLimit)
	fmt.Fprintf(b, "syncLimit=%d\n", s.cfg.SyncLimit)
	b.WriteString("electionAlg=3\n")
	var election, quorum []string
	for _, srv := range s.cfg.Servers {
		if srv.ID == s.cfg.ServerID {
			for _, a := range srv.Addrs {
				election = append(election, strconv.Itoa(a.ElectionPort))
				quorum = append(quorum, strconv.Itoa(a.QuorumPort))
			}
		}
	}
	fmt.Fprintf(b, "electionPort=%s\n", strings.Join(election, "|"))
	fmt.Fprintf(b, "quorumPort=%s\n", strings.Join(quorum, "|"))
	fmt.Fprintf(b, "peerType=%d\n", int(s.cfg.PeerType))
	b.WriteString("membership: \n")
	b.Write(membership(s.cfg, configVersion)) // as /zookeeper/config shows it
}

// delimitedHost is a host as ZooKeeper's QuorumServer.delimitedHostString
// prints it: an IPv6 literal in brackets.
func delimitedHost(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// writeConnection writes one connection as ZooKeeper's
// ServerCnxn.dumpConnectionInfo does, without the trailing newline: brief
// for stat, full for cons. The interest set in brackets is 1 (reading) for a
// connection with a session and 0 for one without (ZooKeeper shows 0 for the
// connection running the command).
func (s *Server) writeConnection(b *strings.Builder, ci connInfo, brief bool) {
	d := s.connFields(ci, brief)
	if !brief && d.lastOp == "NA" {
		// connFields reads "NA" as "nothing answered" (lzxid -1), but a
		// failed write leaves "NA" too, with the zxid of its answer.
		cs := &ci.c.stats
		cs.mu.Lock()
		answered, untouched, zxid := cs.answered, cs.lastOp == "", cs.lastZxid
		cs.mu.Unlock()
		switch {
		case answered:
			d.lastZxid = zxid
		case untouched && ci.sessionID != 0:
			// A session resumed on this connection that has answered
			// nothing yet (nor been reset by crst): ZooKeeper's
			// ServerCnxn still has its fields' initial values.
			d.lastOp, d.lastZxid = "null", 0
		}
	}
	fmt.Fprintf(b, " /%s[%d](queued=%d,recved=%d,sent=%d", ci.c.remote, d.interestOps,
		d.queued, d.received, d.sent)
	if brief {
		b.WriteString(")")
		return
	}
	fmt.Fprintf(b, ",sid=0x%s,lop=%s,est=%d,to=%d,lcxid=0x%s,lzxid=0x%s,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d)",
		hex64(ci.sessionID), d.lastOp, d.established, d.timeout, hex64(d.lastCxid), hex64(d.lastZxid),
		d.lastResp, d.lastLatency, d.minLatency, d.avgLatency, d.maxLatency)
}

// writeEnv writes envi: ZooKeeper's Environment.list keys, in its order,
// with the Go runtime in place of the JVM's java.* properties. Unknown values
// are "<NA>", as in ZooKeeper.
func writeEnv(b *strings.Builder) {
	b.WriteString("Environment:\n")
	for _, e := range environment() {
		fmt.Fprintf(b, "%s=%s\n", e[0], e[1])
	}
}

// javaOSName is runtime.GOOS as the JVM's os.name spells it.
func javaOSName() string {
	switch runtime.GOOS {
	case "linux":
		return "Linux"
	case "darwin":
		return "Mac OS X"
	case "freebsd":
		return "FreeBSD"
	case "windows":
		return "Windows"
	}
	return runtime.GOOS
}

// javaOSArch is runtime.GOARCH as the JVM's os.arch spells it.
func javaOSArch() string {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64"
	case "386":
		return "x86"
	}
	return runtime.GOARCH
}

// osVersion is the kernel release (the JVM's os.version), where known.
func osVersion() string {
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		if v := strings.TrimSpace(string(b)); v != "" {
			return v
		}
	}
	return "<NA>"
}

// mntrKeys lists, in the order ZooKeeper 3.8 prints them, the mntr keys
// Paddock reports; each server prints those it has a value for. ZooKeeper
// prints its server's monitor values first (zk_version, zk_server_state,
// on an ensemble member zk_peer_state, on an observer
// zk_observer_master_id), then its gauges in the order of its metrics map,
// the same relative order for a standalone server, a follower, an observer
// and a leader, whose own gauges come in between. Left out, because
// Paddock keeps no such value: zk_last_client_response_size,
// zk_max_client_response_size, zk_min_client_response_size (response sizes
// are not recorded), zk_auth_failed_count (failed authentications are not
// counted), and every counter and summary ZooKeeper's metrics provider
// prints after the gauges (zk_proposal_count … zk_*_per_namespace), which
// measure ZooKeeper's request-processor pipeline.
var mntrKeys = []string{
	"zk_version", "zk_server_state", "zk_peer_state", "zk_observer_master_id",
	"zk_ephemerals_count", "zk_num_alive_connections", "zk_avg_latency", "zk_min_proposal_size",
	"zk_outstanding_requests", "zk_znode_count", "zk_global_sessions",
	"zk_non_mtls_remote_conn_count", "zk_packets_sent", "zk_packets_received",
	"zk_max_proposal_size", "zk_synced_followers", "zk_connection_drop_probability",
	"zk_watch_count", "zk_synced_non_voting_followers", "zk_synced_observers", "zk_min_latency",
	"zk_max_file_descriptor_count", "zk_approximate_data_size", "zk_open_file_descriptor_count",
	"zk_last_proposal_size", "zk_pending_syncs", "zk_leader_uptime",
	"zk_local_sessions", "zk_uptime", "zk_max_latency", "zk_outstanding_tls_handshake",
	"zk_learners", "zk_non_mtls_local_conn_count", "zk_quorum_size",
}

// writeMntr writes mntr: "zk_<key>\t<value>" lines, integers in decimal and
// fractions as Java's Double.toString.
func (s *Server) writeMntr(b *strings.Builder) {
	min, avg, max, _ := s.stats.latency.get()
	s.mu.RLock()
	t := s.fsm.Tree()
	nodes, ephemerals, dataSize := t.NodeCount(), t.EphemeralCount(), t.DataSize()
	sessions := len(s.fsm.Sessions())
	s.mu.RUnlock()
	values := map[string]string{
		"zk_version":               fullVersion(),
		"zk_server_state":          s.mode(),
		"zk_ephemerals_count":      strconv.Itoa(ephemerals),
		"zk_num_alive_connections": strconv.Itoa(len(s.connections())),
		"zk_avg_latency":           javaDouble(zkAverage(avg)),
		"zk_outstanding_requests":  strconv.Itoa(len(s.outstanding)),
		"zk_znode_count":           strconv.Itoa(zkNodeCount(nodes)),
		"zk_global_sessions":       strconv.Itoa(sessions),
		// No TLS: every connection is plain, none is mTLS, no handshake
		// is ever outstanding, and no connection is dropped by throttling.
		"zk_non_mtls_remote_conn_count":  "0",
		"zk_packets_sent":                strconv.FormatInt(s.stats.sent.Load(), 10),
		"zk_packets_received":            strconv.FormatInt(s.stats.received.Load(), 10),
		"zk_connection_drop_probability": javaDouble(0),
		"zk_watch_count":                 strconv.Itoa(s.watches.Count()),
		"zk_min_latency":                 strconv.FormatInt(min, 10),
		"zk_max_file_descriptor_count":   strconv.FormatUint(maxFDs(), 10),
		"zk_approximate_data_size":       strconv.FormatInt(dataSize, 10),
		"zk_open_file_descriptor_count":  strconv.Itoa(openFDs()),
		"zk_local_sessions":              "0",
		"zk_uptime":                      strconv.FormatInt(time.Since(s.started).Milliseconds(), 10),
		"zk_max_latency":                 strconv.FormatInt(max, 10),
		"zk_outstanding_tls_handshake":   "0",
		"zk_non_mtls_local_conn_count":   "0",
	}
	s.mntrEnsemble(values)
	for _, k := range mntrKeys {
		if v, ok := values[k]; ok {
			fmt.Fprintf(b, "%s\t%s\n", k, v)
		}
	}
}

// mntrEnsemble adds the values ZooKeeper prints for a quorum member: the
// quorum size and peer state on every member, the member it learns from
// on an observer (Paddock's observers replicate from the leader), and on
// the leader its uptime as leader, its proposal sizes and its view of the
// others (a member is synced when it is replicating, not being probed or
// sent a snapshot, and was heard from within an election timeout).
func (s *Server) mntrEnsemble(values map[string]string) {
	if s.cfg.Standalone() {
		return
	}
	st := s.node.Status()
	values["zk_quorum_size"] = strconv.Itoa(len(st.Voters))
	values["zk_peer_state"] = s.peerState(st)
	if st.IsLearner() {
		values["zk_observer_master_id"] = strconv.FormatInt(observerMasterID(st), 10)
	}
	if !st.IsLeader {
		return
	}
	learners, followers, observers := syncedCounts(st)
	last, min, max := s.stats.proposals.get()
	values["zk_learners"] = strconv.Itoa(learners)
	values["zk_synced_followers"] = strconv.Itoa(followers)
	values["zk_synced_non_voting_followers"] = "0"
	values["zk_synced_observers"] = strconv.Itoa(observers)
	values["zk_pending_syncs"] = "0"
	values["zk_leader_uptime"] = strconv.FormatInt(s.stats.leaderUptime().Milliseconds(), 10)
	values["zk_last_proposal_size"] = strconv.FormatInt(last, 10)
	values["zk_min_proposal_size"] = strconv.FormatInt(min, 10)
	values["zk_max_proposal_size"] = strconv.FormatInt(max, 10)
}

// observerMasterID is an observer's zk_observer_master_id: the id of the
// member it learns from, the leader; -1 while it knows none, as ZooKeeper
// prints for an observer not connected to a master.
func observerMasterID(st raftnode.Status) int64 {
	if st.Lead == 0 {
		return -1
	}
	return int64(st.Lead)
}

// sessionOf returns the session id of a watcher.
func sessionOf(w watch.Watcher) int64 { return w.(*conn).sessionID }

// writeWatchesBySession writes wchc: each session with a data-table watch,
// then its paths indented by a tab; a blank line ends the list. Sessions
// and paths are sorted (ZooKeeper prints them in hash order).
func (s *Server) writeWatchesBySession(b *strings.Builder) {
	type entry struct {
		id    int64
		paths []string
	}
	var list []entry
	s.watches.ByWatcher(func(w watch.Watcher, paths []string) {
		list = append(list, entry{sessionOf(w), paths})
	})
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	for _, e := range list {
		fmt.Fprintf(b, "0x%s\n", hex64(e.id))
		for _, p := range e.paths {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	b.WriteString("\n")
}

// writeWatchesByPath writes wchp: each watched path, then the sessions
// watching it indented by a tab; a blank line ends the list.
func (s *Server) writeWatchesByPath(b *strings.Builder) {
	s.watches.ByPath(func(path string, ws []watch.Watcher) {
		ids := make([]int64, len(ws))
		for i, w := range ws {
			ids[i] = sessionOf(w)
		}
		slices.Sort(ids)
		fmt.Fprintf(b, "%s\n", path)
		for _, id := range ids {
			fmt.Fprintf(b, "\t0x%s\n", hex64(id))
		}
	})
	b.WriteString("\n")
}

// writeDump writes dump: the session tracker's expiry buckets, the
// ephemeral nodes by session, and the connections by expiry bucket, as
// ZooKeeper's DumpCommand with the NIO connection factory.
func (s *Server) writeDump(b *strings.Builder) {
	b.WriteString("SessionTracker dump:\n")
	buckets := s.tracker.Snapshot()
	sessions := make(map[time.Time][]string, len(buckets))
	for t, ids := range buckets {
		slices.Sort(ids)
		for _, id := range ids {
			sessions[t] = append(sessions[t], "0x"+hex64(id))
		}
	}
	writeExpirySets(b, "Session", sessions)

	b.WriteString("ephemeral nodes dump:\n")
	s.mu.RLock()
	t := s.fsm.Tree()
	owners := t.EphemeralSessions()
	fmt.Fprintf(b, "Sessions with Ephemerals (%d):\n", len(owners))
	for _, id := range owners {
		fmt.Fprintf(b, "0x%s:\n", hex64(id))
		for _, p := range t.Ephemerals(id) {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	s.mu.RUnlock()

	b.WriteString("Connections dump:\n")
	conns := make(map[time.Time][]string)
	for _, ci := range s.connInfos() {
		at := s.expiry(ci)
		conns[at] = append(conns[at], fmt.Sprintf("ip: /%s sessionId: 0x%s", ci.c.remote, hex64(ci.sessionID)))
	}
	writeExpirySets(b, "Connections", conns)
}

// writeExpirySets writes one of ZooKeeper's ExpiryQueue dumps: the number of
// buckets and of elements, then each bucket in time order with its elements.
func writeExpirySets(b *strings.Builder, name string, sets map[time.Time][]string) {
	times := make([]time.Time, 0, len(sets))
	total := 0
	for t, elems := range sets {
		times = append(times, t)
		total += len(elems)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	fmt.Fprintf(b, "%s Sets (%d)/(%d):\n", name, len(times), total)
	loc := javatime.LocalLocation() // Java's default time zone, by name
	for _, t := range times {
		fmt.Fprintf(b, "%d expire at %s:\n", len(sets[t]), javatime.Date(t.In(loc)))
		for _, e := range sets[t] {
			fmt.Fprintf(b, "\t%s\n", e)
		}
	}
}

// dirSize is the total size of the regular files under dir.
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

// openFDs counts the process's open file descriptors (-1 if unknown).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
