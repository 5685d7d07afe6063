package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/admin"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/watch"
)

// startAdmin starts the admin HTTP server when admin.enableServer is set.
// Start calls it once the client listener is open; a bind failure fails
// Start.
func (s *Server) startAdmin() error {
	if !s.cfg.AdminEnabled {
		return nil
	}
	a, err := admin.New(admin.Options{
		Source:          (*adminSource)(s),
		CommandURL:      s.cfg.AdminCommandURL,
		IdleTimeout:     s.cfg.AdminIdleTimeout,
		SnapshotEnabled: s.cfg.AdminSnapshotEnabled,
		SuperDigest:     s.cfg.SuperDigest,
		Logger:          s.log.With("component", "admin"),
	})
	if err != nil {
		return fmt.Errorf("server: admin server: %w", err)
	}
	addr := net.JoinHostPort(s.cfg.AdminAddress, strconv.Itoa(s.cfg.AdminPort))
	if err := a.Start(addr); err != nil {
		return fmt.Errorf("server: admin server (admin.serverAddress, admin.serverPort): %w", err)
	}
	s.adminSrv = a
	s.log.Info("admin server listening", "addr", a.Addr().String(), "commands", s.cfg.AdminCommandURL,
		"snapshot", s.cfg.AdminSnapshotEnabled)
	return nil
}

// closeAdmin stops the admin server, waiting for its requests in flight.
func (s *Server) closeAdmin() {
	if s.adminSrv != nil {
		s.adminSrv.Close()
	}
}

// AdminAddr returns the admin HTTP server's address, or nil when it is off
// (admin.enableServer is false) or the server is not started. Like Addr, it
// must not be called concurrently with Start.
func (s *Server) AdminAddr() net.Addr {
	if s.adminSrv == nil {
		return nil
	}
	return s.adminSrv.Addr()
}

// adminSource is the server as internal/admin sees it. The admin server
// runs only between Start and Close, so s.node is set throughout.
type adminSource Server

var _ admin.Source = (*adminSource)(nil)

func (a *adminSource) srv() *Server { return (*Server)(a) }

func (a *adminSource) Live() bool {
	s := a.srv()
	if s.node == nil || s.closed.Load() {
		return false
	}
	select {
	case <-s.node.Done():
		return false
	default:
		return true
	}
}

func (a *adminSource) Serving() bool { return a.srv().Serving() }

func (a *adminSource) Mode() string { return a.srv().Mode() }

func (a *adminSource) ServerStats() admin.ServerStats {
	s := a.srv()
	min, avg, max, _ := s.stats.latency.get()
	var proposals *admin.BufferStats
	if !s.cfg.Standalone() && s.node.Status().IsLeader {
		last, min, max := s.stats.proposals.get()
		proposals = &admin.BufferStats{LastBufferSize: last, MinBufferSize: min, MaxBufferSize: max}
	}
	return admin.ServerStats{
		Version:       fullVersion(),
		ProposalStats: proposals,
		ServerStats: admin.ServerCounters{
			PacketsSent:               s.stats.sent.Load(),
			PacketsReceived:           s.stats.received.Load(),
			ClientResponseStats:       admin.NoBufferStats,
			DataDirSize:               dirSize(s.cfg.DataDir),
			LogDirSize:                dirSize(s.cfg.DataLogDir),
			ServerState:               s.mode(),
			LastProcessedZxid:         s.lastZxid(),
			OutstandingRequests:       len(s.outstanding),
			AvgLatency:                admin.Double(zkAverage(avg)),
			MaxLatency:                max,
			MinLatency:                min,
			NumAliveClientConnections: len(s.connections()),
			Uptime:                    time.Since(s.started).Milliseconds(),
		},
		ClientResponse: admin.NoBufferStats,
		NodeCount:      zkNodeCount(s.nodeCount()),
	}
}

func (a *adminSource) Connections(brief bool) []admin.Connection {
	s := a.srv()
	infos := s.connInfos()
	out := make([]admin.Connection, 0, len(infos))
	for _, ci := range infos {
		f := s.connFields(ci, brief)
		c := admin.Connection{
			RemoteSocketAddress: ci.c.remote,
			InterestOps:         f.interestOps,
			OutstandingRequests: f.queued,
			PacketsReceived:     f.received,
			PacketsSent:         f.sent,
		}
		if !brief {
			c.ConnectionDetails = &admin.ConnectionDetails{
				SessionID:        ci.sessionID,
				LastOperation:    f.lastOp,
				Established:      f.established,
				SessionTimeout:   f.timeout,
				LastCxid:         f.lastCxid,
				LastZxid:         f.lastZxid,
				LastResponseTime: f.lastResp,
				LastLatency:      f.lastLatency,
				MinLatency:       f.minLatency,
				AvgLatency:       f.avgLatency,
				MaxLatency:       f.maxLatency,
			}
		}
		out = append(out, c)
	}
	return out
}

func (a *adminSource) ResetConnectionStats() {
	for _, c := range a.srv().connections() {
		c.stats.reset()
	}
}

func (a *adminSource) ResetServerStats() { a.srv().stats.reset() }

// Monitor reports what the mntr four-letter word does (see writeMntr and
// writeMntrEnsemble), typed.
func (a *adminSource) Monitor() admin.Monitor {
	s := a.srv()
	min, avg, max, _ := s.stats.latency.get()
	s.mu.RLock()
	t := s.fsm.Tree()
	nodes, ephemerals, dataSize := t.NodeCount(), t.EphemeralCount(), t.DataSize()
	sessions := len(s.fsm.Sessions())
	s.mu.RUnlock()
	m := admin.Monitor{
		Version:                 fullVersion(),
		ServerState:             s.mode(),
		EphemeralsCount:         ephemerals,
		NumAliveConnections:     len(s.connections()),
		AvgLatency:              admin.Double(zkAverage(avg)),
		OutstandingRequests:     len(s.outstanding),
		ZnodeCount:              zkNodeCount(nodes),
		GlobalSessions:          sessions,
		PacketsSent:             s.stats.sent.Load(),
		PacketsReceived:         s.stats.received.Load(),
		WatchCount:              s.watches.Count(),
		MinLatency:              min,
		MaxFileDescriptorCount:  maxFDs(),
		ApproximateDataSize:     dataSize,
		OpenFileDescriptorCount: openFDs(),
		Uptime:                  time.Since(s.started).Milliseconds(),
		MaxLatency:              max,
	}
	if s.cfg.Standalone() {
		return m
	}
	st := s.node.Status()
	quorum := len(st.Voters)
	m.QuorumSize = &quorum
	m.PeerState = s.peerState(st)
	if st.IsLearner() {
		id := observerMasterID(st)
		m.ObserverMasterID = &id
	}
	if st.IsLeader {
		learners, followers, observers := syncedCounts(st)
		zero := 0
		m.Learners, m.SyncedFollowers, m.SyncedObservers = &learners, &followers, &observers
		m.SyncedNonVotingFollowers, m.PendingSyncs = &zero, &zero
		uptime := s.stats.leaderUptime().Milliseconds()
		last, min, max := s.stats.proposals.get()
		m.LeaderUptime = &uptime
		m.LastProposalSize, m.MinProposalSize, m.MaxProposalSize = &last, &min, &max
	}
	return m
}

func (a *adminSource) Configuration() admin.Configuration {
	s := a.srv()
	port := s.cfg.ClientPort
	if addr, ok := s.Addr().(*net.TCPAddr); ok {
		port = addr.Port // the port picked when clientPort is 0
	}
	return admin.Configuration{
		ClientPort:              port,
		DataDir:                 absPath(s.cfg.DataDir),
		DataLogDir:              absPath(s.cfg.DataLogDir),
		TickTime:                s.cfg.TickTime.Milliseconds(),
		MaxClientCnxns:          s.cfg.MaxClientCnxns,
		MinSessionTimeout:       s.cfg.MinSessionTimeout.Milliseconds(),
		MaxSessionTimeout:       s.cfg.MaxSessionTimeout.Milliseconds(),
		ServerID:                s.confServerID(),
		ClientPortListenBacklog: -1,
	}
}

func (a *adminSource) Environment() []admin.Field {
	env := environment()
	out := make([]admin.Field, len(env))
	for i, e := range env {
		out[i] = admin.Field{Key: e[0], Value: e[1]}
	}
	return out
}

func (a *adminSource) WatchSummary() admin.WatchSummary {
	watchers, paths, total := a.srv().watches.Summary()
	return admin.WatchSummary{NumConnections: watchers, NumPaths: paths, NumTotalWatches: total}
}

func (a *adminSource) WatchesBySession() map[int64][]string {
	out := make(map[int64][]string)
	a.srv().watches.ByWatcher(func(w watch.Watcher, paths []string) {
		id := sessionOf(w)
		out[id] = append(out[id], paths...)
	})
	for id := range out {
		slices.Sort(out[id])
	}
	return out
}

func (a *adminSource) WatchesByPath() map[string][]int64 {
	out := make(map[string][]int64)
	a.srv().watches.ByPath(func(path string, ws []watch.Watcher) {
		ids := make([]int64, len(ws))
		for i, w := range ws {
			ids[i] = sessionOf(w)
		}
		slices.Sort(ids)
		out[path] = ids
	})
	return out
}

func (a *adminSource) Dump() admin.Dump {
	s := a.srv()
	d := admin.Dump{
		ExpiryTimeToSessionIDs:    make(map[int64][]int64),
		SessionIDToEphemeralPaths: make(map[int64][]string),
	}
	for t, ids := range s.tracker.Snapshot() {
		slices.Sort(ids)
		d.ExpiryTimeToSessionIDs[t.UnixMilli()] = ids
	}
	s.mu.RLock()
	t := s.fsm.Tree()
	for _, id := range t.EphemeralSessions() {
		d.SessionIDToEphemeralPaths[id] = slices.Clone(t.Ephemerals(id))
	}
	s.mu.RUnlock()
	return d
}

func (a *adminSource) Dirs() admin.Dirs {
	s := a.srv()
	return admin.Dirs{DatadirSize: dirSize(s.cfg.DataDir), LogdirSize: dirSize(s.cfg.DataLogDir)}
}

func (a *adminSource) Leader() (admin.Leader, bool) {
	s := a.srv()
	if s.cfg.Standalone() {
		return admin.Leader{}, false
	}
	st := s.node.Status()
	l := admin.Leader{IsLeader: st.IsLeader, LeaderID: -1}
	if st.Lead != 0 {
		l.LeaderID = int64(st.Lead)
		if srv, ok := s.serverLine(int64(st.Lead)); ok {
			l.LeaderIP = srv.Addrs[0].Host
		}
	}
	return l, true
}

// serverLine returns the server.N line of member id.
func (s *Server) serverLine(id int64) (config.Server, bool) {
	for _, srv := range s.cfg.Servers {
		if srv.ID == id {
			return srv, true
		}
	}
	return config.Server{}, false
}

func (a *adminSource) VotingView() map[int64]admin.QuorumServer {
	s := a.srv()
	out := make(map[int64]admin.QuorumServer)
	if s.cfg.Standalone() {
		return out
	}
	for _, srv := range s.cfg.Servers {
		if srv.Role == config.Observer || (srv.ID == s.cfg.ServerID && s.cfg.PeerType == config.Observer) {
			continue
		}
		q := admin.QuorumServer{LearnerType: "participant"}
		for _, pa := range srv.Addrs {
			q.ServerAddresses = append(q.ServerAddresses, net.JoinHostPort(pa.Host, strconv.Itoa(pa.QuorumPort)))
			q.ElectionAddresses = append(q.ElectionAddresses, net.JoinHostPort(pa.Host, strconv.Itoa(pa.ElectionPort)))
		}
		q.ClientAddress = a.clientAddress(srv)
		out[srv.ID] = q
	}
	return out
}

// clientAddress is a member's client address as ZooKeeper shows it: from
// its server line, and for this server from its own listener; "" when
// unknown.
func (a *adminSource) clientAddress(srv config.Server) string {
	s := a.srv()
	if srv.ID == s.cfg.ServerID {
		if addr, ok := s.Addr().(*net.TCPAddr); ok {
			host := s.cfg.ClientPortAddress
			if host == "" {
				host = "0.0.0.0"
			}
			return net.JoinHostPort(host, strconv.Itoa(addr.Port))
		}
	}
	if srv.ClientPort == 0 {
		return ""
	}
	return net.JoinHostPort(srv.ClientHost, strconv.Itoa(srv.ClientPort))
}

// ZabState maps the raft state to ZooKeeper's Zab phases: no known leader
// is "election"; a leader known but not yet caught up with is
// "synchronization"; serving is "broadcast". ZooKeeper's "discovery" has no
// raft counterpart. zab_epoch is the raft term and zab_counter the zxid
// (Paddock's zxid is the raft log index, with no epoch in its high bits).
func (a *adminSource) ZabState() admin.ZabState {
	s := a.srv()
	if s.cfg.Standalone() || s.node == nil {
		return admin.ZabState{}
	}
	st := s.node.Status()
	srv, _ := s.serverLine(s.cfg.ServerID)
	myID, isLeader := s.cfg.ServerID, st.IsLeader
	zxid := s.lastZxid()
	lastZxid := "0x" + hex64(zxid)
	epoch := int64(st.Term)
	client := a.clientAddress(srv)
	state := "election"
	switch {
	case s.serving.Load():
		state = "broadcast"
	case st.Lead != 0:
		state = "synchronization"
	}
	return admin.ZabState{
		MyID:            &myID,
		IsLeader:        &isLeader,
		QuorumAddress:   addressGroup(srv, func(p config.PeerAddr) int { return p.QuorumPort }),
		ElectionAddress: addressGroup(srv, func(p config.PeerAddr) int { return p.ElectionPort }),
		ClientAddress:   &client,
		Voting:          s.cfg.Role() == config.Participant,
		LastZxid:        &lastZxid,
		ZabEpoch:        &epoch,
		ZabCounter:      &zxid,
		State:           state,
	}
}

// addressGroup builds ZooKeeper's MultipleAddresses view of a member's
// addresses on one port.
func addressGroup(srv config.Server, port func(config.PeerAddr) int) *admin.AddressGroup {
	g := &admin.AddressGroup{Empty: len(srv.Addrs) == 0}
	for _, pa := range srv.Addrs {
		p := port(pa)
		addr := net.JoinHostPort(pa.Host, strconv.Itoa(p))
		g.AllAddresses = append(g.AllAddresses, addr)
		g.WildcardAddresses = append(g.WildcardAddresses, net.JoinHostPort("0.0.0.0", strconv.Itoa(p)))
		g.AllPorts = append(g.AllPorts, p)
		g.AllHostStrings = append(g.AllHostStrings, pa.Host)
	}
	g.AllReachableAddresses = g.AllAddresses
	g.AllReachableAddressesOrAll = g.AllAddresses
	if len(g.AllAddresses) > 0 {
		g.One, g.ReachableAddress, g.ReachableOrOne = g.AllAddresses[0], g.AllAddresses[0], g.AllAddresses[0]
	}
	return g
}

// LastSnapshot reports the newest snapshot file in the data directory.
func (a *adminSource) LastSnapshot() admin.LastSnapshot {
	s := a.srv()
	none := admin.LastSnapshot{Zxid: hex64(-1), Timestamp: -1}
	infos, err := storage.ListSnapshots(filepath.Join(s.cfg.DataDir, "snap"))
	if err != nil || len(infos) == 0 {
		return none
	}
	newest := infos[len(infos)-1]
	fi, err := os.Stat(newest.Path)
	if err != nil {
		return none
	}
	return admin.LastSnapshot{Zxid: hex64(int64(newest.Index)), Timestamp: fi.ModTime().Unix()}
}

// InitialConfiguration renders the configuration the server started with
// as zoo.cfg lines: the keys Paddock uses, with their effective values
// (not the file's text, which the server does not keep).
func (a *adminSource) InitialConfiguration() string {
	c := a.srv().cfg
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	kv("tickTime", c.TickTime.Milliseconds())
	kv("initLimit", c.InitLimit)
	kv("syncLimit", c.SyncLimit)
	kv("dataDir", c.DataDir)
	kv("dataLogDir", c.DataLogDir)
	kv("clientPort", c.ClientPort)
	if c.ClientPortAddress != "" {
		kv("clientPortAddress", c.ClientPortAddress)
	}
	kv("maxClientCnxns", c.MaxClientCnxns)
	kv("minSessionTimeout", c.MinSessionTimeout.Milliseconds())
	kv("maxSessionTimeout", c.MaxSessionTimeout.Milliseconds())
	kv("snapCount", c.SnapCount)
	kv("autopurge.snapRetainCount", c.AutopurgeSnapRetainCount)
	kv("autopurge.purgeInterval", int64(c.AutopurgePurgeInterval/time.Hour))
	kv("4lw.commands.whitelist", c.FourLetterWords.String())
	kv("extendedTypesEnabled", c.ExtendedTypesEnabled)
	kv("enforceQuota", c.EnforceQuota)
	if c.PeerType == config.Observer {
		kv("peerType", "observer")
	}
	for _, srv := range c.Servers {
		var parts []string
		for _, pa := range srv.Addrs {
			host := pa.Host
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
			parts = append(parts, fmt.Sprintf("%s:%d:%d", host, pa.QuorumPort, pa.ElectionPort))
		}
		line := strings.Join(parts, "|")
		if srv.Role == config.Observer {
			line += ":observer"
		}
		if srv.ClientPort != 0 {
			line += ";" + net.JoinHostPort(srv.ClientHost, strconv.Itoa(srv.ClientPort))
		}
		kv("server."+strconv.FormatInt(srv.ID, 10), line)
	}
	kv("admin.enableServer", c.AdminEnabled)
	kv("admin.serverAddress", c.AdminAddress)
	kv("admin.serverPort", c.AdminPort)
	kv("admin.commandURL", c.AdminCommandURL)
	return b.String()
}

func (a *adminSource) TraceMask() int64 { return a.srv().stats.traceMask.get() }

// ACL returns a copy of the node's ACL, read under the state lock.
func (a *adminSource) ACL(path string) ([]proto.ACL, bool) {
	s := a.srv()
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.fsm.Tree()
	n := t.Get(path)
	if n == nil {
		return nil, false
	}
	return slices.Clone(t.ACL(n)), true
}

// Snapshot serialises the whole state under the read lock: reads go on,
// writes wait until it is done. It is the state machine's snapshot format,
// the body of a snapshot file in the data directory.
func (a *adminSource) Snapshot() (int64, []byte, error) {
	s := a.srv()
	if s.closed.Load() {
		return 0, nil, errStopped
	}
	s.mu.RLock()
	data := s.fsm.AppendSnapshot(nil)
	zxid := s.fsm.LastZxid()
	s.mu.RUnlock()
	return zxid, data, nil
}
