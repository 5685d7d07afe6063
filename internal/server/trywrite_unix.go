//go:build unix

package server

import (
	"errors"
	"syscall"
)

// tryWrite writes as much of b as the socket takes without waiting and
// returns how much that was (see flush). Without a raw connection it
// writes all of b, waiting as long as it takes. The caller holds wmu.
func (c *conn) tryWrite(b []byte) (int, error) {
	if c.raw == nil {
		return c.nc.Write(b)
	}
	if c.rawWrite == nil {
		c.rawWrite = c.writeRaw
	}
	c.wbuf, c.wn, c.werr = b, 0, nil
	err := c.raw.Write(c.rawWrite)
	n, werr := c.wn, c.werr
	c.wbuf, c.werr = nil, nil
	if err == nil {
		err = werr
	}
	return n, err
}

// writeRaw writes c.wbuf[c.wn:] to the socket fd until it is written or
// the socket is full (EAGAIN), and never asks to wait: the rest is
// written behind.
func (c *conn) writeRaw(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		m, err := syscall.Write(int(fd), c.wbuf[c.wn:])
		if m > 0 {
			c.wn += m
		}
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return true
		case err != nil:
			c.werr = err
			return true
		case m <= 0:
			return true
		}
	}
	return true
}
