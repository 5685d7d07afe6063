package zktest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// fourLetterTimeout bounds one four-letter-word exchange.
const fourLetterTimeout = 5 * time.Second

// FourLetterWord sends the four-letter word cmd (for example "ruok", "srvr",
// "envi") to the server at addr and returns everything the server wrote
// before closing the connection.
func FourLetterWord(addr, cmd string) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: command must be 4 bytes", cmd, addr)
	}
	conn, err := net.DialTimeout("tcp", addr, fourLetterTimeout)
	if err != nil {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(fourLetterTimeout)); err != nil {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: %w", cmd, addr, err)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: write: %w", cmd, addr, err)
	}
	// A server answers and closes; cap what we read in case it does not.
	out, err := io.ReadAll(io.LimitReader(conn, 1<<20))
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		return string(out), fmt.Errorf("zktest: four-letter word %q to %s: read: %w", cmd, addr, err)
	}
	return string(out), nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. The
// port is not reserved: another process, or a connection as its local
// port, may take it before the caller binds it. The starters of this
// package then start the server again on other ports (up to three tries);
// other callers must expect the bind to fail.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("zktest: find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	_, portStr, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		return 0, fmt.Errorf("zktest: find a free port: parse %q: %w", l.Addr(), err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return 0, fmt.Errorf("zktest: find a free port: parse %q: %w", portStr, err)
	}
	return port, nil
}
