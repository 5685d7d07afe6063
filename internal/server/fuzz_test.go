package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
)

// FuzzClientStream sends a client's byte stream, guided by coverage of the
// whole server (decoding, the request paths, apply, watches, ACLs,
// four-letter words), to an in-process standalone server, each input on a
// connection of its own: with handshake set the input follows a valid
// handshake, otherwise it is the whole stream (handshake and four-letter
// words included). The write side is then closed, and the server must
// answer what it accepts and close the connection within a deadline, never
// panic (a panic ends the fuzzing process), and still answer a
// well-behaved client after every input.
//
// test/robust's TestBadInput mutates streams at random against a server
// process; this target lets the fuzzer find the inputs that reach new code.
func FuzzClientStream(f *testing.F) {
	for _, seed := range clientStreamSeeds(f) {
		f.Add(seed.handshake, seed.stream)
	}
	s := startServer(f, fuzzConfig)
	ctl := &controlClient{addr: s.Addr().String()}
	f.Cleanup(ctl.close)
	f.Fuzz(func(t *testing.T, handshake bool, stream []byte) {
		sendStream(t, ctl, handshake, stream)
	})
}

// FuzzClientStreamEnsemble is FuzzClientStream against an in-process
// ensemble of two voters and an observer, each input sent to the member
// its first argument picks: writes forwarded to the leader, sync through raft's
// ReadIndex, sessions created, touched and closed through the log from any
// member.
func FuzzClientStreamEnsemble(f *testing.F) {
	seeds := clientStreamSeeds(f)
	for m := range uint8(3) {
		for _, seed := range seeds {
			f.Add(m, seed.handshake, seed.stream)
		}
	}
	ms := startEnsembleWith(f, 2, 1, fuzzConfig)
	ctls := make([]*controlClient, len(ms))
	for i, s := range ms {
		ctls[i] = &controlClient{addr: s.Addr().String()}
		f.Cleanup(ctls[i].close)
	}
	f.Fuzz(func(t *testing.T, member uint8, handshake bool, stream []byte) {
		sendStream(t, ctls[int(member)%len(ctls)], handshake, stream)
	})
}

// fuzzConfig turns on what the fuzz targets' seeds use: TTL nodes and a
// super user.
func fuzzConfig(c *config.Config) {
	c.ExtendedTypesEnabled = true
	c.SuperDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" // password "test"
}

// appendSuperAuth appends to b the auth request that makes a session
// fuzzConfig's super user.
func appendSuperAuth(b []byte) []byte {
	return proto.AppendRequestFrame(b, proto.XidAuth, proto.OpAuth,
		&proto.AuthPacket{Scheme: "digest", Auth: []byte("super:test")})
}

// sendStream sends stream on a new connection to ctl's server (after a
// handshake of its own when handshake is set), closes the write side, and
// fails t unless the server closes the connection within
// fuzzStreamDeadline and then answers ctl's well-behaved session.
func sendStream(t *testing.T, ctl *controlClient, handshake bool, stream []byte) {
	nc, err := net.DialTimeout("tcp", ctl.addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(fuzzStreamDeadline))
	br := bufio.NewReader(nc)
	if handshake {
		req := proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)})
		if _, err := nc.Write(req); err != nil {
			t.Fatalf("handshake: %v", err)
		}
		if _, err := proto.ReadFrame(br, nil, 1<<20); err != nil {
			t.Fatalf("handshake reply: %v", err)
		}
	}
	// The server may close the connection before it has read it all (a
	// bad frame); a failed write is then expected.
	nc.Write(stream)
	nc.(*net.TCPConn).CloseWrite()
	if _, err := io.Copy(io.Discard, br); err != nil && !isReset(err) {
		t.Fatalf("the server neither answered nor closed the connection (%d-byte stream, handshake %v): %v",
			len(stream), handshake, err)
	}
	if err := ctl.check(); err != nil {
		t.Fatalf("after a %d-byte stream (handshake %v), a well-behaved client: %v", len(stream), handshake, err)
	}
}

// fuzzStreamDeadline bounds how long the server may take to answer one
// fuzzed stream and close its connection.
const fuzzStreamDeadline = 10 * time.Second

// isReset reports whether err is the server resetting the connection, as
// the kernel does when the server closes it with input left unread (after
// a rejected frame).
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// controlClient is the well-behaved client of the fuzz targets, one per
// server: one session, redialled if its connection is gone, that reads "/".
type controlClient struct {
	mu   sync.Mutex
	addr string
	nc   net.Conn
	br   *bufio.Reader
	xid  int32
}

// check reads "/" (and opens the root again, see openRoot) and reports an
// error unless the server answers within fuzzStreamDeadline. A connection
// that fails is dialled again until then: the session may have expired
// while the fuzzer was busy elsewhere, and an ensemble member closes its
// connections while it has no leader. The error names the first failure
// as well as the last, which is often only the deadline's.
func (c *controlClient) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	if c.nc != nil {
		if first = c.exists(); first == nil {
			return nil
		}
		c.nc.Close()
		c.nc = nil
	}
	deadline := time.Now().Add(fuzzStreamDeadline)
	for {
		err := c.connect(deadline)
		if err == nil {
			if err = c.exists(); err == nil {
				return nil
			}
		}
		if first == nil {
			first = err
		}
		if c.nc != nil {
			c.nc.Close()
			c.nc = nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (first: %v)", err, first)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// connect opens the well-behaved session.
func (c *controlClient) connect(deadline time.Time) error {
	nc, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	c.nc, c.br = nc, bufio.NewReader(nc)
	nc.SetDeadline(deadline)
	if _, err := nc.Write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	b, err := proto.ReadFrame(c.br, nil, 1<<20)
	if err != nil {
		return fmt.Errorf("handshake reply: %w", err)
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(b, &resp); err != nil || resp.SessionID == 0 {
		return fmt.Errorf("handshake reply %x: no session (%v)", b, err)
	}
	// As the super user, so that an input that takes READ away from "/"
	// (a super user's setACL does) leaves the check's read allowed.
	if _, err := nc.Write(appendSuperAuth(nil)); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	_, err = c.await(proto.XidAuth, "auth")
	return err
}

// exists sends exists("/") and waits for its reply, then opens the root
// again if an input closed it (openRoot).
func (c *controlClient) exists() error {
	c.nc.SetDeadline(time.Now().Add(fuzzStreamDeadline))
	c.xid++
	if _, err := c.nc.Write(proto.AppendRequestFrame(nil, c.xid, proto.OpExists, &proto.ExistsRequest{Path: "/"})); err != nil {
		return fmt.Errorf("exists /: %w", err)
	}
	if _, err := c.await(c.xid, "exists /"); err != nil {
		return err
	}
	return c.openRoot()
}

// openACL is the ACL "/" starts with.
var openACL = proto.ACL{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}

// openRoot gives "/" its starting ACL back if an input changed it (a super
// user may), so that every input finds the root the seeds were written
// for, open to everyone.
func (c *controlClient) openRoot() error {
	c.xid++
	if _, err := c.nc.Write(proto.AppendRequestFrame(nil, c.xid, proto.OpGetACL, &proto.GetACLRequest{Path: "/"})); err != nil {
		return fmt.Errorf("getACL /: %w", err)
	}
	d, err := c.await(c.xid, "getACL /")
	if err != nil {
		return err
	}
	var r proto.GetACLResponse
	r.Decode(d)
	if d.Err() != nil {
		return fmt.Errorf("getACL / reply: %w", d.Err())
	}
	if len(r.ACL) == 1 && r.ACL[0] == openACL {
		return nil
	}
	c.xid++
	req := &proto.SetACLRequest{Path: "/", ACL: []proto.ACL{openACL}, Version: -1}
	if _, err := c.nc.Write(proto.AppendRequestFrame(nil, c.xid, proto.OpSetACL, req)); err != nil {
		return fmt.Errorf("setACL /: %w", err)
	}
	_, err = c.await(c.xid, "setACL /")
	return err
}

// await reads replies until the one with xid and returns a decoder of its
// body, or an error unless it succeeded; what names the request in the
// error.
func (c *controlClient) await(xid int32, what string) (*proto.Decoder, error) {
	for {
		b, err := proto.ReadFrame(c.br, nil, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("%s reply: %w", what, err)
		}
		d := proto.NewDecoder(b)
		var h proto.ReplyHeader
		h.Decode(d)
		if h.Xid != xid {
			continue // not ours (none expected)
		}
		if h.Err != proto.ErrOK {
			return nil, fmt.Errorf("%s: %v", what, h.Err)
		}
		return d, nil
	}
}

func (c *controlClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nc != nil {
		c.nc.Close()
	}
}

// clientStreamSeed is one seed of FuzzClientStream.
type clientStreamSeed struct {
	handshake bool
	stream    []byte
}

// clientStreamSeeds returns streams that reach every request path: each
// request alone after a handshake, all of them in one session, a session
// that authenticates as the super user and as a digest user, the requests
// Apache ZooKeeper's Java client sent (internal/proto/testdata), and
// four-letter words.
func clientStreamSeeds(f *testing.F) []clientStreamSeed {
	open := []proto.ACL{openACL}
	digest := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="}}}
	type req struct {
		xid int32
		op  proto.OpCode
		r   proto.Request
	}
	reqs := []req{
		{0, proto.OpCreate, &proto.CreateRequest{Path: "/f", Data: []byte("data"), ACL: open}},
		{0, proto.OpCreate2, &proto.CreateRequest{Path: "/f/s-", Data: []byte("x"), ACL: open, Flags: 2}},
		{0, proto.OpCreate, &proto.CreateRequest{Path: "/f/e", ACL: open, Flags: 1}},
		{0, proto.OpCreateContainer, &proto.CreateRequest{Path: "/c", ACL: open, Flags: 4}},
		{0, proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/t", ACL: open, Flags: 5, TTL: 100}},
		{0, proto.OpGetData, &proto.GetDataRequest{Path: "/f", Watch: true}},
		{0, proto.OpExists, &proto.ExistsRequest{Path: "/f/none", Watch: true}},
		{0, proto.OpGetChildren2, &proto.GetChildren2Request{Path: "/f", Watch: true}},
		{0, proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/", Watch: true}},
		{0, proto.OpAddWatch, &proto.AddWatchRequest{Path: "/f", Mode: proto.AddWatchPersistentRecursive}},
		{0, proto.OpAddWatch, &proto.AddWatchRequest{Path: "/c", Mode: proto.AddWatchPersistent}},
		{0, proto.OpSetData, &proto.SetDataRequest{Path: "/f", Data: []byte("more"), Version: 0}},
		{0, proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpCreate, Path: "/f/m", ACL: open},
			{Op: proto.OpCheck, Path: "/f", Version: 1},
			{Op: proto.OpSetData, Path: "/f/m", Data: []byte("m"), Version: -1},
			{Op: proto.OpDelete, Path: "/f/m", Version: -1},
		}}},
		{0, proto.OpMultiRead, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpGetData, Path: "/f"},
			{Op: proto.OpGetChildren, Path: "/f"},
		}}},
		{0, proto.OpGetACL, &proto.GetACLRequest{Path: "/f"}},
		{0, proto.OpSetACL, &proto.SetACLRequest{Path: "/c", ACL: digest, Version: -1}},
		{proto.XidAuth, proto.OpAuth, &proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}},
		{0, proto.OpGetData, &proto.GetDataRequest{Path: "/c"}},
		{0, proto.OpWhoAmI, nil},
		{0, proto.OpCheckWatches, &proto.CheckWatchesRequest{Path: "/f", Type: 1}},
		{0, proto.OpRemoveWatches, &proto.RemoveWatchesRequest{Path: "/f", Type: 3}},
		{proto.XidSetWatches, proto.OpSetWatches2, &proto.SetWatches2{RelativeZxid: 1,
			DataWatches: []string{"/f"}, ExistWatches: []string{"/x"}, ChildWatches: []string{"/"},
			PersistentWatches: []string{"/c"}, PersistentRecursiveWatches: []string{"/"}}},
		{proto.XidSetWatches, proto.OpSetWatches, &proto.SetWatches{RelativeZxid: 0, DataWatches: []string{"/f"}}},
		{0, proto.OpGetEphemerals, &proto.GetEphemeralsRequest{PrefixPath: "/"}},
		{0, proto.OpGetAllChildrenNumber, &proto.GetAllChildrenNumberRequest{Path: "/"}},
		{0, proto.OpSync, &proto.SyncRequest{Path: "/f"}},
		{proto.XidPing, proto.OpPing, nil},
		{0, proto.OpDelete, &proto.DeleteRequest{Path: "/f/e", Version: -1}},
		{0, proto.OpDeleteContainer, &proto.DeleteContainerRequest{Path: "/c"}},
		{0, proto.OpReconfig, nil},
		{0, proto.OpSASL, nil},
		{0, proto.OpCreateSession, nil},
		{0, proto.OpCheck, &proto.CheckVersionRequest{Path: "/f", Version: 1}},
		{0, proto.OpCloseSession, nil},
	}
	frame := func(b []byte, i int, r req) []byte {
		xid := r.xid
		if xid == 0 {
			xid = int32(i + 1)
		}
		return proto.AppendRequestFrame(b, xid, r.op, r.r)
	}
	var seeds []clientStreamSeed
	var all []byte
	for i, r := range reqs {
		seeds = append(seeds, clientStreamSeed{true, frame(nil, i, r)})
		all = frame(all, i, r)
	}
	seeds = append(seeds, clientStreamSeed{true, all})
	// Requests that end the connection (OpCheck above among them): not
	// valid as a request, or an opcode nobody knows.
	for _, op := range []proto.OpCode{proto.OpError, proto.OpNotification, 999} {
		seeds = append(seeds, clientStreamSeed{true, proto.AppendRequestFrame(nil, 1, op, nil)})
	}
	super := proto.AppendRequestFrame(appendSuperAuth(nil), 1, proto.OpSetACL, &proto.SetACLRequest{Path: "/", ACL: open, Version: -1})
	seeds = append(seeds, clientStreamSeed{true, super})
	// The super user takes every permission but ADMIN away from "/": the
	// check reads "/" as the super user and opens the root again.
	closed := proto.AppendRequestFrame(appendSuperAuth(nil), 1, proto.OpSetACL, &proto.SetACLRequest{Path: "/",
		ACL: []proto.ACL{{Perms: proto.PermAdmin, ID: proto.ID{Scheme: "world", ID: "anyone"}}}, Version: -1})
	seeds = append(seeds, clientStreamSeed{true, closed})
	// Without the test's handshake: a handshake of its own (a new session,
	// and a reattach to one that does not exist), then requests.
	hs := proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)})
	seeds = append(seeds, clientStreamSeed{false, append(hs, all...)})
	seeds = append(seeds, clientStreamSeed{false, proto.AppendRecordFrame(nil,
		&proto.ConnectRequest{LastZxidSeen: 1 << 40, TimeOut: 4000, SessionID: 0x1234, Passwd: make([]byte, 16)})})
	// An old client's handshake, without the readOnly byte, and a
	// read-only client's.
	seeds = append(seeds, clientStreamSeed{false, append(proto.AppendRecordFrame(nil,
		&proto.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16), OmitReadOnly: true}), all...)})
	seeds = append(seeds, clientStreamSeed{false, proto.AppendRecordFrame(nil,
		&proto.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16), ReadOnly: true})})
	java, err := filepath.Glob(filepath.Join("..", "proto", "testdata", "java_*.bin"))
	if err != nil || len(java) == 0 {
		f.Fatalf("no Java client frames in ../proto/testdata: %v", err)
	}
	var javaStream []byte
	for _, p := range java {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if filepath.Base(p) == "java_connect.bin" {
			javaStream = append(b, javaStream...)
			continue
		}
		seeds = append(seeds, clientStreamSeed{true, b})
		javaStream = append(javaStream, b...)
	}
	seeds = append(seeds, clientStreamSeed{false, javaStream})
	for _, w := range []string{"ruok", "stat", "srvr", "mntr", "cons", "wchc", "wchp", "dump", "conf", "envi", "crst", "srst", "dirs", "isro", "wchs", "gtmk", "hash"} {
		seeds = append(seeds, clientStreamSeed{false, []byte(w)})
	}
	// stmk reads an 8-byte mask after the word.
	seeds = append(seeds, clientStreamSeed{false, []byte("stmk\x00\x00\x00\x00\x00\x00\x01\x32")})
	return seeds
}
