package zk_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

func FuzzParseConnectString(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:2181", "a:1,b:2,c:3/chroot/x", "[::1]:2181", "::1", "host", "h:1/", "h:1//x",
		",,,", "/only/chroot", "h:1/a/../b", "[::1", "h:1/\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, root, err := zk.ParseConnectString(s)
		if err != nil {
			if !errors.Is(err, zk.ErrBadConnectString) {
				t.Fatalf("ParseConnectString(%q) error %v does not wrap ErrBadConnectString", s, err)
			}
			return
		}
		if len(hosts) == 0 {
			t.Fatalf("ParseConnectString(%q) = no hosts and no error", s)
		}
		for _, h := range hosts {
			if _, _, err := net.SplitHostPort(h); err != nil {
				t.Fatalf("ParseConnectString(%q) host %q is not host:port: %v", s, h, err)
			}
		}
		if root != "" && (!strings.HasPrefix(root, "/") || strings.HasSuffix(root, "/")) {
			t.Fatalf("ParseConnectString(%q) chroot %q", s, root)
		}
	})
}

// FuzzServerBytes feeds arbitrary bytes to the client as a server's replies
// after a valid handshake: the client must not panic, must complete every
// call exactly once, and must close promptly.
func FuzzServerBytes(f *testing.F) {
	reply := func(xid int32, zxid int64, err proto.ErrCode, resp proto.Response) []byte {
		return proto.AppendReplyFrame(nil, proto.ReplyHeader{Xid: xid, Zxid: zxid, Err: err}, resp)
	}
	f.Add(reply(1, 5, proto.ErrOK, &proto.GetDataResponse{Data: []byte("x")}))
	f.Add(reply(-1, 5, proto.ErrOK, &proto.WatcherEvent{Type: proto.EventNodeDataChanged, State: 3, Path: "/a"}))
	f.Add(reply(1, 5, proto.ErrNoNode, nil))
	f.Add(reply(7, 5, proto.ErrOK, nil))
	f.Add(reply(-4, 0, proto.ErrAuthFailed, nil))
	f.Add([]byte{0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var dials sync.Mutex
		dialed := false
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Lock()
			defer dials.Unlock()
			if dialed {
				return nil, errors.New("fuzz server gone")
			}
			dialed = true
			cli, srv := net.Pipe()
			go fuzzServer(srv, data)
			return cli, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := zk.Connect(ctx, "fuzz:2181", zk.WithDialer(dial), zk.WithSessionTimeout(2*time.Second))
		if errors.Is(err, zk.ErrAuthFailed) {
			// The bytes began with an auth failure, which the client
			// may read before Connect returns: a legitimate outcome.
			return
		}
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		const calls = 3
		var mu sync.Mutex
		got := 0
		done := make(chan struct{})
		for i := 0; i < calls; i++ {
			c.GetAsync(ctx, "/a", zk.WatcherFunc(func(zk.Event) {}), func([]byte, *zk.Stat, error) {
				mu.Lock()
				got++
				if got == calls {
					close(done)
				}
				if got > calls {
					t.Errorf("callback ran %d times for %d calls", got, calls)
				}
				mu.Unlock()
			})
		}
		c.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d callbacks ran after Close", got, calls)
		}
	})
}

// fuzzServer answers the handshake, then writes data and hangs up, reading
// and discarding whatever the client sends.
func fuzzServer(nc net.Conn, data []byte) {
	defer nc.Close()
	if _, err := proto.ReadFrame(nc, nil, proto.DefaultMaxBuffer); err != nil {
		return
	}
	resp := proto.ConnectResponse{TimeOut: 2000, SessionID: 1, Passwd: make([]byte, 16)}
	if _, err := nc.Write(proto.AppendRecordFrame(nil, &resp)); err != nil {
		return
	}
	go io.Copy(io.Discard, nc)
	nc.Write(data)
}
