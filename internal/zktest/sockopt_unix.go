//go:build unix

package zktest

import (
	"net"
	"syscall"
	"testing"
)

// SockoptInt returns the integer socket option opt at level of the TCP
// connection nc (syscall.SO_KEEPALIVE at syscall.SOL_SOCKET, for example),
// failing t if it cannot be read.
func SockoptInt(t testing.TB, nc net.Conn, level, opt int) int {
	t.Helper()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		t.Fatalf("%T has no socket to read options of", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatalf("getsockopt(%d, %d): %v", level, opt, gerr)
	}
	return v
}
