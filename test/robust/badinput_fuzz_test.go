package robust_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

const (
	// fuzzConns is how many mutated streams are sent, fuzzParallel at once.
	fuzzConns    = 200
	fuzzParallel = 16
	// fuzzSeed makes the mutations reproducible; a failure names the
	// connection number, which with the seed gives its bytes.
	fuzzSeed = 20240611
)

// fuzzBase is a valid client stream: a handshake and a few requests of
// every shape (strings, buffers, ACL vectors, multi, watches), ending with
// closeSession. Paths stay under /fz so no mutation plausibly touches the
// well-behaved client's node.
func fuzzBase(i int) []byte {
	path := fmt.Sprintf("/fz%d", i)
	b := proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)})
	b = proto.AppendRequestFrame(b, 1, proto.OpCreate, &proto.CreateRequest{Path: path, Data: []byte("data"), ACL: openACL})
	b = proto.AppendRequestFrame(b, 2, proto.OpSetData, &proto.SetDataRequest{Path: path, Data: []byte("more"), Version: -1})
	b = proto.AppendRequestFrame(b, 3, proto.OpGetData, &proto.GetDataRequest{Path: path, Watch: true})
	b = proto.AppendRequestFrame(b, 4, proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
		{Op: proto.OpCreate, Path: path + "/m", ACL: openACL},
		{Op: proto.OpCheck, Path: path, Version: 1},
		{Op: proto.OpDelete, Path: path + "/m", Version: -1},
	}})
	b = proto.AppendRequestFrame(b, 5, proto.OpGetChildren2, &proto.GetChildren2Request{Path: path, Watch: true})
	b = proto.AppendRequestFrame(b, 6, proto.OpSetACL, &proto.SetACLRequest{Path: path, ACL: openACL, Version: -1})
	b = proto.AppendRequestFrame(b, 7, proto.OpAddWatch, &proto.AddWatchRequest{Path: path, Mode: proto.AddWatchPersistentRecursive})
	b = proto.AppendRequestFrame(b, proto.XidSetWatches, proto.OpSetWatches, &proto.SetWatches{DataWatches: []string{path}})
	b = proto.AppendRequestFrame(b, 8, proto.OpDelete, &proto.DeleteRequest{Path: path, Version: -1})
	return proto.AppendRequestFrame(b, 9, proto.OpCloseSession, nil)
}

// interesting are int32 values that stress length fields.
var interesting = []int32{-1, 0, 1, 16, 255, 4096, proto.DefaultMaxBuffer, proto.DefaultMaxBuffer + 1, math.MaxInt32, math.MinInt32}

// mutate applies one to four random edits to b.
func mutate(rng *rand.Rand, b []byte) []byte {
	for range 1 + rng.IntN(4) {
		if len(b) < 8 {
			break
		}
		at := rng.IntN(len(b))
		switch rng.IntN(7) {
		case 0: // flip a bit
			b[at] ^= 1 << rng.IntN(8)
		case 1: // set a byte
			b[at] = byte(rng.Uint32())
		case 2: // an interesting int32
			if at+4 <= len(b) {
				binary.BigEndian.PutUint32(b[at:], uint32(interesting[rng.IntN(len(interesting))]))
			}
		case 3: // insert random bytes
			ins := make([]byte, 1+rng.IntN(16))
			for i := range ins {
				ins[i] = byte(rng.Uint32())
			}
			b = append(b[:at], append(ins, b[at:]...)...)
		case 4: // delete a range
			end := min(len(b), at+1+rng.IntN(16))
			b = append(b[:at], b[end:]...)
		case 5: // truncate
			b = b[:at]
		case 6: // duplicate a range
			end := min(len(b), at+1+rng.IntN(64))
			b = append(b[:end], append(append([]byte(nil), b[at:end]...), b[end:]...)...)
		}
	}
	return b
}

// fuzzFrames sends fuzzConns mutated streams, each on its own connection,
// then half-closes it: the server must close every connection (it has
// either rejected the input or seen the end of the stream) within a
// deadline, and never hang or crash.
func fuzzFrames(t *testing.T, p *zktest.Process) {
	rng := rand.New(rand.NewPCG(fuzzSeed, 0))
	streams := make([][]byte, fuzzConns)
	for i := range streams {
		streams[i] = mutate(rng, fuzzBase(i))
	}
	var answered, replyBytes atomic.Int64
	sem := make(chan struct{}, fuzzParallel)
	var wg sync.WaitGroup
	for i, stream := range streams {
		sem <- struct{}{}
		c := dialRaw(t, p.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer c.nc.Close()
			c.write(stream) // the server may close early; that is fine
			if tc, ok := c.nc.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			n, err := c.drainUntilClosed(badHandshakeTimeout + 5*time.Second)
			if err != nil {
				t.Errorf("fuzzed stream #%d (seed %d, %d bytes): %v", i, fuzzSeed, len(stream), err)
			}
			if n > 0 {
				answered.Add(1)
				replyBytes.Add(n)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d fuzzed streams got an answer (%d bytes in all)", answered.Load(), fuzzConns, replyBytes.Load())
	if answered.Load() == 0 {
		t.Errorf("no fuzzed stream got past the handshake: the mutations test nothing")
	}
	checkAlive(t, p)
}
