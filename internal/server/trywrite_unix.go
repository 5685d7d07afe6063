//go:build unix

package server

import (
	"errors"
	"syscall"
)

// tryWrite writes as much of b as the socket takes without waiting and
// returns how much that was (see flush). Without a raw connection it
// writes all of b, waiting as long as it takes.
func (c *conn) tryWrite(b []byte) (int, error) {
	if c.raw == nil {
		return c.nc.Write(b)
	}
	n := 0
	var werr error
	err := c.raw.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := syscall.Write(int(fd), b[n:])
			if m > 0 {
				n += m
			}
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
				return true // full: the rest is written behind
			case err != nil:
				werr = err
				return true
			case m <= 0:
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return n, err
}
