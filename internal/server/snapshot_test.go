package server

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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

// countingWriter counts the pieces written to it and how many of them came
// without a tick of ticker since the piece before.
type countingWriter struct {
	ticker       *atomic.Int64
	last         int64
	pieces, held int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	now := w.ticker.Load()
	if w.pieces > 0 && now == w.last {
		w.held++
	}
	w.pieces++
	w.last = now
	return len(p), nil
}

// TestSnapshotYieldsBetweenPieces checks that writing a snapshot hands the
// processor to goroutines waiting for one before every piece, not only when
// the scheduler preempts the stream (every 10 ms): with one processor, a
// goroutine that is always ready to run must run between any two pieces.
func TestSnapshotYieldsBetweenPieces(t *testing.T) {
	s := startServer(t, nil)
	s.snapPiece = 8
	c := dial(t, s.Addr().String())
	c.mustCreate("/y", "", 0)
	for i := range 200 {
		c.mustCreate(fmt.Sprintf("/y/n%d", i), "", 0)
	}
	write, err := (*machine)(s).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ticker atomic.Int64
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ticker.Add(1)
			runtime.Gosched()
		}
	}()
	w := &countingWriter{ticker: &ticker}
	err = write(w)
	close(stop)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	if w.pieces < 200/8 {
		t.Fatalf("the snapshot came in %d pieces, want at least %d", w.pieces, 200/8)
	}
	// Without the hand-off every piece but the first is written before the
	// waiting goroutine runs (the stream takes far less than 10 ms); with
	// it, a collection's stop-the-world preempting that goroutine just
	// before it ticks can still cost one piece now and then.
	if w.held > w.pieces/5 {
		t.Errorf("%d of %d pieces were written without the waiting goroutine running since the piece before", w.held, w.pieces)
	}
}
