package zk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// TestFakeCreateProtectedSyncs: a protected sequential create loses its
// answer, and the client reconnects to a server that has not applied the
// create yet (a follower behind the leader). That server lists the parent's
// children from its stale view unless a sync on the parent came first on
// the session, as a follower catches up with the leader on sync. The
// look-up after the loss must sync first and find the znode: a second
// create would make a duplicate.
func TestFakeCreateProtectedSyncs(t *testing.T) {
	s := newFakeZK(t, false)
	c, fc := connectFake(t, s)
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := c.CreateProtected(testCtx(t), "/q/item-", []byte("x"), zk.OpenACL, zk.ModePersistentSequential)
		done <- result{p, err}
	}()
	r := fc.next(t)
	create, ok := r.req.(*proto.CreateRequest)
	if !ok {
		t.Fatalf("request %s, want create", r.op)
	}
	name := create.Path + "0000000001" // what the leader applied
	fc.close()                         // the answer is lost

	fc2 := s.accept(t)
	reqs := make(chan fakeRequest)
	go func() {
		for {
			r, err := fc2.read(fakeWait)
			if err != nil {
				return // the test ended and the server closed the connection
			}
			select {
			case reqs <- r:
			case <-s.quit:
				return
			}
		}
	}()
	synced := false
	creates := 0
	for {
		var r fakeRequest
		select {
		case res := <-done:
			if res.err != nil {
				t.Fatalf("CreateProtected: %v", res.err)
			}
			if creates > 0 {
				t.Fatalf("CreateProtected created again after the loss (%s): a look-up without sync missed the lost create", res.path)
			}
			if res.path != name {
				t.Fatalf("CreateProtected returned %s, want %s", res.path, name)
			}
			return
		case r = <-reqs:
		case <-time.After(fakeWait):
			t.Fatal("CreateProtected neither returned nor sent a request")
		}
		switch req := r.req.(type) {
		case *proto.SyncRequest:
			if req.Path == "/q" {
				synced = true
			}
			fc2.reply(t, r.xid, 10, proto.ErrOK, &proto.SyncResponse{Path: req.Path})
		case *proto.GetChildren2Request:
			kids := []string{}
			if synced {
				kids = append(kids, name[strings.LastIndexByte(name, '/')+1:])
			}
			fc2.reply(t, r.xid, 10, proto.ErrOK, &proto.GetChildren2Response{Children: kids})
		case *proto.CreateRequest:
			creates++
			fc2.reply(t, r.xid, 11, proto.ErrOK, &proto.CreateResponse{Path: req.Path + "0000000002"})
		default:
			if r.op != proto.OpPing {
				t.Fatalf("unexpected request %s", r.op)
			}
			fc2.reply(t, proto.XidPing, 0, proto.ErrOK, nil)
		}
	}
}
