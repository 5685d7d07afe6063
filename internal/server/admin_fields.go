package server

import (
	"fmt"
	"math"
	"os"
	"os/user"
	"runtime"
	"runtime/debug"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// The values below are computed once for both the four-letter words
// (fourlw.go formats them as text) and the admin API (admin.go hands them
// over as JSON), so that the two always agree.

// connFieldSet is one connection's counters and session details, as cons
// and stat report them.
type connFieldSet struct {
	interestOps    int // 1 (reading) with a session, 0 without
	queued         int
	received, sent int64

	// Set unless brief.
	lastOp                             string
	established, timeout               int64 // Unix ms, ms
	lastCxid, lastZxid                 int64
	lastResp, lastLatency              int64 // elapsedMillis (0 if none), ms
	minLatency, avgLatency, maxLatency int64
}

// connFields reads one connection's fields. The timeout of a connection
// without a session is the handshake timeout; a connection that answered
// nothing since it opened or since its stats were reset has last operation
// "NA" and last zxid -1, as in ZooKeeper.
func (s *Server) connFields(ci connInfo, brief bool) connFieldSet {
	c, cs := ci.c, &ci.c.stats
	f := connFieldSet{queued: len(c.items), received: cs.received.Load(), sent: cs.sent.Load()}
	if ci.sessionID != 0 {
		f.interestOps = 1
	}
	if brief {
		return f
	}
	min, _, max, _ := cs.latency.get()
	f.minLatency, f.maxLatency, f.avgLatency = min, max, cs.latency.intAvg()
	cs.mu.Lock()
	lop, lcxid, lzxid, lresp, llat := cs.lastOp, cs.lastCxid, cs.lastZxid, cs.lastResp, cs.lastLatency
	cs.mu.Unlock()
	f.timeout = int64(ci.timeout)
	if ci.sessionID == 0 {
		f.timeout = s.cfg.HandshakeTimeout.Milliseconds()
	}
	switch {
	case lop == "" || lop == "NA":
		lop, lzxid = "NA", -1
	case lzxid == 0:
		lzxid = s.lastZxid()
	}
	if !lresp.IsZero() {
		f.lastResp = elapsedMillis(lresp)
	}
	f.lastOp, f.lastCxid, f.lastZxid, f.lastLatency = lop, int64(lcxid), lzxid, llat
	f.established = cs.established.UnixMilli()
	return f
}

// environment lists envi's keys and values: ZooKeeper's Environment.list
// keys, in its order, with the Go runtime in place of the JVM's java.*
// properties. Unknown values are "<NA>", as in ZooKeeper.
func environment() [][2]string {
	host, err := os.Hostname()
	if err != nil {
		host = "<NA>"
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "<NA>"
	}
	userName, userHome := "<NA>", "<NA>"
	if u, err := user.Current(); err == nil {
		userName, userHome = u.Username, u.HomeDir
	}
	env := [][2]string{
		{"zookeeper.version", fullVersion()},
		{"host.name", host},
		{"go.version", runtime.Version()},
		{"os.name", javaOSName()},
		{"os.arch", javaOSArch()},
		{"os.version", osVersion()},
		{"user.name", userName},
		{"user.home", userHome},
		{"user.dir", wd},
	}
	// The JVM's free/max/total heap: here the committed heap, the part of
	// it not in use, and the soft memory limit if one is set.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	committed := ms.HeapSys - ms.HeapReleased
	free := uint64(0)
	if committed > ms.HeapInuse {
		free = committed - ms.HeapInuse
	}
	env = append(env, [2]string{"os.memory.free", fmt.Sprintf("%dMB", free>>20)})
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 {
		env = append(env, [2]string{"os.memory.max", fmt.Sprintf("%dMB", limit>>20)})
	}
	return append(env, [2]string{"os.memory.total", fmt.Sprintf("%dMB", committed>>20)})
}

// syncedCounts is the leader's view of the other members for mntr: the
// learners heard from within an election timeout, and of those the
// followers and observers that are replicating (not being probed or sent a
// snapshot).
func syncedCounts(st raftnode.Status) (learners, followers, observers int) {
	for id, p := range st.Progress {
		if id == st.ID {
			continue
		}
		if p.Active {
			learners++
		}
		if p.Active && p.State == "StateReplicate" {
			if p.IsLearner {
				observers++
			} else {
				followers++
			}
		}
	}
	return learners, followers, observers
}

// peerState is mntr's zk_peer_state: ZooKeeper's QuorumPeer state and Zab
// phase, "looking" while the member does not serve.
func (s *Server) peerState(st raftnode.Status) string {
	switch {
	case !s.serving.Load():
		return "looking"
	case st.IsLeader:
		return "leading - broadcast"
	case st.IsLearner():
		return "observing - broadcast"
	default:
		return "following - broadcast"
	}
}
