package difftest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// frameQueueLen bounds the frames read ahead of the test. The reader
// blocks when it is full; nothing is dropped.
const frameQueueLen = 4096

// ConnectOptions configures the handshake of a Client.
type ConnectOptions struct {
	// TimeOut is the requested session timeout in milliseconds.
	TimeOut int32
	// SessionID and Passwd reattach an existing session; zero means a new one.
	SessionID int64
	Passwd    []byte
	// LastZxidSeen is sent in the ConnectRequest.
	LastZxidSeen int64
	// OmitReadOnly sends the 44-byte ConnectRequest without the readOnly byte.
	OmitReadOnly bool
	// ReadOnly is the value of the readOnly byte when it is sent.
	ReadOnly bool
}

// Handshake is what the server answered to the ConnectRequest.
type Handshake struct {
	Response proto.ConnectResponse
	// Len is the length of the ConnectResponse frame payload (36 or 37
	// with a 16-byte password).
	Len int
}

// Frame is one frame the server sent after the handshake: a reply or a
// notification, split into its header and the undecoded body. Err is set
// on the last item the reader delivers: the reason the stream ended.
//
// Next fills Op: OpNotification for a notification, else the opcode of
// the oldest request sent with Send or SendBody and not yet answered
// (replies come in request order; Pending reports whether there was
// one, and the xid can be compared with Header.Xid).
type Frame struct {
	Header  proto.ReplyHeader
	Body    []byte
	Err     error
	Op      proto.OpCode
	Xid     int32 // xid of the request the frame answers, if Pending
	Pending bool
}

// Decode decodes the body as the response to f.Op. An error reply has no
// body and decodes to nil.
func (f Frame) Decode() (proto.Response, error) {
	if f.Header.Err != proto.ErrOK {
		return nil, nil
	}
	return proto.DecodeResponse(f.Op, f.Body)
}

// sent is a request awaiting its reply.
type sent struct {
	xid int32
	op  proto.OpCode
}

// Client is a raw ZooKeeper protocol connection for tests. It sends any
// request with any xid (several may be in flight), any raw bytes, and
// hands back every frame in arrival order, notifications interleaved with
// replies. Sends are not synchronised: use a Client from one goroutine.
type Client struct {
	conn   net.Conn
	frames chan Frame
	done   chan struct{} // closed when the reader has returned
	wbuf   []byte
	sent   []sent // requests not yet answered, oldest first

	closeOnce sync.Once
	ended     bool // the reader's final Frame has been returned by Next
}

// Dial connects to addr, performs the handshake and starts reading frames.
// It returns the handshake even when the server closes the connection
// right after it (as for an expired session).
func Dial(addr string, opts ConnectOptions, timeout time.Duration) (*Client, Handshake, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, Handshake{}, fmt.Errorf("difftest: dial %s: %w", addr, err)
	}
	passwd := opts.Passwd
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := proto.ConnectRequest{
		LastZxidSeen: opts.LastZxidSeen,
		TimeOut:      opts.TimeOut,
		SessionID:    opts.SessionID,
		Passwd:       passwd,
		ReadOnly:     opts.ReadOnly,
		OmitReadOnly: opts.OmitReadOnly,
	}
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		conn.Close()
		return nil, Handshake{}, fmt.Errorf("difftest: handshake with %s: %w", addr, err)
	}
	if _, err := conn.Write(proto.AppendRecordFrame(nil, &req)); err != nil {
		conn.Close()
		return nil, Handshake{}, fmt.Errorf("difftest: send ConnectRequest to %s: %w", addr, err)
	}
	body, err := proto.ReadFrame(conn, nil, proto.DefaultMaxBuffer)
	if err != nil {
		conn.Close()
		return nil, Handshake{}, fmt.Errorf("difftest: read ConnectResponse from %s: %w", addr, err)
	}
	var hs Handshake
	hs.Len = len(body)
	if err := proto.Unmarshal(body, &hs.Response); err != nil {
		conn.Close()
		return nil, hs, fmt.Errorf("difftest: decode %d-byte ConnectResponse from %s: %w", len(body), addr, err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, hs, fmt.Errorf("difftest: handshake with %s: %w", addr, err)
	}
	c := &Client{conn: conn, frames: make(chan Frame, frameQueueLen), done: make(chan struct{})}
	go c.read()
	return c, hs, nil
}

// read delivers frames until the stream ends, then one Frame with Err set.
func (c *Client) read() {
	defer close(c.done)
	defer close(c.frames)
	for {
		body, err := proto.ReadFrame(c.conn, nil, 16<<20)
		if err != nil {
			c.frames <- Frame{Err: err}
			return
		}
		var f Frame
		d := proto.NewDecoder(body)
		f.Header.Decode(d)
		if d.Err() != nil {
			c.frames <- Frame{Err: fmt.Errorf("difftest: %d-byte frame: %w", len(body), d.Err())}
			return
		}
		f.Body = body[proto.ReplyHeaderSize:]
		c.frames <- f
	}
}

// Send writes one request frame: RequestHeader{xid, op} and req (nil for
// no body).
func (c *Client) Send(xid int32, op proto.OpCode, req proto.Request) error {
	c.wbuf = proto.AppendRequestFrame(c.wbuf[:0], xid, op, req)
	if err := c.write(c.wbuf); err != nil {
		return err
	}
	c.sent = append(c.sent, sent{xid: xid, op: op})
	return nil
}

// SendBody writes a request frame with an arbitrary body after the header.
func (c *Client) SendBody(xid int32, op proto.OpCode, body []byte) error {
	b, start := proto.StartFrame(c.wbuf[:0])
	h := proto.RequestHeader{Xid: xid, Op: op}
	b = h.Append(b)
	b = append(b, body...)
	if err := proto.FinishFrame(b, start); err != nil {
		return err
	}
	c.wbuf = b
	if err := c.write(b); err != nil {
		return err
	}
	c.sent = append(c.sent, sent{xid: xid, op: op})
	return nil
}

// SendRaw writes b as it is, with no framing. It registers no pending
// request.
func (c *Client) SendRaw(b []byte) error { return c.write(b) }

func (c *Client) write(b []byte) error {
	if err := c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return fmt.Errorf("difftest: write: %w", err)
	}
	if _, err := c.conn.Write(b); err != nil {
		return fmt.Errorf("difftest: write %d bytes: %w", len(b), err)
	}
	return nil
}

// ErrTimeout is returned by Next when no frame arrived in time.
var ErrTimeout = errors.New("difftest: no frame before the deadline")

// Next returns the next frame, waiting at most timeout. Once the stream
// has ended it returns a Frame whose Err says why (io.EOF for a clean
// close by the server), every time it is called.
func (c *Client) Next(timeout time.Duration) (Frame, error) {
	if c.ended {
		return Frame{Err: io.EOF}, nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.ended = true
			return Frame{Err: io.EOF}, nil
		}
		switch {
		case f.Err != nil:
			c.ended = true
		case f.Header.Xid == proto.XidNotification:
			f.Op = proto.OpNotification
		case len(c.sent) > 0:
			f.Op, f.Xid, f.Pending = c.sent[0].op, c.sent[0].xid, true
			c.sent = c.sent[1:]
		}
		return f, nil
	case <-t.C:
		return Frame{}, ErrTimeout
	}
}

// Close closes the connection and waits for the reader to return.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		err = c.conn.Close()
		// Drain so the reader is never blocked on a full queue.
		for range c.frames {
		}
		<-c.done
	})
	return err
}

// IsClosedErr reports whether err (a Frame's Err) means the server closed
// the connection, rather than a protocol error.
func IsClosedErr(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op)
}
