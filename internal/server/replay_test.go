package server

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// TestReplayMatchesLiveApply checks that the state built by live apply (which
// applies the proposer's own copy of each entry) is byte for byte the state
// rebuilt by replaying the WAL after a restart (which decodes every entry).
func TestReplayMatchesLiveApply(t *testing.T) {
	// snapCount 1,000,000 replays everything from the WAL; 3 restores
	// from snapshots streamed while the writes went on, then the WAL.
	for _, snapCount := range []int{1_000_000, 3} {
		t.Run(fmt.Sprint("snapCount=", snapCount), func(t *testing.T) { testReplay(t, snapCount) })
	}
}

func testReplay(t *testing.T, snapCount int) {
	dir := t.TempDir()
	cfg := func(c *configT) {
		c.DataDir, c.DataLogDir = dir, dir
		c.SnapCount = snapCount
		c.ExtendedTypesEnabled = true
	}
	s := startServer(t, cfg)
	c := dial(t, s.Addr().String())
	open := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	steps := []struct {
		op  proto.OpCode
		req proto.Request
	}{
		{proto.OpCreate, &proto.CreateRequest{Path: "/nil", ACL: open}},
		{proto.OpCreate, &proto.CreateRequest{Path: "/empty", Data: []byte{}, ACL: open}},
		{proto.OpCreate2, &proto.CreateRequest{Path: "/s-", Data: []byte("x"), ACL: open, Flags: proto.FlagPersistentSequential}},
		{proto.OpCreate, &proto.CreateRequest{Path: "/eph", ACL: open, Flags: proto.FlagEphemeral}},
		{proto.OpCreateContainer, &proto.CreateRequest{Path: "/box", ACL: open, Flags: proto.FlagContainer}},
		{proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/ttl", ACL: open, Flags: proto.FlagPersistentWithTTL, TTL: 60000}},
		{proto.OpSetData, &proto.SetDataRequest{Path: "/nil", Data: []byte("now set"), Version: -1}},
		{proto.OpSetACL, &proto.SetACLRequest{Path: "/empty", ACL: []proto.ACL{{Perms: proto.PermRead, ID: proto.ID{Scheme: "ip", ID: "127.0.0.0/8"}}}, Version: 0}},
		{proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpCreate, Path: "/m", ACL: open},
			{Op: proto.OpCreate2, Path: "/m/a", Data: []byte("a"), ACL: open},
			{Op: proto.OpCheck, Path: "/m", Version: 0},
		}}},
		{proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{ // fails: rolled back
			{Op: proto.OpDelete, Path: "/m/a", Version: -1},
			{Op: proto.OpCheck, Path: "/m", Version: 7},
		}}},
		{proto.OpDelete, &proto.DeleteRequest{Path: "/s-0000000002", Version: -1}},
		{proto.OpCreate, &proto.CreateRequest{Path: "/bad/parent", ACL: open}}, // NoNode
	}
	for _, st := range steps {
		c.call(st.op, st.req, nil)
	}
	live := stateBytes(s)
	s.Close()
	s2 := startServer(t, cfg)
	if replayed := stateBytes(s2); !bytes.Equal(live, replayed) {
		t.Fatalf("state after replay differs from live state:\nlive:\n%s\nreplayed:\n%s", live, replayed)
	}
}

// stateBytes renders the tree (every node's path, data, Stat and ACL list)
// and the session table canonically: interned ACL references may be
// numbered differently after a restore, the content may not.
func stateBytes(s *Server) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var b bytes.Buffer
	t := s.fsm.Tree()
	t.Walk(func(path string, n *tree.Node) {
		fmt.Fprintf(&b, "%s %q %+v %v\n", path, n.Data, n.Stat(), t.ACL(n))
	})
	for _, ss := range s.fsm.Sessions() {
		fmt.Fprintf(&b, "session %x %d %x\n", ss.ID, ss.Timeout, ss.Passwd)
	}
	return b.Bytes()
}
