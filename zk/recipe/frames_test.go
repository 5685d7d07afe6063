package recipe_test

import (
	"encoding/binary"
	"net"
	"sync"
)

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
