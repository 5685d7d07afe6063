package zk_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// TestFakeEarlyFailureOrder: an asynchronous call that fails before it is
// sent (its ctx already done, an invalid argument, the Conn closing) calls
// back in request order all the same: after the callbacks of the earlier
// calls still waiting for their reply, which the server sends late.
func TestFakeEarlyFailureOrder(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name    string
		closing bool // Close runs (waiting for closeSession's answer) before the second call
		second  func(c *zk.Conn, cb func([]byte, *zk.Stat, error))
		want    error
	}{
		{"ctx done", false, func(c *zk.Conn, cb func([]byte, *zk.Stat, error)) { c.GetAsync(done, "/b", nil, cb) }, context.Canceled},
		{"bad argument", false, func(c *zk.Conn, cb func([]byte, *zk.Stat, error)) { c.GetAsync(testCtx(t), "bad", nil, cb) }, zk.ErrInvalidPath},
		{"closing", true, func(c *zk.Conn, cb func([]byte, *zk.Stat, error)) { c.GetAsync(testCtx(t), "/b", nil, cb) }, zk.ErrClosed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeZK(t, false)
			c, fc := connectFake(t, s)
			var mu sync.Mutex
			var order []string
			var wg sync.WaitGroup
			wg.Add(2)
			record := func(name string, want error) func([]byte, *zk.Stat, error) {
				return func(_ []byte, _ *zk.Stat, err error) {
					if !errors.Is(err, want) {
						t.Errorf("%s call: %v, want %v", name, err, want)
					}
					mu.Lock()
					order = append(order, name)
					mu.Unlock()
					wg.Done()
				}
			}
			c.GetAsync(testCtx(t), "/a", nil, record("first", nil))
			first := fc.next(t)
			var closeReq fakeRequest
			if tt.closing {
				go c.Close()
				closeReq = fc.next(t)
				if closeReq.op != proto.OpCloseSession {
					t.Fatalf("Close sent %s, want closeSession", closeReq.op)
				}
			}
			tt.second(c, record("second", tt.want))
			// The first call's answer comes only now.
			fc.reply(t, first.xid, 3, proto.ErrOK, &proto.GetDataResponse{Data: []byte("a")})
			if tt.closing {
				fc.reply(t, closeReq.xid, 4, proto.ErrOK, nil)
			}
			waitGroup(t, &wg, "callbacks")
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"first", "second"}; !slices.Equal(order, want) {
				t.Errorf("callbacks ran in the order %v, want the request order %v", order, want)
			}
		})
	}
}
