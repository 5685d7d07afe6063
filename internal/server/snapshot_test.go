package server

import (
	"fmt"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestSnapshotsUnderLoad takes a snapshot every 50 entries while clients
// write, read and watch, then restarts from the newest snapshot plus the WAL
// and checks the state is the one the clients built. Run with -race it also
// checks the streamed snapshot shares the tree safely with apply and reads.
func TestSnapshotsUnderLoad(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *configT) { c.DataDir, c.DataLogDir, c.SnapCount = dir, dir, 50 }
	s := startServer(t, cfg)
	open := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	const workers, rounds = 6, 150
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		c := dial(t, s.Addr().String())
		wg.Add(1)
		go func(w int, c *rawClient) {
			defer wg.Done()
			dirPath := fmt.Sprintf("/w%d", w)
			c.mustCreate(dirPath, "", 0)
			for i := 0; i < rounds; i++ {
				p := fmt.Sprintf("%s/n%d", dirPath, i%20)
				var events []proto.WatcherEvent
				if h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: p, Watch: true}, &events); h.Err == proto.ErrNoNode {
					c.call(proto.OpCreate, &proto.CreateRequest{Path: p, Data: []byte(fmt.Sprint(i)), ACL: open}, &events)
				} else if i%3 == 0 {
					c.call(proto.OpDelete, &proto.DeleteRequest{Path: p, Version: -1}, &events)
				} else {
					c.call(proto.OpSetData, &proto.SetDataRequest{Path: p, Data: []byte(fmt.Sprint(i)), Version: -1}, &events)
				}
				c.call(proto.OpGetChildren2, &proto.GetChildren2Request{Path: dirPath}, &events)
			}
		}(w, c)
	}
	wg.Wait()
	if st := s.node.Status(); st.SnapshotIndex == 0 {
		t.Fatalf("no snapshot was taken: %+v", st)
	}
	live := stateBytes(s)
	s.Close()
	s2 := startServer(t, cfg)
	if replayed := stateBytes(s2); string(replayed) != string(live) {
		t.Fatalf("state after restart differs:\nlive:\n%s\nrestored:\n%s", live, replayed)
	}
}
