package admin

import (
	"slices"
	"sort"

	"github.com/paddockhq/paddock/internal/proto"
)

// Messages in "error", as ZooKeeper words them.
const (
	errNotServing     = "This ZooKeeper instance is not currently serving requests"
	errNotInitialized = "server is not initialized"
	errUnknownPrefix  = "Unknown command: "
)

// command is one admin command: its names (the primary one first), whether
// it answers only while the server serves (ZooKeeper's isServerRequired),
// what permission its caller needs (ZooKeeper's AuthRequest; nil for
// none) and what it answers. run returns the fields of the answer (nil for
// none) and an error message ("" for none).
type command struct {
	names          []string
	serverRequired bool
	auth           *authRequest
	run            func(Source) (any, string)
}

// commands is the command table: ZooKeeper 3.8's commands that Paddock
// has, plus snapshot (3.9), which the HTTP handler serves itself because
// it streams. Names and aliases are ZooKeeper's.
var commands = []command{
	{names: []string{"ruok"}, serverRequired: true, run: func(Source) (any, string) { return nil, "" }},
	{names: []string{"server_stats", "srvr"}, serverRequired: true, run: func(s Source) (any, string) {
		return s.ServerStats(), ""
	}},
	{names: []string{"stats", "stat"}, serverRequired: true, run: func(s Source) (any, string) {
		return struct {
			ServerStats
			Connections       []Connection `json:"connections"`
			SecureConnections []Connection `json:"secure_connections"`
		}{s.ServerStats(), nonNil(s.Connections(true)), []Connection{}}, ""
	}},
	{names: []string{"monitor", "mntr"}, run: func(s Source) (any, string) { return s.Monitor(), "" }},
	{names: []string{"configuration", "conf", "config"}, serverRequired: true, run: func(s Source) (any, string) {
		return s.Configuration(), ""
	}},
	{names: []string{"connections", "cons"}, serverRequired: true, run: func(s Source) (any, string) {
		return struct {
			Connections       []Connection `json:"connections"`
			SecureConnections []Connection `json:"secure_connections"`
		}{nonNil(s.Connections(false)), []Connection{}}, ""
	}},
	{names: []string{"connection_stat_reset", "crst"}, serverRequired: true, run: func(s Source) (any, string) {
		s.ResetConnectionStats()
		return nil, ""
	}},
	{names: []string{"stat_reset", "srst"}, serverRequired: true, run: func(s Source) (any, string) {
		s.ResetServerStats()
		return nil, ""
	}},
	{names: []string{"dump"}, serverRequired: true, run: func(s Source) (any, string) {
		d := s.Dump()
		if d.ExpiryTimeToSessionIDs == nil {
			d.ExpiryTimeToSessionIDs = map[int64][]int64{}
		}
		if d.SessionIDToEphemeralPaths == nil {
			d.SessionIDToEphemeralPaths = map[int64][]string{}
		}
		return d, ""
	}},
	{names: []string{"environment", "env", "envi"}, run: func(s Source) (any, string) {
		return Object(s.Environment()), ""
	}},
	{names: []string{"watch_summary", "wchs"}, serverRequired: true, run: func(s Source) (any, string) {
		return s.WatchSummary(), ""
	}},
	{names: []string{"watches", "wchc"}, serverRequired: true, run: func(s Source) (any, string) {
		w := s.WatchesBySession()
		if w == nil {
			w = map[int64][]string{}
		}
		return struct {
			Watches map[int64][]string `json:"session_id_to_watched_paths"`
		}{w}, ""
	}},
	{names: []string{"watches_by_path", "wchp"}, serverRequired: true, run: func(s Source) (any, string) {
		w := s.WatchesByPath()
		if w == nil {
			w = map[string][]int64{}
		}
		return struct {
			Watches map[string][]int64 `json:"path_to_session_ids"`
		}{w}, ""
	}},
	{names: []string{"dirs"}, serverRequired: true, run: func(s Source) (any, string) { return s.Dirs(), "" }},
	{names: []string{"is_read_only", "isro"}, serverRequired: true, run: func(Source) (any, string) {
		// Paddock has no read-only mode.
		return struct {
			ReadOnly bool `json:"read_only"`
		}{false}, ""
	}},
	{names: []string{"leader", "lead"}, serverRequired: true, run: func(s Source) (any, string) {
		l, ok := s.Leader()
		if !ok {
			return nil, errNotInitialized
		}
		return l, ""
	}},
	{names: []string{"voting_view"}, serverRequired: true, run: func(s Source) (any, string) {
		v := s.VotingView()
		if v == nil {
			v = map[int64]QuorumServer{}
		}
		return struct {
			CurrentConfig map[int64]QuorumServer `json:"current_config"`
		}{v}, ""
	}},
	{names: []string{"zabstate"}, run: func(s Source) (any, string) { return s.ZabState(), "" }},
	{names: []string{"last_snapshot", "lsnp"}, serverRequired: true, run: func(s Source) (any, string) {
		return s.LastSnapshot(), ""
	}},
	{names: []string{"initial_configuration", "icfg"}, serverRequired: true, run: func(s Source) (any, string) {
		return struct {
			InitialConfiguration string `json:"initial_configuration"`
		}{s.InitialConfiguration()}, ""
	}},
	{names: []string{"get_trace_mask", "gtmk"}, run: func(s Source) (any, string) {
		return struct {
			TraceMask int64 `json:"tracemask"`
		}{s.TraceMask()}, ""
	}},
	{names: []string{"hash"}, serverRequired: true, run: func(Source) (any, string) {
		// ZooKeeper lists its digest log; Paddock keeps none.
		return struct {
			Digests []struct{} `json:"digests"`
		}{[]struct{}{}}, ""
	}},
	// snapshot's run is never called: the handler streams it (see
	// serveSnapshot). The entry gives it its names, the serving gate and,
	// as in ZooKeeper 3.9, the need for ALL on the root.
	{names: []string{"snapshot", "snap"}, serverRequired: true,
		auth: &authRequest{perm: proto.PermAll, path: "/"}},
}

// snapshotCommand is the primary name the handler serves itself.
const snapshotCommand = "snapshot"

// lookup returns the command with the given name or alias.
func lookup(name string) (*command, bool) {
	for i := range commands {
		if slices.Contains(commands[i].names, name) {
			return &commands[i], true
		}
	}
	return nil, false
}

// primaryNames returns every command's primary name, sorted.
func primaryNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.names[0]
	}
	sort.Strings(names)
	return names
}

func nonNil(c []Connection) []Connection {
	if c == nil {
		return []Connection{}
	}
	return c
}
