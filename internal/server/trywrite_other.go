//go:build !unix

package server

// tryWrite writes all of b, waiting as long as it takes: this system's
// sockets are written without the raw connection (see flush).
func (c *conn) tryWrite(b []byte) (int, error) { return c.nc.Write(b) }
