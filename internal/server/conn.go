package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/session"
)

// maxQueuedBytes bounds a connection's outbound queue. A client that lets
// more than this pile up is not reading and is disconnected.
const maxQueuedBytes = 64 << 20

// conn is one client connection. The reader goroutine (serve) owns the
// socket's read side; the responder completes requests in order; the writer
// owns the write side.
type conn struct {
	s      *Server
	nc     net.Conn
	ip     string
	remote string
	log    *slog.Logger

	// auth is the connection's authenticated identities (copy on write):
	// read by apply when filtering events, written by the reader.
	auth atomic.Pointer[[]proto.ID]

	sessionID int64
	timeout   int32
	entry     *session.Entry

	items chan *item
	out   outQueue
	// inflight counts items handed to the responder and not yet answered.
	inflight atomic.Int64
	// proposed numbers the connection's writes as the responder proposes
	// them (call.seq); answered is the number of the last one answered.
	// Apply queues a write's reply only if it is the next one to answer,
	// so replies stay in request order even if an earlier write is lost.
	proposed int64
	answered atomic.Int64
	// watched is set once the connection has registered a watch: only
	// then can an event overtake a write's reply (see Server.addWatch).
	watched atomic.Bool
	// id names the connection in its writes' log entries (fsm.Entry.Conn),
	// which apply in the order proposed or not at all: random, never 0.
	// txns counts those writes (fsm.Entry.Seq).
	id   uint64
	txns uint64
	// wmu serialises socket writes (the responder's, and the reader's
	// inline reads) and guards writing and written.
	wmu sync.Mutex
	// writing is set while a writeBehind goroutine owns the socket's
	// write side: the client has not taken everything written so far.
	// written is closed when that goroutine ends.
	writing bool
	written chan struct{}
	// raw is the socket's raw connection, for writes that do not wait
	// (tryWrite); nil where the connection has none. rawWrite is the
	// function tryWrite hands it, made once, and wbuf, wn and werr its
	// argument and results (guarded by wmu).
	raw      syscall.RawConn
	rawWrite func(fd uintptr) bool
	wbuf     []byte
	wn       int
	werr     error
	// free recycles the items of answered reads (see newItem).
	free sync.Pool

	closeOnce      sync.Once
	done           chan struct{}
	closeRequested atomic.Bool
	// active is set by every request; an ensemble follower reports the
	// sessions of active connections to the leader and clears it.
	active atomic.Bool
	// respDone is closed when the responder has stopped: after that the
	// connection proposes nothing more.
	respDone chan struct{}
	respOnce sync.Once

	stats connStats
}

// item is one request waiting for its turn on the responder.
type item struct {
	xid   int32
	op    proto.OpCode
	req   proto.Request
	entry *fsm.Entry // a write, proposed by the responder
	call  *call      // the write once proposed
	reply []byte     // a reply already built by the reader
	err   proto.ErrCode
	close bool // close the connection after this reply
	// slot is set while the item holds one of the server's outstanding
	// request slots (globalOutstandingLimit); see takesSlot.
	slot     bool
	received time.Time
	// auth is the connection's identities when the request came: a read
	// is checked against them, not against those of an auth packet sent
	// after it (ZooKeeper's Request copies them too).
	auth []proto.ID
	// reqs holds the request record of the common reads (req points
	// into it), so that decoding them allocates only the path.
	reqs struct {
		getData   proto.GetDataRequest
		exists    proto.ExistsRequest
		children  proto.GetChildrenRequest
		children2 proto.GetChildren2Request
	}
}

func (s *Server) newConn(nc net.Conn) *conn {
	host, port, _ := net.SplitHostPort(nc.RemoteAddr().String())
	host = javaHostAddress(host)
	c := &conn{
		s:        s,
		nc:       nc,
		ip:       host,
		remote:   net.JoinHostPort(host, port),
		items:    make(chan *item, 256),
		done:     make(chan struct{}),
		respDone: make(chan struct{}),
		id:       rand.Uint64() | 1,
	}
	c.log = s.log.With("client", c.remote)
	c.out.init(maxQueuedBytes)
	// Every connection is authenticated as its address (ZooKeeper's
	// NIOServerCnxn does the same), so ip ACLs work without addauth.
	ids := []proto.ID{{Scheme: acl.IP, ID: host}}
	c.auth.Store(&ids)
	c.stats.established = time.Now()
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
		}
	}
	return c
}

func (c *conn) authIDs() []proto.ID { return *c.auth.Load() }

// debug reports whether the connection's logger records debug lines: the
// per-session lines (established, reattached, closed) are debug, as
// ZooKeeper logs them, and their arguments are formatted only when they
// will be written.
func (c *conn) debug() bool { return c.log.Enabled(context.Background(), slog.LevelDebug) }

func (c *conn) addAuth(ids ...proto.ID) {
	old := c.authIDs()
	next := make([]proto.ID, 0, len(old)+len(ids))
	next = append(next, old...)
	for _, id := range ids {
		dup := false
		for _, o := range next {
			if o == id {
				dup = true
			}
		}
		if !dup {
			next = append(next, id)
		}
	}
	c.auth.Store(&next)
}

// canRead reports whether the connection may see events on a node with ACL list.
func (c *conn) canRead(list []proto.ACL) bool {
	return acl.Allowed(list, proto.PermRead, c.authIDs())
}

// Notify queues a watch event. It is called by apply with the state lock held
// and never blocks.
func (c *conn) Notify(ev proto.WatcherEvent, zxid int64) {
	hdr := proto.ReplyHeader{Xid: proto.XidNotification, Zxid: zxid}
	c.send(proto.AppendReplyFrame(make([]byte, 0, 32+len(ev.Path)), hdr, &ev))
}

// send queues a frame; a connection whose queue overflows is closed.
func (c *conn) send(frame []byte) {
	c.sent(c.out.push(frame))
}

// sendReply encodes a read's reply straight into the outbound queue, so
// answering a read allocates nothing; r (nil for none) is omitted when
// hdr.Err is not ErrOK, as proto.AppendReplyFrame does. It is called only
// by the reader (inline reads) and the responder, which flush the queue
// themselves, so it does not wake the responder.
func (c *conn) sendReply(hdr proto.ReplyHeader, r *readReply) {
	b, start := proto.StartFrame(c.out.begin())
	b = hdr.Append(b)
	if r != nil && hdr.Err == proto.ErrOK {
		b = r.append(b)
	}
	_ = proto.FinishFrame(b, start) // start is valid by construction
	c.sent(c.out.end(b))
}

// sent counts a queued frame; a connection whose queue overflowed (ok
// false) is closed.
func (c *conn) sent(ok bool) {
	if !ok {
		c.log.Warn("closing connection: client is not reading its replies", "queued_bytes", c.out.size())
		c.close()
	}
	c.countSent()
}

// countSent counts a packet sent that goes out without the outbound queue
// (the ConnectResponse), for the connection and the server.
func (c *conn) countSent() {
	c.stats.sent.Add(1)
	c.s.stats.sent.Add(1)
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.nc.Close()
		c.out.shutdown()
	})
}

// serve runs the connection: handshake, then the request loop.
func (c *conn) serve() {
	defer c.s.dropConn(c)
	defer c.responderDone() // a connection that never got to respond
	defer c.close()
	br := c.s.getReader(c.nc)
	defer c.s.putReader(br)
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	var first [4]byte
	if _, err := io.ReadFull(br, first[:]); err != nil {
		return
	}
	if cmd, ok := proto.IsFourLetterWord(first); ok {
		c.s.fourLetterWord(c, cmd, br)
		return
	}
	if !c.s.serving.Load() {
		// An ensemble member without a leader: the client tries another
		// server, as with ZooKeeper.
		c.log.Info("closing connection: not serving (no leader)")
		return
	}
	frame, err := proto.ReadFramePayload(br, first, nil, c.s.cfg.JuteMaxBuffer)
	if err != nil {
		c.logFrameError(err)
		return
	}
	// ZooKeeper counts the ConnectRequest as a packet received, for the
	// connection and the server, whatever becomes of it.
	c.stats.received.Add(1)
	c.s.stats.received.Add(1)
	if !c.handshake(frame, br) {
		return
	}
	c.nc.SetReadDeadline(time.Time{})

	go func() { defer c.responderDone(); c.respond() }()
	defer func() { <-c.respDone }()
	defer close(c.items)

	buf := make([]byte, 0, 4096)
	unflushed := 0 // inline replies queued but not written yet
	for {
		// Inline replies go out together, once no further whole request
		// is buffered (before the reader could block) or after a batch.
		if unflushed > 0 && (unflushed >= maxInlineBatch || !frameBuffered(br)) {
			unflushed = 0
			if !c.flush() {
				c.close()
			}
		}
		frame, err := proto.ReadFrame(br, buf, c.s.cfg.JuteMaxBuffer)
		if err != nil {
			c.logFrameError(err)
			c.s.metrics.readFailed(err)
			return
		}
		c.stats.received.Add(1)
		c.s.stats.received.Add(1)
		c.s.metrics.received(len(frame))
		c.s.tracker.Touch(c.entry, time.Now())
		c.active.Store(true)
		it, ok := c.decode(frame)
		if it == nil {
			if !ok {
				return
			}
			continue
		}
		if ok && c.inflight.Load() == 0 && c.inlineRead(it) {
			unflushed++
			continue
		}
		// The responder may recycle the item once it has it.
		closing := it.close
		slot := takesSlot(it)
		if slot {
			select {
			case c.s.outstanding <- struct{}{}:
			case <-c.done:
				return
			}
			it.slot = true
		}
		c.inflight.Add(1)
		select {
		case c.items <- it:
		case <-c.done:
			if slot {
				<-c.s.outstanding
			}
			return
		}
		if !ok || closing {
			return
		}
		if len(frame) > 64<<10 {
			buf = make([]byte, 0, 4096) // do not pin a large buffer
		}
	}
}

// takesSlot reports whether the item counts against the server's
// outstanding request limit. As in ZooKeeper (ServerCnxn's
// incrOutstandingAndCheckThrottle), requests with a special xid (pings,
// auth, setWatches: xid <= 0) do not, so a client's pings are answered
// while other clients' requests fill the limit. Writes always do: the
// responder gives their slots back by count.
func takesSlot(it *item) bool {
	return it.xid > 0 || it.entry != nil
}

// readerSize is the size of a connection's read buffer: large enough that
// one read takes in a burst of pipelined requests.
const readerSize = 64 << 10

// getReader returns a read buffer on nc, recycled from a closed connection
// if one is free.
func (s *Server) getReader(nc net.Conn) *bufio.Reader {
	if br, _ := s.readers.Get().(*bufio.Reader); br != nil {
		br.Reset(nc)
		return br
	}
	return bufio.NewReaderSize(nc, readerSize)
}

// putReader recycles br once its connection's reader is done with it.
func (s *Server) putReader(br *bufio.Reader) {
	br.Reset(nil)
	s.readers.Put(br)
}

func (c *conn) logFrameError(err error) {
	var fe *proto.FrameSizeError
	switch {
	case errors.As(err, &fe):
		c.log.Warn("closing connection: frame length out of range (Len error)", "len", fe.Len, "max", fe.Max)
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.log.Debug("connection closed mid-frame", "err", err)
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if c.s.draining.Load() {
				c.log.Debug("closing connection: server shutting down")
				return
			}
			c.log.Info("closing connection: handshake timed out")
			return
		}
		c.log.Debug("connection read failed", "err", err)
	}
}

// decode turns a frame into a work item. It returns ok=false when the
// connection must close after the item (if any) is answered.
func (c *conn) decode(frame []byte) (*item, bool) {
	d := proto.NewDecoder(frame)
	var h proto.RequestHeader
	h.Decode(d)
	if d.Err() != nil {
		c.log.Warn("closing connection: malformed request header", "err", d.Err())
		return nil, false
	}
	it := c.newItem()
	it.xid, it.op, it.received, it.auth = h.Xid, h.Op, time.Now(), c.authIDs()
	body := frame[d.Offset():]
	switch h.Op {
	case proto.OpGetData, proto.OpExists, proto.OpGetChildren, proto.OpGetChildren2:
		// The common reads decode into the item, without an allocation
		// beyond the path.
		if c.decodeRead(it, d) {
			return it, true
		}
		c.log.Warn("malformed request", "op", h.Op.String(), "err", d.Err())
		it.err = proto.ErrMarshallingError
		return it, true
	case proto.OpPing:
		it.xid = proto.XidPing // ZooKeeper answers every ping with xid -2
		return it, true
	case proto.OpReconfig:
		// Dynamic reconfiguration is off, as it is by default in ZooKeeper.
		it.err = proto.ErrReconfigDisabled
		return it, true
	case proto.OpSASL:
		// No SASL provider is configured: ZooKeeper answers with a null
		// token and keeps the connection.
		it.reply = proto.AppendReplyFrame(nil, proto.ReplyHeader{Xid: h.Xid}, &nullToken{}) // zxid 0, as processSasl's
		return it, true
	case proto.OpCheck, proto.OpError, proto.OpNotification:
		// Not valid as a request here: ZooKeeper answers UNIMPLEMENTED and
		// closes the connection.
		it.err, it.close = proto.ErrUnimplemented, true
		return it, false
	case proto.OpCreateSession:
		// ZooKeeper takes createSession on an established connection to
		// its pipeline, which cannot read a CreateSessionTxn from a
		// client's (empty) body: MARSHALLINGERROR, connection kept.
		// Paddock answers so whatever the body holds; it never re-creates
		// the connection's session.
		it.err = proto.ErrMarshallingError
		return it, true
	}
	req, err := proto.DecodeRequest(h.Op, body)
	if err != nil {
		if errors.Is(err, proto.ErrUnknownOpcode) {
			c.log.Warn("closing connection: unknown opcode", "op", int32(h.Op))
			it.err, it.close = proto.ErrUnimplemented, true
			return it, false
		}
		if h.Op == proto.OpAuth {
			// ZooKeeperServer.processPacket reads the auth packet
			// itself: one it cannot read closes the connection, with
			// no reply.
			c.log.Warn("closing connection: malformed auth packet", "err", err)
			c.freeItem(it)
			return nil, false
		}
		// ZooKeeper answers a body it cannot deserialize with
		// MARSHALLINGERROR and keeps the connection.
		c.log.Warn("malformed request", "op", h.Op.String(), "err", err)
		it.err = proto.ErrMarshallingError
		return it, true
	}
	it.req = req
	switch r := req.(type) {
	case *proto.AuthPacket:
		return c.authenticate(it, r)
	}
	if h.Op == proto.OpCloseSession {
		if c.debug() {
			c.log.Debug("session closed by client", "session", fmt.Sprintf("0x%x", c.sessionID))
		}
		c.closeRequested.Store(true)
		it.close = true
		it.entry = &fsm.Entry{Type: fsm.EntryCloseSession, Session: c.sessionID, Time: time.Now().UnixMilli(), Origin: c.s.origin()}
		return it, true
	}
	it.entry = c.writeEntry(h.Op, req)
	return it, true
}

// authenticate handles an auth packet at once, as ZooKeeper does; the reply
// still goes out in order. A failed auth closes the connection.
func (c *conn) authenticate(it *item, r *proto.AuthPacket) (*item, bool) {
	switch r.Scheme {
	case acl.Digest:
		id := acl.DigestFromAuth(r.Auth)
		ids := []proto.ID{{Scheme: acl.Digest, ID: id}}
		if c.s.cfg.SuperDigest != "" && id == c.s.cfg.SuperDigest {
			ids = append([]proto.ID{{Scheme: acl.Super, ID: ""}}, ids...)
		}
		c.addAuth(ids...)
		return it, true
	case acl.IP:
		c.addAuth(proto.ID{Scheme: acl.IP, ID: c.ip})
		return it, true
	}
	c.log.Warn("authentication failed: unknown scheme", "scheme", r.Scheme)
	it.err, it.close = proto.ErrAuthFailed, true
	return it, false
}

// nullToken is the body of a sasl reply without SASL: a null buffer.
type nullToken struct{ proto.Empty }

func (nullToken) Append(b []byte) []byte { return proto.AppendBuffer(b, nil) }

// writeEntry returns the log entry for a write request, or nil for a read.
func (c *conn) writeEntry(op proto.OpCode, req proto.Request) *fsm.Entry {
	var o fsm.Op
	switch r := req.(type) {
	case *proto.CreateRequest:
		o = fsm.Op{Op: op, Path: r.Path, Data: r.Data, ACL: r.ACL, Flags: r.Flags}
	case *proto.CreateTTLRequest:
		o = fsm.Op{Op: op, Path: r.Path, Data: r.Data, ACL: r.ACL, Flags: r.Flags, TTL: r.TTL}
	case *proto.DeleteRequest:
		o = fsm.Op{Op: op, Path: r.Path, Version: r.Version}
	case *proto.SetDataRequest:
		o = fsm.Op{Op: op, Path: r.Path, Data: r.Data, Version: r.Version}
	case *proto.SetACLRequest:
		o = fsm.Op{Op: op, Path: r.Path, ACL: r.ACL, Version: r.Version}
	case *proto.DeleteContainerRequest:
		o = fsm.Op{Op: op, Path: r.Path}
	case *proto.MultiRequest:
		if op != proto.OpMulti {
			return nil
		}
		e := &fsm.Entry{Type: fsm.EntryTxn, Session: c.sessionID, Time: time.Now().UnixMilli(), Origin: c.s.origin(),
			Flags: c.s.quotaFlags()}
		e.Multi = true
		e.Ops = make([]fsm.Op, len(r.Ops))
		for i, m := range r.Ops {
			// ZooKeeper rebuilds each create as Op.create does
			// (MultiOperationRecord.deserialize). A create, create2 or
			// createContainer record whose flags are no CreateMode, or a
			// TTL mode (it has no TTL), fails the whole multi: no entry,
			// and read answers MarshallingError. A createTTL record with a
			// non-TTL mode loses its TTL. The container flag makes a
			// createContainer of any of them.
			switch m.Op {
			case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer:
				if m.Flags < proto.FlagPersistent || m.Flags > proto.FlagContainer {
					return nil
				}
			case proto.OpCreateTTL:
				if m.Flags != proto.FlagPersistentWithTTL && m.Flags != proto.FlagPersistentSequentialWithTTL {
					m.Op, m.TTL = proto.OpCreate, 0
				}
			}
			if m.Flags == proto.FlagContainer && (m.Op == proto.OpCreate || m.Op == proto.OpCreate2) {
				m.Op = proto.OpCreateContainer
			}
			e.Ops[i] = fsm.Op{Op: m.Op, Path: m.Path, Data: m.Data, ACL: m.ACL, Flags: m.Flags, TTL: m.TTL, Version: m.Version}
		}
		e.Auth = c.authIDs()
		return e
	default:
		return nil
	}
	// A single op's entry and op share one allocation.
	w := &singleWrite{op: [1]fsm.Op{o}}
	w.entry = fsm.Entry{Type: fsm.EntryTxn, Session: c.sessionID, Time: time.Now().UnixMilli(), Origin: c.s.origin(),
		Ops: w.op[:], Auth: c.authIDs()}
	if op != proto.OpDelete && op != proto.OpSetACL && op != proto.OpDeleteContainer {
		w.entry.Flags = c.s.quotaFlags() // the ops a quota can refuse
	}
	return &w.entry
}

// quotaFlags returns the entry flags of a client's write that say how
// quotas apply to it: EntryFlagEnforceQuota with enforceQuota.
func (s *Server) quotaFlags() uint64 {
	if s.cfg.EnforceQuota {
		return fsm.EntryFlagEnforceQuota
	}
	return 0
}

// singleWrite is the log entry of a write of one op, with room for the op.
type singleWrite struct {
	entry fsm.Entry
	op    [1]fsm.Op
}

// respond completes items in arrival order (FIFO client order). Writes are
// proposed as they come, so consecutive writes share the log's pipeline; a
// read first waits for every earlier write of the connection to be applied
// and answered, and a write that follows a read is proposed only after the
// read ran, so the read cannot see it.
func (c *conn) respond() {
	// Closed before the queue is drained: a responder that stops on its
	// own (a proposal refused, a sync that failed) must stop the reader
	// too, or the reader goes on taking requests nobody answers.
	defer c.drainItems()
	defer c.close()
	var pend []*item // proposed writes not yet answered, in order
	for {
		var head <-chan struct{}
		if len(pend) > 0 {
			head = pend[0].call.done
		}
		// Write out what is queued once there is nothing else to do at
		// once, so replies and events that pile up share one write.
		if len(c.items) == 0 && !ready(head) && !c.flush() {
			c.release(len(pend))
			return
		}
		select {
		case <-c.done:
			c.release(len(pend))
			return
		case <-c.out.wake:
			// Events queued by apply; flushed at the top of the loop.
		case <-head:
			it := pend[0]
			c.finish(it)
			closing := it.close
			pend[0] = nil
			pend = pend[1:]
			c.freeItem(it)
			if ready(c.done) {
				// finish closed the connection (a lost write): propose
				// nothing more, or a later write could apply without it.
				c.release(len(pend))
				return
			}
			if closing {
				c.release(len(pend))
				c.flushAll()
				return
			}
		case it, ok := <-c.items:
			if !ok {
				c.awaitAll(pend)
				c.flushAll()
				return
			}
			if it.entry != nil {
				c.proposed++
				if it.entry.Type == fsm.EntryTxn {
					c.txns++
					it.entry.Conn, it.entry.Seq = c.id, c.txns
				}
				call, err := c.s.proposeFor(connContext{c}, it.entry, c, it, c.proposed)
				if err != nil {
					if !ready(c.done) {
						c.log.Warn("closing connection: proposal failed", "op", it.op.String(), "err", err)
					}
					c.release(len(pend) + 1)
					return
				}
				c.s.lastMu.Lock()
				c.s.lastWrite[c.sessionID] = call
				c.s.lastMu.Unlock()
				pend = append(pend, it)
				continue
			}
			if !c.awaitAll(pend) {
				c.releaseItem(it) // it, which gets no reply
				c.flushAll()
				return
			}
			pend = pend[:0]
			if it.op == proto.OpSync {
				ctx, cancel := context.WithTimeout(connContext{c}, time.Duration(c.timeout)*time.Millisecond)
				err := c.s.syncBarrier(ctx)
				cancel()
				if err != nil {
					c.log.Warn("closing connection: sync could not reach the leader", "err", err)
					c.releaseItem(it)
					c.flushAll()
					return
				}
			}
			c.answer(it)
			c.finishStats(it)
			closing := it.close
			c.freeItem(it)
			if closing {
				c.flushAll()
				return
			}
		}
	}
}

// connContext is a context done when its connection closes (the server's
// shutdown closes every connection). The responder proposes and syncs
// with it, so a closed connection's responder stops at once even when the
// log is slow to take a proposal or the leader to answer: a resume of its
// session waits for that (see Server.settle).
type connContext struct{ c *conn }

func (connContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (x connContext) Done() <-chan struct{}     { return x.c.done }
func (connContext) Value(any) any               { return nil }
func (x connContext) Err() error {
	if ready(x.c.done) {
		return context.Canceled
	}
	return nil
}

// ready reports whether ch is closed, without waiting.
func ready(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// flush writes everything queued to the socket, each batch with one
// write. It reports false if the connection failed.
func (c *conn) flush() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.writing {
		return true // writeBehind takes what is queued
	}
	for {
		b := c.out.take()
		if len(b) == 0 {
			c.out.recycle(b)
			return true
		}
		n, err := c.tryWrite(b)
		if err != nil {
			c.out.recycle(b)
			return false
		}
		if n < len(b) {
			c.writing = true
			c.written = make(chan struct{})
			go c.writeBehind(b, n, c.written)
			return true
		}
		c.out.recycle(b)
	}
}

// writeBehind writes b[off:], which the socket did not take at once, and
// then whatever is queued meanwhile, until the queue is empty; a socket
// error closes the connection. It closes done when it returns.
func (c *conn) writeBehind(b []byte, off int, done chan struct{}) {
	defer close(done)
	for {
		_, err := c.nc.Write(b[off:])
		c.out.recycle(b)
		c.wmu.Lock()
		if err != nil {
			c.writing = false
			c.wmu.Unlock()
			c.close()
			return
		}
		b, off = c.out.take(), 0
		if len(b) == 0 {
			c.writing = false
			c.wmu.Unlock()
			c.out.recycle(b)
			return
		}
		c.wmu.Unlock()
	}
}

// closeFlushTimeout bounds how long a closing connection waits for the
// client to take its last replies.
const closeFlushTimeout = 5 * time.Second

// flushAll writes out everything queued and waits until it is written (or
// the socket fails, the connection closes or closeFlushTimeout passes),
// before the responder returns and the connection closes.
func (c *conn) flushAll() {
	c.flush()
	c.wmu.Lock()
	writing, done := c.writing, c.written
	c.wmu.Unlock()
	if !writing {
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(closeFlushTimeout))
	select {
	case <-done:
	case <-c.done:
	}
}

// awaitAll answers the pending writes in order. It returns false if the
// connection closed (or must close) meanwhile.
func (c *conn) awaitAll(pend []*item) bool {
	for i, it := range pend {
		select {
		case <-it.call.done:
		case <-c.done:
			c.release(len(pend) - i)
			return false
		}
		c.finish(it)
		closing := it.close
		pend[i] = nil
		c.freeItem(it)
		if closing {
			c.release(len(pend) - i - 1)
			return false
		}
	}
	return true
}

// finish sends the reply of an applied write. A write raft dropped closes
// the connection, as ZooKeeper does when it loses a request; its
// outstanding slot is given back all the same.
func (c *conn) finish(it *item) {
	switch it.call.res.Err {
	case proto.ErrConnectionLoss:
		c.close()
		c.release(1)
		return
	case proto.ErrSessionMoved:
		// As ZooKeeper does (ZOOKEEPER-710): the connection is torn
		// down without a reply, so the client reconnects and takes its
		// session back, if it still talks to this member.
		c.log.Info("closing connection: the session has moved to another member", "session", fmt.Sprintf("0x%x", c.sessionID))
		c.close()
		c.release(1)
		return
	}
	if !it.call.replied {
		c.queueWriteReply(it)
		c.answered.Store(it.call.seq)
	}
	c.finishStats(it)
}

// queueWriteReply encodes the reply of an applied write straight into the
// outbound queue. Apply calls it (see Server.Apply); it does not wake the
// responder, which the write's completion wakes.
func (c *conn) queueWriteReply(it *item) {
	c.sent(c.out.end(c.appendWriteReply(c.out.begin(), it)))
}

// inlineRead answers a read on the reader goroutine when nothing of this
// connection is in flight, saving the hand-off to the responder: with no
// earlier request pending, answering at once keeps FIFO order. It reports
// whether it answered.
func (c *conn) inlineRead(it *item) bool {
	if it.entry != nil || it.req == nil || it.close || it.err != proto.ErrOK || it.reply != nil ||
		it.op == proto.OpAuth || (it.op == proto.OpSync && !c.s.cfg.Standalone()) {
		return false
	}
	c.s.read(c, it)
	d := time.Since(it.received)
	c.stats.record(it, d, c.s.lastZxid())
	c.s.stats.record(d) // an auth packet is never answered inline
	c.s.metrics.request(it, d)
	c.freeItem(it)
	return true
}

// maxInlineBatch bounds the inline replies the reader queues before it
// writes them out, so the first of a long burst of pipelined reads is not
// held back for the whole burst.
const maxInlineBatch = 16

// frameBuffered reports whether br holds a whole frame, so reading it
// cannot block.
func frameBuffered(br *bufio.Reader) bool {
	n := br.Buffered()
	if n < 4 {
		return false
	}
	p, err := br.Peek(4)
	if err != nil {
		return false
	}
	l := int32(binary.BigEndian.Uint32(p))
	return l >= 0 && int64(n-4) >= int64(l)
}

// newItem returns a zero item, recycled from an answered request if one is
// free: with many calls in flight the per-request garbage is what makes
// the garbage collector run, and its cycles make the latency tail.
func (c *conn) newItem() *item {
	if it, _ := c.free.Get().(*item); it != nil {
		return it
	}
	return new(item)
}

// freeItem recycles the item of an answered request. Nothing may use it
// afterwards. A write's call may still be referenced (the session's last
// write, see Server.lastWrite), but not its item.
func (c *conn) freeItem(it *item) {
	*it = item{}
	c.free.Put(it)
}

// decodeRead decodes the body of a getData, exists, getChildren or
// getChildren2 request from d into the item's own request record. It
// reports false if the body is malformed.
func (c *conn) decodeRead(it *item, d *proto.Decoder) bool {
	switch it.op {
	case proto.OpGetData:
		it.reqs.getData.Decode(d)
		it.req = &it.reqs.getData
	case proto.OpExists:
		it.reqs.exists.Decode(d)
		it.req = &it.reqs.exists
	case proto.OpGetChildren:
		it.reqs.children.Decode(d)
		it.req = &it.reqs.children
	case proto.OpGetChildren2:
		it.reqs.children2.Decode(d)
		it.req = &it.reqs.children2
	}
	if d.Err() != nil {
		it.req = nil
		return false
	}
	return true
}

func (c *conn) finishStats(it *item) {
	c.inflight.Add(-1)
	d := time.Since(it.received)
	c.stats.record(it, d, c.s.lastZxid())
	if it.op != proto.OpAuth && it.op != proto.OpSASL {
		// ZooKeeper answers auth and SASL packets outside its request
		// pipeline, which alone updates the server's latency.
		c.s.stats.record(d)
	}
	c.s.metrics.request(it, d)
	c.releaseItem(it)
}

// releaseItem frees the outstanding slot it holds, if any.
func (c *conn) releaseItem(it *item) {
	if it.slot {
		it.slot = false
		<-c.s.outstanding
	}
}

// release frees the outstanding slots of n writes that will not be
// answered (every write holds one).
func (c *conn) release(n int) {
	for i := 0; i < n; i++ {
		<-c.s.outstanding
	}
}

// answer replies to an item that is not a write.
func (c *conn) answer(it *item) {
	switch {
	case it.reply != nil:
		c.send(it.reply)
	case it.err != proto.ErrOK || it.op == proto.OpPing:
		hdr := proto.ReplyHeader{Xid: it.xid, Zxid: c.s.lastZxid(), Err: it.err}
		switch {
		case it.xid == proto.XidAuth:
			hdr.Zxid = 0
		case it.err == proto.ErrUnimplemented && it.close:
			// ZooKeeper's UnimplementedRequestProcessor answers with the
			// zxid of a request never given one: -1.
			hdr.Zxid = -1
		}
		c.send(proto.AppendReplyFrame(make([]byte, 0, 20), hdr, nil))
	case it.op == proto.OpAuth:
		c.send(proto.AppendReplyFrame(nil, proto.ReplyHeader{Xid: it.xid}, nil))
	default:
		c.s.read(c, it)
	}
}

// drainItems releases the outstanding slots of items never answered.
func (c *conn) drainItems() {
	for it := range c.items {
		c.releaseItem(it)
	}
}

// appendWriteReply appends the reply frame of an applied write to b.
func (c *conn) appendWriteReply(b []byte, it *item) []byte {
	res := &it.call.res
	hdr := proto.ReplyHeader{Xid: it.xid, Zxid: res.Zxid, Err: res.Err}
	if res.Err != proto.ErrOK || it.op == proto.OpCloseSession {
		if hdr.Zxid == 0 {
			hdr.Zxid = c.s.lastZxid()
		}
		return proto.AppendReplyFrame(b, hdr, nil)
	}
	b, start := proto.StartFrame(b)
	b = hdr.Append(b)
	switch it.op {
	case proto.OpCreate:
		r := proto.CreateResponse{Path: res.Ops[0].Path}
		b = r.Append(b)
	case proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		r := proto.Create2Response{Path: res.Ops[0].Path, Stat: res.Ops[0].Stat}
		b = r.Append(b)
	case proto.OpSetData, proto.OpSetACL:
		r := proto.StatResponse{Stat: res.Ops[0].Stat}
		b = r.Append(b)
	case proto.OpMulti:
		mr := proto.MultiResponse{Results: make([]proto.MultiResult, len(res.Ops))}
		for i, o := range res.Ops {
			r := proto.MultiResult{Op: o.Op, Err: o.Err, Path: o.Path}
			switch o.Op {
			case proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL, proto.OpSetData:
				st := o.Stat
				r.Stat = &st
			}
			mr.Results[i] = r
		}
		b = mr.Append(b)
	}
	_ = proto.FinishFrame(b, start) // start is valid by construction
	return b
}

// handshake reads the ConnectRequest and opens or resumes a session. It
// reports whether the connection goes on.
func (c *conn) handshake(frame []byte, br *bufio.Reader) bool {
	start := time.Now()
	c.s.metrics.connectRequest(len(frame))
	var req proto.ConnectRequest
	if err := proto.Unmarshal(frame, &req); err != nil {
		c.log.Warn("closing connection: malformed connect request", "err", err)
		return false
	}
	if last := c.s.lastZxid(); req.LastZxidSeen > last {
		c.log.Warn("refusing client: it has seen a later zxid than this server (client must try another server)",
			"client_zxid", fmt.Sprintf("0x%x", req.LastZxidSeen), "server_zxid", fmt.Sprintf("0x%x", last))
		return false
	}
	timeout := c.s.negotiateTimeout(req.TimeOut)
	resp := proto.ConnectResponse{TimeOut: timeout, OmitReadOnly: req.OmitReadOnly}
	if req.SessionID == 0 {
		id, passwd := c.s.newSessionID()
		ctx, cancel := context.WithTimeout(c.s.ctx, c.s.cfg.HandshakeTimeout)
		call, err := c.s.propose(ctx, &fsm.Entry{Type: fsm.EntryCreateSession, Session: id,
			Timeout: timeout, Passwd: passwd, Time: time.Now().UnixMilli(), Origin: c.s.origin()})
		if err == nil {
			select {
			case <-call.done:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		cancel()
		if err != nil {
			c.log.Warn("closing connection: creating session failed", "err", err)
			return false
		}
		// Answered as ZooKeeper's request pipeline answers createSession:
		// the connection's stats (lop=SESS) and the server's latency.
		d := time.Since(start)
		c.stats.recordSession(d, c.s.lastZxid())
		c.s.stats.record(d)
		c.s.metrics.session(d)
		resp.SessionID, resp.Passwd = id, passwd
		if c.debug() {
			c.log.Debug("session established", "session", fmt.Sprintf("0x%x", id), "timeout", timeout)
		}
	} else {
		if c.s.origin() != 0 && c.clientGone(br) {
			// A client that gave up on this member (it was stopped or
			// cut off) and went elsewhere left its ConnectRequest
			// behind: resuming the session here would take it from the
			// member the client now talks to.
			c.log.Info("ignoring a reconnect the client has abandoned", "session", fmt.Sprintf("0x%x", req.SessionID))
			return false
		}
		// ZooKeeper closes the session's current connection before it
		// checks the password (processConnectRequest).
		if !c.s.settle(req.SessionID, c.s.detach(req.SessionID)) {
			// The old connection may still propose a write, which must
			// not apply after this connection's: the client tries again.
			c.log.Warn("closing connection: the session's previous connection is still proposing", "session", fmt.Sprintf("0x%x", req.SessionID))
			return false
		}
		c.s.mu.RLock()
		ss := c.s.fsm.Session(req.SessionID)
		valid := ss != nil && bytes.Equal(ss.Passwd, req.Passwd)
		// In an ensemble the session is moved to this member through the
		// log on every reattach, even when this member's state says it
		// owns it already: that state may lag a move to another member
		// (the client may have been there since), and a write of the
		// session proposed here would then be refused.
		moving := valid && c.s.origin() != 0
		c.s.mu.RUnlock()
		entry := c.s.tracker.Get(req.SessionID)
		if !valid || entry == nil {
			c.log.Info("refusing reconnect: session expired or password wrong", "session", fmt.Sprintf("0x%x", req.SessionID))
			dead := proto.ConnectResponse{Passwd: make([]byte, 16), OmitReadOnly: req.OmitReadOnly}
			c.countSent()
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
			c.nc.Write(proto.AppendRecordFrame(nil, &dead))
			return false
		}
		if moving && !c.s.moveSession(req.SessionID) {
			c.log.Warn("closing connection: moving the session to this member failed", "session", fmt.Sprintf("0x%x", req.SessionID))
			return false
		}
		resp.SessionID, resp.Passwd = req.SessionID, req.Passwd
		if c.debug() {
			c.log.Debug("session reattached", "session", fmt.Sprintf("0x%x", req.SessionID), "timeout", timeout, "moved", moving)
		}
	}
	c.sessionID, c.timeout = resp.SessionID, timeout
	c.entry = c.s.tracker.Get(c.sessionID)
	if c.entry == nil {
		// Expired between apply and here.
		return false
	}
	c.s.tracker.SetTimeout(c.entry, time.Duration(timeout)*time.Millisecond, time.Now())
	if c.s.beforeAttach != nil {
		c.s.beforeAttach(c.sessionID)
	}
	c.s.attach(c)
	if c.s.tracker.Get(c.sessionID) != c.entry {
		// Closed (expired) since it was looked up: its close found no
		// connection of the session to close, and would otherwise leave
		// this one serving a session that no longer exists. A close
		// after this look finds the connection attached and closes it.
		c.log.Info("closing connection: the session closed during the handshake", "session", fmt.Sprintf("0x%x", c.sessionID))
		return false
	}
	c.countSent() // before the client can see it, as a queued reply is
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	if _, err := c.nc.Write(proto.AppendRecordFrame(nil, &resp)); err != nil {
		return false
	}

	c.nc.SetWriteDeadline(time.Time{})
	return true
}

// clientGoneWait is how long clientGone waits for the end of a
// connection.
const clientGoneWait = time.Millisecond

// clientGone reports whether the client has already closed the connection
// after its ConnectRequest: its end of stream is waiting in br (or in the
// socket) right behind it. A client still there has sent nothing more, or
// more requests.
func (c *conn) clientGone(br *bufio.Reader) bool {
	if br.Buffered() > 0 {
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(clientGoneWait))
	_, err := br.Peek(1)
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

func (s *Server) negotiateTimeout(requested int32) int32 {
	t := int64(requested)
	lo, hi := s.cfg.MinSessionTimeout.Milliseconds(), s.cfg.MaxSessionTimeout.Milliseconds()
	if t < lo {
		t = lo
	}
	if t > hi {
		t = hi
	}
	return int32(t)
}

// responderDone marks the responder stopped (once).
func (c *conn) responderDone() { c.respOnce.Do(func() { close(c.respDone) }) }

// settle waits, before a session is resumed on a new connection, until the
// old connection proposes nothing more and the last write it proposed is
// applied (or refused), so the session's earlier writes come before
// anything the new connection does, as in ZooKeeper. The wait is bounded by
// the handshake timeout. It reports false if the old connection's
// responder had not stopped by then: it may yet propose a write (its first
// on that connection, say), which would apply after the new connection's
// writes, so the session must not be resumed yet. A last write proposed
// but not applied in time is no such risk: it is ahead of anything the new
// connection proposes on this member.
func (s *Server) settle(session int64, old *conn) bool {
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	// The server's close ends the wait too: it fails the last write only
	// once every connection has ended, this one among them.
	if old != nil {
		select {
		case <-old.respDone:
		case <-t.C:
			return false
		case <-s.ctx.Done():
			return false
		}
	}
	s.lastMu.Lock()
	last := s.lastWrite[session]
	s.lastMu.Unlock()
	if last != nil {
		select {
		case <-last.done:
		case <-t.C:
		case <-s.ctx.Done():
			return false
		}
	}
	return true
}

// javaHostAddress writes an IP address as Java's InetAddress.getHostAddress
// does, which is what ZooKeeper shows of a client (its ip-scheme identity in
// whoami, its address in cons and dump): IPv4 dotted; IPv6 as eight groups
// of lower-case hexadecimal without leading zeros and never "::"
// ("0:0:0:0:0:0:0:1" for "::1"), with its zone after '%'; an IPv4-mapped
// IPv6 address as IPv4. Anything else is returned as it is.
func javaHostAddress(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is6() {
		return host
	}
	if a.Is4In6() {
		return a.Unmap().String() // Java makes a mapped address an Inet4Address
	}
	b := a.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	if z := a.Zone(); z != "" {
		sb.WriteString("%" + z)
	}
	return sb.String()
}
