package difftest

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// RunOptions configures Run.
type RunOptions struct {
	// Root is the scenario's root path, created (persistent, world:anyone
	// ALL) before the first step; script paths starting with "/" live
	// under it. It must not exist yet.
	Root string
	// ReplyTimeout bounds every wait for a reply; 0 means 10s.
	ReplyTimeout time.Duration
	// CloseTimeout bounds waits for the server to close a connection or
	// answer after raw bytes; 0 means 3s.
	CloseTimeout time.Duration
	// SessionTimeout is the session timeout requested by "connect"
	// without timeout=; 0 means 30000 ms.
	SessionTimeout int32
	// HideEventZxids leaves positive notification zxids out of the
	// transcript (and out of the zxid ranking). ZooKeeper 3.8 sends -1 in
	// every notification header; 3.9 (ZOOKEEPER-4655) sends the zxid of
	// the txn that fired the watch, so a 3.9-style server is compared
	// with 3.8 with this set. A zxid of -1 is never printed either way;
	// any other non-positive value is.
	HideEventZxids bool
	// Members are the client addresses of an ensemble's members, in
	// server id order. Client cN connects to Members[(N-1) mod len] and
	// "connect member=K" to Members[(K-1) mod len]. A connect that
	// reattaches a session or sends a last-seen zxid first brings its
	// member up to date (see catchUp). Empty means the one server at
	// Run's addr.
	Members []string
	// SettleMembers are the client addresses "settle" opens a session
	// on: every member of the ensemble, the leader included (which
	// Members may leave out). Empty means Members.
	SettleMembers []string
}

func (o *RunOptions) defaults() {
	if o.ReplyTimeout == 0 {
		o.ReplyTimeout = 10 * time.Second
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = 3 * time.Second
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 30000
	}
}

// client is the runner's state for one script client name.
type client struct {
	name      string
	conn      *Client // nil before the first connect and after disconnect
	closed    bool    // the server ended the stream (seen by the runner)
	reported  bool    // "closed" has been printed for this connection
	sessionID int64
	passwd    []byte
	lastZxid  int64
	nextXid   int32
	pending   []pending
}

// pending is a request sent and not yet answered.
type pending struct {
	xid     int32
	op      proto.OpCode
	label   string
	errOnly bool // print only "ok" or the error name
}

// runner executes one scenario against one server.
type runner struct {
	addr    string
	opts    RunOptions
	tr      *Transcript
	clients map[string]*client
}

// Run executes a scenario against the server at addr and returns its
// normalized transcript. An error means the scenario could not be run
// (a script error, or the server unreachable for setup); what the server
// answers, including closing connections or not answering in time, is
// part of the transcript.
func Run(addr string, sc Scenario, opts RunOptions) ([]string, error) {
	opts.defaults()
	if !strings.HasPrefix(opts.Root, "/") || len(opts.Root) < 2 {
		return nil, fmt.Errorf("difftest: scenario %s: root %q must be an absolute path below /", sc.Name, opts.Root)
	}
	start := time.Now()
	if err := createRoot(addr, opts); err != nil {
		return nil, fmt.Errorf("difftest: scenario %s: %w", sc.Name, err)
	}
	if len(opts.Members) == 0 {
		opts.Members = []string{addr}
	}
	if len(opts.SettleMembers) == 0 {
		opts.SettleMembers = opts.Members
	}
	r := &runner{addr: addr, opts: opts, tr: NewTranscript(opts.Root, start), clients: map[string]*client{}}
	defer r.teardown()
	for _, st := range sc.Steps {
		if err := r.step(st); err != nil {
			return nil, fmt.Errorf("difftest: %s:%d (%s): %s: %w", sc.File, st.Line, sc.Name, st.Text, err)
		}
	}
	r.flushAll()
	return r.tr.Lines(time.Now()), nil
}

// createRoot creates the scenario root on a session of its own.
func createRoot(addr string, opts RunOptions) error {
	c, _, err := Dial(addr, ConnectOptions{TimeOut: opts.SessionTimeout}, opts.ReplyTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	req := &proto.CreateRequest{Path: opts.Root, Data: []byte{},
		ACL: []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}}
	if err := c.Send(1, proto.OpCreate, req); err != nil {
		return err
	}
	if err := expectReply(c, 1, opts.ReplyTimeout); err != nil {
		return fmt.Errorf("create root %s: %w", opts.Root, err)
	}
	if err := c.Send(2, proto.OpCloseSession, nil); err != nil {
		return err
	}
	return expectReply(c, 2, opts.ReplyTimeout)
}

// expectReply waits for the reply with xid and fails unless it is ok.
func expectReply(c *Client, xid int32, timeout time.Duration) error {
	for range 1000 {
		f, err := c.Next(timeout)
		if err != nil {
			return err
		}
		if f.Err != nil {
			return f.Err
		}
		if f.Header.Xid != xid {
			continue
		}
		if f.Header.Err != proto.ErrOK {
			return fmt.Errorf("reply %s", ErrName(f.Header.Err))
		}
		return nil
	}
	return errors.New("no reply among 1000 frames")
}

func (r *runner) client(name string) *client {
	c, ok := r.clients[name]
	if !ok {
		c = &client{name: name, nextXid: 1}
		r.clients[name] = c
	}
	return c
}

// clientNames returns the client names in numeric order.
func (r *runner) clientNames() []string {
	names := make([]string, 0, len(r.clients))
	for n := range r.clients {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := strconv.Atoi(names[i][1:])
		b, _ := strconv.Atoi(names[j][1:])
		return a < b
	})
	return names
}

// step runs one script line.
func (r *runner) step(st Step) error {
	c := r.client(st.Client)
	switch st.Cmd {
	case "connect":
		return r.connect(c, st)
	case "disconnect":
		r.drop(c)
		r.tr.Add(st.Text + " -> ok")
		return nil
	case "xid":
		if len(st.Args) != 1 {
			return errors.New("want: xid <n>")
		}
		v, err := parseInt32("xid", st.Args[0])
		c.nextXid = v
		return err
	case "send":
		if len(st.Args) == 0 {
			return errors.New("want: send <command> [args...]")
		}
		label := c.name + " " + strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(st.Text, c.name), " send"))
		return r.sendOp(c, Step{Line: st.Line, Text: label, Client: c.name, Cmd: st.Args[0].Text, Args: st.Args[1:]})
	case "wait":
		r.awaitAll(c)
		return nil
	case "waitclosed":
		// Wait for the server to close the connection, for a request
		// after which ZooKeeper closes it only once its pipeline gets
		// there (a ping sent meanwhile may or may not be answered).
		r.awaitAll(c)
		if !r.live(c, st.Text) {
			return nil
		}
		r.waitClosed(c, st.Text)
		return nil
	case "events", "ping":
		sorted, viaSync := false, false
		for _, a := range st.Args {
			switch {
			case a.Text == "sorted" && !a.Quoted:
				sorted = true
			case a.Text == "sync" && !a.Quoted:
				viaSync = true
			default:
				return fmt.Errorf("%s: unknown argument %s (want sorted or sync)", st.Cmd, a)
			}
		}
		r.ping(c, st.Text, st.Cmd == "ping", sorted, viaSync)
		return nil
	case "close":
		return r.closeSession(c, st.Text)
	case "settle":
		if len(st.Args) != 0 {
			return errors.New("want: settle")
		}
		for _, m := range r.opts.SettleMembers {
			if err := settle(m, r.opts); err != nil {
				return fmt.Errorf("settle %s: %w", m, err)
			}
		}
		r.tr.Add(st.Text + " -> ok")
		return nil
	case "allchildrendiff":
		return r.countDiff(c, st)
	case "raw":
		return r.raw(c, st)
	case "rawconnect":
		if len(st.Args) != 1 {
			return errors.New("want: rawconnect <hex>")
		}
		b, err := r.hexWithPaths(st.Args[0].Text)
		if err != nil {
			return err
		}
		res, err := rawConnect(r.addr, b, r.opts.CloseTimeout)
		if err != nil {
			return err
		}
		r.tr.Add(st.Text + " -> " + res)
		return nil
	case "try":
		if len(st.Args) == 0 {
			return errors.New("want: try <command> [args...]")
		}
		inner := Step{Line: st.Line, Text: st.Text, Client: c.name, Cmd: st.Args[0].Text, Args: st.Args[1:]}
		if err := r.sendOp(c, inner); err != nil {
			return err
		}
		if n := len(c.pending); n > 0 {
			c.pending[n-1].errOnly = true
		}
		r.awaitAll(c)
		return nil
	}
	if err := r.sendOp(c, st); err != nil {
		return err
	}
	r.awaitAll(c)
	return nil
}

// live reports whether c has a connection the server has not closed; if
// not it prints why for the step.
func (r *runner) live(c *client, label string) bool {
	switch {
	case c.conn == nil:
		r.tr.Add(label + " -> notconnected")
		return false
	case c.closed:
		r.tr.Add(label + " -> closed")
		c.reported = true
		return false
	}
	return true
}

// sendOp builds the request of a step and sends it without waiting.
func (r *runner) sendOp(c *client, st Step) error {
	op, body, xid, err := r.build(c, st)
	if err != nil {
		return err
	}
	if !r.live(c, st.Text) {
		return nil
	}
	if err := c.conn.SendBody(xid, op, body); err != nil {
		r.markClosed(c, st.Text)
		return nil
	}
	c.pending = append(c.pending, pending{xid: xid, op: op, label: st.Text})
	return nil
}

// allocXid returns the client's next xid and advances it.
func (c *client) allocXid() int32 {
	x := c.nextXid
	c.nextXid++
	return x
}

// markClosed records that the connection is gone, printing it for label.
func (r *runner) markClosed(c *client, label string) {
	c.closed = true
	if !c.reported {
		r.tr.Add(label + " -> closed")
		c.reported = true
	}
}

// awaitAll waits for every pending reply of c, printing notifications and
// replies in arrival order.
func (r *runner) awaitAll(c *client) {
	for len(c.pending) > 0 {
		p := c.pending[0]
		if c.closed {
			c.pending = nil
			r.tr.Add(p.label + " -> closed")
			c.reported = true
			return
		}
		f, err := c.conn.Next(r.opts.ReplyTimeout)
		if err != nil {
			r.tr.Add(p.label + " -> timeout")
			c.pending = nil
			r.drop(c)
			return
		}
		if f.Err != nil {
			c.closed = true
			continue
		}
		r.noteZxid(c, f.Header)
		switch f.Header.Xid {
		case proto.XidNotification:
			r.event(c, f)
		case p.xid:
			c.pending = c.pending[1:]
			if p.errOnly {
				r.tr.Add(p.label + " -> " + ErrName(f.Header.Err))
				continue
			}
			r.tr.Add(p.label + " -> " + r.reply(p.op, f))
		default:
			c.pending = c.pending[1:]
			r.tr.Add(fmt.Sprintf("%s -> reply xid %d, want %d: %s", p.label, f.Header.Xid, p.xid, r.reply(p.op, f)))
		}
	}
}

// noteZxid tracks the last zxid a client saw, as the Java client does.
func (r *runner) noteZxid(c *client, h proto.ReplyHeader) {
	if h.Xid != proto.XidNotification && h.Zxid > 0 {
		c.lastZxid = h.Zxid
	}
}

// event prints a notification.
func (r *runner) event(c *client, f Frame) { r.tr.Add(r.eventLine(c, f)) }

// eventLine renders a notification.
func (r *runner) eventLine(c *client, f Frame) string {
	var ev proto.WatcherEvent
	if err := proto.Unmarshal(f.Body, &ev); err != nil {
		return fmt.Sprintf("%s event undecodable (%d bytes): %v", c.name, len(f.Body), err)
	}
	line := fmt.Sprintf("%s event %s %s", c.name, EventName(ev.Type), r.tr.Path(ev.Path))
	if ev.State != proto.StateSyncConnected {
		line += " state=" + strconv.Itoa(int(ev.State))
	}
	if f.Header.Err != proto.ErrOK {
		line += " err=" + ErrName(f.Header.Err)
	}
	if z := f.Header.Zxid; z != -1 && (z <= 0 || !r.opts.HideEventZxids) {
		line += " zxid=" + r.tr.Zxid(f.Header.Zxid)
	}
	return line
}

// ping waits for pending replies, then pings and prints every
// notification that arrives before the ping's reply. With sorted the
// notifications are printed sorted, after any other line, for events
// whose order the server leaves unspecified. With showOK it prints "ok"
// for a live connection; otherwise "none" when no event came. With
// viaSync the barrier is a sync of the scenario root instead of a ping:
// in an ensemble a member sends the notifications of every txn the
// leader committed before the sync ahead of the sync's reply, which a
// ping does not wait for.
func (r *runner) ping(c *client, label string, showOK, sorted, viaSync bool) {
	r.awaitAll(c)
	if !r.live(c, label) {
		return
	}
	barrier, what := proto.XidPing, "ping "
	var err error
	if viaSync {
		barrier, what = c.allocXid(), "sync "
		err = c.conn.Send(barrier, proto.OpSync, &proto.SyncRequest{Path: r.opts.Root})
	} else {
		err = c.conn.Send(proto.XidPing, proto.OpPing, nil)
	}
	if err != nil {
		r.markClosed(c, label)
		return
	}
	var held []string // events, when sorted
	events := 0
	defer func() {
		sort.Strings(held)
		for _, l := range held {
			r.tr.Add(l)
		}
	}()
	for range 100000 {
		f, err := c.conn.Next(r.opts.ReplyTimeout)
		if err != nil {
			r.tr.Add(label + " -> timeout")
			r.drop(c)
			return
		}
		if f.Err != nil {
			r.markClosed(c, label)
			return
		}
		r.noteZxid(c, f.Header)
		switch f.Header.Xid {
		case proto.XidNotification:
			events++
			if sorted {
				held = append(held, r.eventLine(c, f))
			} else {
				r.event(c, f)
			}
		case barrier:
			sort.Strings(held)
			for _, l := range held {
				r.tr.Add(l)
			}
			held = nil
			switch {
			case f.Header.Err != proto.ErrOK:
				r.tr.Add(label + " -> " + what + ErrName(f.Header.Err))
			case showOK:
				r.tr.Add(label + " -> ok")
			case events == 0:
				r.tr.Add(label + " -> none")
			}
			return
		default:
			r.tr.Add(fmt.Sprintf("%s -> unexpected reply xid %d err %s", label, f.Header.Xid, ErrName(f.Header.Err)))
		}
	}
}

// drop closes c's connection without a closeSession.
func (r *runner) drop(c *client) {
	if c.conn != nil {
		c.conn.Close()
	}
	c.conn, c.closed, c.reported, c.pending = nil, false, false, nil
}

// closeSession sends closeSession, prints its reply and waits for the
// server to close the connection.
func (r *runner) closeSession(c *client, label string) error {
	r.awaitAll(c)
	if !r.live(c, label) {
		return nil
	}
	xid := c.allocXid()
	if err := c.conn.Send(xid, proto.OpCloseSession, nil); err != nil {
		r.markClosed(c, label)
		return nil
	}
	c.pending = append(c.pending, pending{xid: xid, op: proto.OpCloseSession, label: label})
	r.awaitAll(c)
	if c.conn == nil || c.closed {
		return nil
	}
	r.waitClosed(c, label)
	return nil
}

// waitClosed reads until the server closes c's connection, printing
// notifications and any other frame, and then "closed" (or "open" if the
// connection is still there after CloseTimeout).
func (r *runner) waitClosed(c *client, label string) {
	for range 100000 {
		f, err := c.conn.Next(r.opts.CloseTimeout)
		if err != nil {
			r.tr.Add(c.name + " still open")
			return
		}
		if f.Err != nil {
			c.closed, c.reported = true, true
			r.tr.Add(c.name + " closed")
			return
		}
		if f.Header.Xid == proto.XidNotification {
			r.event(c, f)
			continue
		}
		r.tr.Add(fmt.Sprintf("%s frame xid=%d err=%s body=%d bytes", c.name, f.Header.Xid, ErrName(f.Header.Err), len(f.Body)))
	}
}

// raw sends raw bytes on c's connection. What the server makes of them
// shows in the next step (typically a ping).
func (r *runner) raw(c *client, st Step) error {
	if len(st.Args) != 1 {
		return errors.New("want: raw <hex>")
	}
	b, err := r.hexWithPaths(st.Args[0].Text)
	if err != nil {
		return err
	}
	r.awaitAll(c)
	if !r.live(c, st.Text) {
		return nil
	}
	if err := c.conn.SendRaw(b); err != nil {
		r.markClosed(c, st.Text)
		return nil
	}
	r.tr.Add(st.Text + " -> sent")
	return nil
}

func hexOrLen(b []byte) string {
	if len(b) <= 32 {
		return fmt.Sprintf("%x", b)
	}
	return fmt.Sprintf("<%d bytes>", len(b))
}

// flushAll pings every connected client at the end of the scenario, to
// print the events still queued and connections the server closed.
func (r *runner) flushAll() {
	for _, name := range r.clientNames() {
		c := r.clients[name]
		if c.conn == nil {
			continue
		}
		r.awaitAll(c)
		if c.conn == nil || c.closed {
			if c.conn != nil && !c.reported {
				r.tr.Add(name + " closed")
				c.reported = true
			}
			continue
		}
		r.pingQuiet(c)
	}
}

// pingQuiet is ping for the final flush: events are printed, and only a
// closed connection or a failure otherwise.
func (r *runner) pingQuiet(c *client) {
	if err := c.conn.Send(proto.XidPing, proto.OpPing, nil); err != nil {
		r.tr.Add(c.name + " closed")
		c.closed, c.reported = true, true
		return
	}
	for range 100000 {
		f, err := c.conn.Next(r.opts.ReplyTimeout)
		if err != nil {
			r.tr.Add(c.name + " ping timeout")
			r.drop(c)
			return
		}
		if f.Err != nil {
			r.tr.Add(c.name + " closed")
			c.closed, c.reported = true, true
			return
		}
		switch f.Header.Xid {
		case proto.XidNotification:
			r.event(c, f)
		case proto.XidPing:
			return
		default:
			r.tr.Add(fmt.Sprintf("%s unexpected frame xid=%d err=%s", c.name, f.Header.Xid, ErrName(f.Header.Err)))
		}
	}
}

// teardown closes every session still open, without printing.
func (r *runner) teardown() {
	for _, name := range r.clientNames() {
		c := r.clients[name]
		if c.conn == nil {
			continue
		}
		if !c.closed {
			xid := c.allocXid()
			if c.conn.Send(xid, proto.OpCloseSession, nil) == nil {
				_ = expectReply(c.conn, xid, r.opts.ReplyTimeout)
			}
		}
		c.conn.Close()
		c.conn = nil
	}
}

// connect opens a connection for c, replacing any it had.
func (r *runner) connect(c *client, st Step) error {
	opts := ConnectOptions{TimeOut: r.opts.SessionTimeout}
	badpw := false
	member, _ := strconv.Atoi(strings.TrimPrefix(c.name, "c")) // names are c<number>
	for _, a := range st.Args {
		key, val, hasVal := strings.Cut(a.Text, "=")
		switch {
		case key == "noro" && !hasVal:
			opts.OmitReadOnly = true
		case key == "ro" && !hasVal:
			opts.ReadOnly = true
		case key == "badpw" && !hasVal:
			badpw = true
		case key == "timeout" && hasVal:
			v, err := parseInt32("timeout", Token{Text: val})
			if err != nil {
				return err
			}
			opts.TimeOut = v
		case key == "session" && hasVal:
			other, ok := r.clients[val]
			if !ok || other.sessionID == 0 {
				return fmt.Errorf("session=%s: that client has no session", val)
			}
			opts.SessionID, opts.Passwd = other.sessionID, bytes.Clone(other.passwd)
		case key == "member" && hasVal:
			v, err := strconv.Atoi(val)
			if err != nil || v < 1 {
				return fmt.Errorf("connect: member=%s: want a member number from 1", val)
			}
			member = v
		case key == "zxid" && hasVal:
			if other, ok := r.clients[val]; ok {
				opts.LastZxidSeen = other.lastZxid
				break
			}
			v, err := parseInt64("zxid", Token{Text: val})
			if err != nil {
				return err
			}
			opts.LastZxidSeen = v
		default:
			return fmt.Errorf("connect: unknown option %q (want noro, ro, badpw, timeout=, session=, zxid=, member=)", a.Text)
		}
	}
	if badpw {
		if opts.Passwd == nil {
			opts.Passwd = make([]byte, 16)
		}
		opts.Passwd[0] ^= 0xff
	}
	r.drop(c)
	addr := r.opts.Members[(max(member, 1)-1)%len(r.opts.Members)]
	if len(r.opts.Members) > 1 && (opts.SessionID != 0 || opts.LastZxidSeen > 0) {
		if err := catchUp(addr, r.opts); err != nil {
			return fmt.Errorf("connect: bring %s up to date: %w", addr, err)
		}
	}
	conn, hs, err := Dial(addr, opts, r.opts.ReplyTimeout)
	if err != nil {
		if hs.Len == 0 {
			r.tr.Add(st.Text + " -> closed")
			return nil
		}
		r.tr.Add(fmt.Sprintf("%s -> bad handshake (%d bytes): %v", st.Text, hs.Len, err))
		return nil
	}
	c.conn, c.nextXid = conn, 1
	resp := hs.Response
	if resp.SessionID != 0 {
		c.sessionID, c.passwd = resp.SessionID, bytes.Clone(resp.Passwd)
	}
	line := fmt.Sprintf("%s -> session=%s timeout=%d readonly=%t len=%d", st.Text,
		r.tr.Session(resp.SessionID), resp.TimeOut, resp.ReadOnly, hs.Len)
	if resp.ProtocolVersion != 0 {
		line += " version=" + strconv.Itoa(int(resp.ProtocolVersion))
	}
	if bytes.Equal(resp.Passwd, make([]byte, len(resp.Passwd))) {
		line += " pw=zero"
	}
	if len(resp.Passwd) != 16 {
		line += fmt.Sprintf(" pwlen=%d", len(resp.Passwd))
	}
	r.tr.Add(line)
	return nil
}

// catchUp brings the ensemble member at addr up to date before a client
// reattaches a session there or sends the last zxid it saw, either of
// which may come from another member. A member whose state is older than
// that zxid refuses the session (ZooKeeper's "Refusing session request
// ... as it has seen zxid"); a member that has not applied the close of a
// session being reattached may answer the handshake or drop the
// connection when the close arrives; so what the client sees would
// depend on replication timing. A session of the runner's own, printed
// nowhere, sends a sync (which the member answers once it has applied
// everything the leader committed before it) and closes.
func catchUp(addr string, opts RunOptions) error {
	c, _, err := Dial(addr, ConnectOptions{TimeOut: opts.SessionTimeout}, opts.ReplyTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Send(1, proto.OpSync, &proto.SyncRequest{Path: opts.Root}); err != nil {
		return err
	}
	if err := expectReply(c, 1, opts.ReplyTimeout); err != nil {
		return fmt.Errorf("sync %s: %w", opts.Root, err)
	}
	if err := c.Send(2, proto.OpCloseSession, nil); err != nil {
		return err
	}
	return expectReply(c, 2, opts.ReplyTimeout)
}

// settle makes the member at addr apply every txn committed before it
// returns: a session of the runner's own, printed nowhere, is created
// there (a txn the member answers once it has applied it, and so every
// txn before it) and closed. Unlike a sync, this holds on ZooKeeper's
// leader too, whose sync is answered without waiting for the commits
// queued in its own pipeline, and whose checks of a new write use a
// setACL's outstanding change record (with the old ACL) until it has
// applied the setACL.
func settle(addr string, opts RunOptions) error {
	c, _, err := Dial(addr, ConnectOptions{TimeOut: opts.SessionTimeout}, opts.ReplyTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Send(1, proto.OpCloseSession, nil); err != nil {
		return err
	}
	return expectReply(c, 1, opts.ReplyTimeout)
}
