//go:build capture

// Command capture records golden reply frames from a real Apache
// ZooKeeper 3.8 server for the proto package's tests.
//
// It starts a standalone ZooKeeper (Debian's jars, QuorumPeerMain) on a
// free loopback port with its own zoo.cfg in a temporary directory, sends
// requests encoded by package proto over raw TCP, and writes every frame
// the server sends back, length prefix included, to <out>/<case>.bin.
// Notifications that arrive before a reply are written to
// <out>/<case>_event<N>.bin. It then runs ZooKeeper's own Java client
// (ZooKeeperMain, as zkCli.sh does) through a recording proxy and writes
// the client's request frames to <out>/java_<op>_<N>.bin. The server is
// killed by PID on exit.
//
// Run it from the repository root (see internal/proto/testdata/README.md):
//
//	go run -tags capture ./internal/proto/internal/capture -out internal/proto/testdata
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

func main() {
	out := flag.String("out", "internal/proto/testdata", "directory to write the .bin files to")
	java := flag.String("java", "/usr/bin/java", "java binary")
	classpath := flag.String("classpath", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
		"classpath holding ZooKeeper and an slf4j binding (zookeeper.jar's manifest lists its other jars)")
	keep := flag.Bool("keep", false, "keep the temporary directory (zoo.cfg, data, zk.log)")
	flag.Parse()
	if err := run(*out, *java, *classpath, *keep); err != nil {
		log.Fatalf("capture: %v", err)
	}
}

func run(out, java, classpath string, keep bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating output directory: %w", err)
	}
	dir, err := os.MkdirTemp("", "paddock-capture-")
	if err != nil {
		return fmt.Errorf("creating temp dir: %w", err)
	}
	if !keep {
		defer os.RemoveAll(dir)
	} else {
		log.Printf("keeping %s", dir)
	}
	zk, err := startZooKeeper(dir, java, classpath)
	if err != nil {
		return err
	}
	defer zk.stop()
	log.Printf("ZooKeeper pid %d serving on %s", zk.cmd.Process.Pid, zk.addr)

	w := &writer{dir: out}
	if err := captureMain(zk.addr, w); err != nil {
		return fmt.Errorf("main session: %w (server log: %s)", err, filepath.Join(dir, "zk.log"))
	}
	if err := captureOldClient(zk.addr, w); err != nil {
		return fmt.Errorf("old-client session: %w", err)
	}
	if err := captureExpired(zk.addr, w, w.closedSession); err != nil {
		return fmt.Errorf("expired session: %w", err)
	}
	if err := captureJavaClient(zk.addr, w, java, classpath); err != nil {
		return fmt.Errorf("Java client: %w", err)
	}
	log.Printf("wrote %d files to %s", w.n, out)
	return nil
}

// server is a running ZooKeeper process.
type server struct {
	cmd  *exec.Cmd
	addr string
	log  *os.File
}

func startZooKeeper(dir, java, classpath string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfg := strings.Join([]string{
		"tickTime=2000",
		"dataDir=" + filepath.Join(dir, "data"),
		fmt.Sprintf("clientPort=%d", port),
		"clientPortAddress=127.0.0.1",
		"admin.enableServer=false",
		"4lw.commands.whitelist=*",
		"extendedTypesEnabled=true",
		"maxClientCnxns=0",
		"",
	}, "\n")
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("writing zoo.cfg: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "zk.log"))
	if err != nil {
		return nil, fmt.Errorf("creating zk.log: %w", err)
	}
	cmd := exec.Command(java,
		"-Dzookeeper.extendedTypesEnabled=true",
		"-Dzookeeper.admin.enableServer=false",
		"-cp", classpath,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", java, err)
	}
	s := &server{cmd: cmd, addr: addr, log: logf}
	if err := waitServing(addr, 30*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w (server log: %s)", err, logf.Name())
	}
	return s, nil
}

// stop kills the server by PID and reaps it.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	s.log.Close()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitServing polls the srvr four-letter word until the server reports
// standalone mode or the deadline passes.
func waitServing(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		if out, err := fourLetter(addr, "srvr"); err == nil && strings.Contains(out, "Mode: standalone") {
			return nil
		} else if err != nil {
			last = err.Error()
		} else {
			last = out
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ZooKeeper on %s not serving after %v: %s", addr, timeout, last)
		case <-tick.C:
		}
	}
}

func fourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// writer saves frames as named files.
type writer struct {
	dir string
	n   int
	// closedSession is the main session, closed by the end of captureMain.
	closedSession credentials
}

// credentials identify a session for a resume attempt.
type credentials struct {
	id     int64
	passwd []byte
}

func (w *writer) save(name string, frame []byte) error {
	w.n++
	return os.WriteFile(filepath.Join(w.dir, name+".bin"), frame, 0o644)
}

// conn is a raw client connection.
type conn struct {
	c   net.Conn
	r   *bufio.Reader
	w   *writer
	xid int32
	// lastZxid is the zxid of the latest reply header.
	lastZxid int64
}

func dial(addr string, w *writer) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	return &conn{c: c, r: bufio.NewReader(c), w: w}, nil
}

// readFrame reads one frame and returns it with its length prefix.
func (c *conn) readFrame() ([]byte, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	payload, err := proto.ReadFrame(c.r, nil, proto.DefaultMaxBuffer)
	if err != nil {
		return nil, err
	}
	frame := proto.AppendInt32(nil, int32(len(payload)))
	return append(frame, payload...), nil
}

func (c *conn) write(frame []byte) error {
	_ = c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.c.Write(frame)
	return err
}

// handshake sends req and saves the ConnectResponse frame as name.
func (c *conn) handshake(name string, req *proto.ConnectRequest) (*proto.ConnectResponse, error) {
	if err := c.write(proto.AppendRecordFrame(nil, req)); err != nil {
		return nil, fmt.Errorf("sending ConnectRequest: %w", err)
	}
	frame, err := c.readFrame()
	if err != nil {
		return nil, fmt.Errorf("reading ConnectResponse: %w", err)
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(frame[4:], &resp); err != nil {
		return nil, fmt.Errorf("decoding ConnectResponse: %w", err)
	}
	return &resp, c.w.save(name, frame)
}

// call sends op with the given xid (0 = next normal xid), saves the
// reply as name and any notification that precedes it as
// name_event<N>. It returns the reply header.
func (c *conn) call(name string, xid int32, op proto.OpCode, req proto.Request) (proto.ReplyHeader, error) {
	if xid == 0 {
		c.xid++
		xid = c.xid
	}
	var h proto.ReplyHeader
	if err := c.write(proto.AppendRequestFrame(nil, xid, op, req)); err != nil {
		return h, fmt.Errorf("%s: sending %v: %w", name, op, err)
	}
	for events := 0; events < 64; {
		frame, err := c.readFrame()
		if err != nil {
			return h, fmt.Errorf("%s: reading reply to %v: %w", name, op, err)
		}
		if err := proto.Unmarshal(frame[4:], &h); err != nil {
			return h, fmt.Errorf("%s: decoding reply header: %w", name, err)
		}
		if h.Xid == proto.XidNotification {
			if err := c.w.save(fmt.Sprintf("%s_event%d", name, events), frame); err != nil {
				return h, err
			}
			events++
			continue
		}
		if h.Xid != xid {
			return h, fmt.Errorf("%s: reply xid %d, want %d", name, h.Xid, xid)
		}
		if h.Zxid > c.lastZxid {
			c.lastZxid = h.Zxid
		}
		log.Printf("%-28s %-22v err=%d", name, op, h.Err)
		return h, c.w.save(name, frame)
	}
	return h, fmt.Errorf("%s: too many notifications before the reply", name)
}

// expectClosed reads until the server closes the connection, saving any
// frame it still sends as name_after<N>.
func (c *conn) expectClosed(name string) error {
	for i := 0; i < 8; i++ {
		frame, err := c.readFrame()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && !ne.Timeout() {
			return nil // connection reset
		}
		if err != nil {
			return fmt.Errorf("%s: waiting for close: %w", name, err)
		}
		if err := c.w.save(fmt.Sprintf("%s_after%d", name, i), frame); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: server kept sending frames instead of closing", name)
}

var openACL = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}

func captureMain(addr string, w *writer) error {
	c, err := dial(addr, w)
	if err != nil {
		return err
	}
	defer c.c.Close()
	resp, err := c.handshake("connect_response", &proto.ConnectRequest{
		TimeOut: 30000, Passwd: make([]byte, 16),
	})
	if err != nil {
		return err
	}
	w.closedSession.id, w.closedSession.passwd = resp.SessionID, resp.Passwd

	type step struct {
		name string
		xid  int32
		op   proto.OpCode
		req  proto.Request
	}
	steps := []step{
		{"create", 0, proto.OpCreate, &proto.CreateRequest{Path: "/golden", Data: []byte("hello"), ACL: openACL}},
		{"create_nodeexists", 0, proto.OpCreate, &proto.CreateRequest{Path: "/golden", Data: []byte("again"), ACL: openACL}},
		{"create2", 0, proto.OpCreate2, &proto.CreateRequest{Path: "/golden/c2", Data: []byte{}, ACL: openACL}},
		{"create2_sequential", 0, proto.OpCreate2, &proto.CreateRequest{Path: "/golden/seq-", Data: []byte("s"), ACL: openACL, Flags: proto.FlagPersistentSequential}},
		{"create_container", 0, proto.OpCreateContainer, &proto.CreateRequest{Path: "/golden/container", ACL: openACL, Flags: proto.FlagContainer}},
		{"create_ttl", 0, proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/golden/ttl", Data: []byte("t"), ACL: openACL, Flags: proto.FlagPersistentWithTTL, TTL: 600000}},
		{"create_ephemeral", 0, proto.OpCreate, &proto.CreateRequest{Path: "/golden/eph", Data: []byte("e"), ACL: openACL, Flags: proto.FlagEphemeral}},
		{"exists", 0, proto.OpExists, &proto.ExistsRequest{Path: "/golden"}},
		{"exists_nonode", 0, proto.OpExists, &proto.ExistsRequest{Path: "/golden/missing"}},
		{"getdata", 0, proto.OpGetData, &proto.GetDataRequest{Path: "/golden", Watch: true}},
		{"setdata", 0, proto.OpSetData, &proto.SetDataRequest{Path: "/golden", Data: []byte("world"), Version: -1}},
		{"setdata_badversion", 0, proto.OpSetData, &proto.SetDataRequest{Path: "/golden", Data: []byte("x"), Version: 99}},
		{"getchildren", 0, proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/golden"}},
		{"getchildren2", 0, proto.OpGetChildren2, &proto.GetChildren2Request{Path: "/golden"}},
		{"getacl", 0, proto.OpGetACL, &proto.GetACLRequest{Path: "/golden"}},
		{"setacl", 0, proto.OpSetACL, &proto.SetACLRequest{Path: "/golden/c2", Version: -1, ACL: []proto.ACL{
			{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}},
			{Perms: proto.PermRead, ID: proto.ID{Scheme: "ip", ID: "127.0.0.1"}},
		}}},
		{"getacl_two", 0, proto.OpGetACL, &proto.GetACLRequest{Path: "/golden/c2"}},
		{"sync", 0, proto.OpSync, &proto.SyncRequest{Path: "/golden"}},
		{"getallchildrennumber", 0, proto.OpGetAllChildrenNumber, &proto.GetAllChildrenNumberRequest{Path: "/golden"}},
		{"getephemerals", 0, proto.OpGetEphemerals, &proto.GetEphemeralsRequest{PrefixPath: "/"}},
		{"auth", proto.XidAuth, proto.OpAuth, &proto.AuthPacket{Scheme: "digest", Auth: []byte("user:secret")}},
		{"whoami", 0, proto.OpWhoAmI, &proto.Empty{}},
		{"addwatch", 0, proto.OpAddWatch, &proto.AddWatchRequest{Path: "/golden", Mode: proto.AddWatchPersistentRecursive}},
		{"checkwatches", 0, proto.OpCheckWatches, &proto.CheckWatchesRequest{Path: "/golden", Type: proto.WatcherAny}},
		{"removewatches_nowatcher", 0, proto.OpRemoveWatches, &proto.RemoveWatchesRequest{Path: "/golden/missing", Type: proto.WatcherAny}},
		{"removewatches", 0, proto.OpRemoveWatches, &proto.RemoveWatchesRequest{Path: "/golden", Type: proto.WatcherAny}},
		{"multi", 0, proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpCreate, Path: "/golden/m1", Data: []byte("a"), ACL: openACL},
			{Op: proto.OpCreate2, Path: "/golden/m2", Data: []byte("b"), ACL: openACL},
			{Op: proto.OpCreateContainer, Path: "/golden/mc", ACL: openACL, Flags: proto.FlagContainer},
			{Op: proto.OpCreateTTL, Path: "/golden/mt", ACL: openACL, Flags: proto.FlagPersistentWithTTL, TTL: 600000},
			{Op: proto.OpSetData, Path: "/golden/m1", Data: []byte("a2"), Version: -1},
			{Op: proto.OpCheck, Path: "/golden/m1", Version: 1},
			{Op: proto.OpDelete, Path: "/golden/m1", Version: -1},
		}}},
		{"multi_failed", 0, proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpCreate, Path: "/golden/f1", ACL: openACL},
			{Op: proto.OpDelete, Path: "/golden/nonexistent", Version: -1},
			{Op: proto.OpSetData, Path: "/golden", Data: []byte("x"), Version: -1},
		}}},
		{"multiread", 0, proto.OpMultiRead, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpGetData, Path: "/golden"},
			{Op: proto.OpGetChildren, Path: "/golden/m2"},
			{Op: proto.OpGetData, Path: "/golden/missing"},
			{Op: proto.OpGetChildren, Path: "/golden/missing"},
		}}},
		{"multi_empty", 0, proto.OpMulti, &proto.MultiRequest{}},
		{"setwatches", proto.XidSetWatches, proto.OpSetWatches, &proto.SetWatches{
			RelativeZxid: 1,
			DataWatches:  []string{"/golden", "/golden/gone"},
			ExistWatches: []string{"/golden/c2", "/golden/notyet"},
			ChildWatches: []string{"/golden"},
		}},
		{"ping", proto.XidPing, proto.OpPing, &proto.Empty{}},
	}
	for _, s := range steps {
		if _, err := c.call(s.name, s.xid, s.op, s.req); err != nil {
			return err
		}
	}
	// setWatches2 relative to the current zxid arms watches without firing.
	if _, err := c.call("setwatches2", proto.XidSetWatches, proto.OpSetWatches2, &proto.SetWatches2{
		RelativeZxid:               c.lastZxid,
		DataWatches:                []string{},
		ExistWatches:               []string{},
		ChildWatches:               []string{},
		PersistentWatches:          []string{"/golden"},
		PersistentRecursiveWatches: []string{"/golden/c2"},
	}); err != nil {
		return err
	}
	// The persistent watches fire on these changes.
	if _, err := c.call("create_child_persistent", 0, proto.OpCreate, &proto.CreateRequest{Path: "/golden/c2/child", ACL: openACL}); err != nil {
		return err
	}
	if _, err := c.call("delete", 0, proto.OpDelete, &proto.DeleteRequest{Path: "/golden/c2/child", Version: -1}); err != nil {
		return err
	}
	if _, err := c.call("delete_notempty", 0, proto.OpDelete, &proto.DeleteRequest{Path: "/golden", Version: -1}); err != nil {
		return err
	}
	// A top-level check (13) is not captured: ZooKeeper 3.8 hits a
	// NullPointerException serializing its reply and sends nothing
	// (3.9 answers UNIMPLEMENTED).
	if _, err := c.call("close", 0, proto.OpCloseSession, &proto.Empty{}); err != nil {
		return err
	}
	return c.expectClosed("close")
}

// captureOldClient connects without the readOnly byte, then sends an
// unknown opcode, which the server answers with UNIMPLEMENTED.
func captureOldClient(addr string, w *writer) error {
	c, err := dial(addr, w)
	if err != nil {
		return err
	}
	defer c.c.Close()
	resp, err := c.handshake("connect_response_noreadonly", &proto.ConnectRequest{
		TimeOut: 30000, Passwd: make([]byte, 16), OmitReadOnly: true,
	})
	if err != nil {
		return err
	}
	if !resp.OmitReadOnly {
		return errors.New("server sent a readOnly byte to a client that sent none")
	}
	// Old clients (go-zookeeper/zk) ping and use getChildren2 on this shape too.
	if _, err := c.call("old_getchildren2", 0, proto.OpGetChildren2, &proto.GetChildren2Request{Path: "/"}); err != nil {
		return err
	}
	if _, err := c.call("unimplemented", 0, proto.OpCode(99), &proto.Empty{}); err != nil {
		return err
	}
	return c.expectClosed("unimplemented")
}

// captureExpired resumes the closed main session, which the server
// answers with an expired-session ConnectResponse before closing.
func captureExpired(addr string, w *writer, closed credentials) error {
	c, err := dial(addr, w)
	if err != nil {
		return err
	}
	defer c.c.Close()
	resp, err := c.handshake("connect_response_expired", &proto.ConnectRequest{
		TimeOut: 30000, SessionID: closed.id, Passwd: closed.passwd,
	})
	if err != nil {
		return err
	}
	if resp.TimeOut > 0 || !bytes.Equal(resp.Passwd, make([]byte, 16)) {
		log.Printf("note: expired response has timeOut %d", resp.TimeOut)
	}
	return c.expectClosed("connect_response_expired")
}
