package recipe_test

import (
	"context"
	"encoding/binary"
	"net"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// lastConn is a dialer that wraps each connection it makes and keeps the
// latest wrapper, for a test to arm between calls.
type lastConn[T net.Conn] struct {
	mu  sync.Mutex
	cur T
}

// option dials through wrap.
func (l *lastConn[T]) option(wrap func(net.Conn) T) zk.Option {
	return zk.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.cur = wrap(nc)
		return l.cur, nil
	})
}

// with runs f on the latest connection, which no dial replaces meanwhile.
func (l *lastConn[T]) with(f func(T)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l.cur)
}

// filterConn passes what the client writes on to the server frame by
// frame. Each request frame (every frame after the ConnectRequest, which
// has no header) first goes to filter, which may change it in place and
// decides what becomes of it.
type filterConn struct {
	net.Conn
	filter func(frame []byte) verdict

	mu      sync.Mutex
	pending []byte
	started bool // the ConnectRequest went first
	holding bool // a request was held back: hold back what follows
}

// verdict is what filterConn does with a request frame.
type verdict int

const (
	send verdict = iota // write it
	hold                // write neither it nor any frame after it
	cut                 // close the connection instead; the write fails
)

func (c *filterConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, p...)
	for len(c.pending) >= 4 {
		n := int(binary.BigEndian.Uint32(c.pending))
		if len(c.pending) < 4+n {
			break
		}
		frame := append([]byte(nil), c.pending[:4+n]...)
		c.pending = append(c.pending[:0], c.pending[4+n:]...)
		if c.holding {
			continue
		}
		if c.started && n >= 8 {
			switch c.filter(frame) {
			case hold:
				c.holding = true
				continue
			case cut:
				c.Conn.Close()
				return 0, net.ErrClosed
			}
		}
		c.started = true
		if _, err := c.Conn.Write(frame); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// opcode is a request frame's opcode.
func opcode(frame []byte) uint32 { return binary.BigEndian.Uint32(frame[8:12]) }
