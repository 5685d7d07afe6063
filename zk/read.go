package zk

import (
	"fmt"
	"net"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// read reads replies and notifications until the connection fails. It is
// the only goroutine that completes calls of an established connection, so
// completions and events are queued in the order the server sent them.
func (c *Conn) read(nc net.Conn, readTimeout time.Duration) error {
	br := getReader(&liveReader{c: c, nc: nc, timeout: readTimeout})
	defer putReader(br)
	buf := make([]byte, 0, 4096)
	dec := new(proto.Decoder) // reused for every reply body
	for {
		// The length prefix is peeked from br rather than read into an
		// array through io.Reader, which would allocate for every frame.
		prefix, err := br.Peek(4)
		if err != nil {
			return err
		}
		hdr4 := [4]byte(prefix)
		br.Discard(4)
		frame, err := proto.ReadFramePayload(br, hdr4, buf, c.cfg.maxBufferSize)
		if err != nil {
			return err
		}
		if cap(frame) > cap(buf) && cap(frame) <= 1<<20 {
			buf = frame[:0]
		}
		var hdr proto.ReplyHeader
		d := proto.NewDecoder(frame)
		hdr.Decode(d)
		if err := d.Err(); err != nil {
			return fmt.Errorf("reply header: %w", err)
		}
		body := frame[proto.ReplyHeaderSize:]
		switch hdr.Xid {
		case proto.XidNotification:
			err = c.notify(hdr, body)
		case proto.XidPing:
		case proto.XidAuth:
			err = c.authReply(hdr)
		default:
			err = c.reply(hdr, body, dec)
		}
		if err != nil {
			return err
		}
	}
}

// liveReader is the socket under the reader's buffer. The server must
// send something (a reply, a ping's, an event) within the read timeout,
// and, as in ZooKeeper's client, any bytes received show it alive: every
// read from the socket gets a fresh deadline and records the time bytes
// came, so that a large reply arriving steadily is never cut short
// however long its transfer takes.
type liveReader struct {
	c       *Conn
	nc      net.Conn
	timeout time.Duration
}

func (r *liveReader) Read(p []byte) (int, error) {
	if err := r.nc.SetReadDeadline(time.Now().Add(r.timeout)); err != nil {
		return 0, err
	}
	n, err := r.nc.Read(p)
	if n > 0 {
		r.c.heard()
	}
	return n, err
}

func (c *Conn) heard() {
	c.lastHeard.Store(time.Now().UnixNano())
}

// notify dispatches a watch event to the watchers it fires.
func (c *Conn) notify(hdr proto.ReplyHeader, body []byte) error {
	var we proto.WatcherEvent
	if err := proto.Unmarshal(body, &we); err != nil {
		return fmt.Errorf("watch event: %w", err)
	}
	ev := Event{Type: EventType(we.Type), State: State(we.State), Path: c.root.client(we.Path), Zxid: hdr.Zxid}
	c.mu.Lock()
	ws := c.watches.trigger(ev.Type, ev.Path)
	c.mu.Unlock()
	for _, w := range ws {
		c.events.push(func() { w.Process(ev) })
	}
	return nil
}

// authReply completes the oldest auth packet. A refusal ends the
// connection and, through loop, the session (StateAuthFailed).
func (c *Conn) authReply(hdr proto.ReplyHeader) error {
	c.mu.Lock()
	var cl *call
	if len(c.authq) > 0 {
		cl = c.authq[0]
		c.authq[0] = nil
		c.authq = c.authq[1:]
	}
	failed := hdr.Err == proto.ErrAuthFailed
	if failed {
		c.authFail = true
	}
	c.mu.Unlock()
	if cl != nil {
		c.finish(cl, codeError(hdr.Err))
	}
	if failed {
		return ErrAuthFailed
	}
	return nil
}

// reply completes the oldest pending call with the reply: the server
// answers a session's requests in order.
func (c *Conn) reply(hdr proto.ReplyHeader, body []byte, dec *proto.Decoder) error {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return fmt.Errorf("reply with xid %d and no request waiting", hdr.Xid)
	}
	cl := c.pending[0]
	if cl.xid != hdr.Xid {
		c.mu.Unlock()
		return fmt.Errorf("reply with xid %d while xid %d (%s) waits", hdr.Xid, cl.xid, cl.op)
	}
	c.pending[0] = nil
	if len(c.pending) == 1 {
		// Empty: keep the slot, or every call of a caller that waits
		// for each reply would allocate a new queue.
		c.pending = c.pending[:0]
	} else {
		c.pending = c.pending[1:]
	}
	if hdr.Zxid > 0 {
		c.lastZxid = hdr.Zxid
	}
	if cl.watch != watchNone {
		switch {
		case hdr.Err == proto.ErrOK && cl.watch == watchExist:
			c.watches.add(watchData, cl.path, cl.watcher)
		case hdr.Err == proto.ErrOK:
			c.watches.add(cl.watch, cl.path, cl.watcher)
		case hdr.Err == proto.ErrNoNode && cl.watch == watchExist:
			c.watches.add(watchExist, cl.path, cl.watcher)
		}
	}
	c.mu.Unlock()
	if hdr.Err != proto.ErrOK {
		c.finish(cl, codeError(hdr.Err))
		return nil
	}
	if cl.resp != nil {
		*dec = *proto.NewDecoder(body) // proto.Unmarshal would allocate one per reply
		cl.resp.Decode(dec)
		if err := dec.Err(); err != nil {
			op := cl.op // a completed call is recycled: read it first
			c.finish(cl, ErrMarshallingError)
			return fmt.Errorf("reply to %s: %w", op, err)
		}
	}
	c.finish(cl, nil)
	return nil
}
