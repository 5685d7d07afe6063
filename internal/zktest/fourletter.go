package zktest

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// below the kernel's ephemeral port range, so no outgoing connection takes
// it as its local port. The port is not reserved: another process may
// take it before the caller binds it. The starters of this
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

// Free ports are picked below the kernel's ephemeral range (32768 and up
// on Linux): a port the kernel handed out for a listener on port 0 is
// also handed out as the local port of outgoing connections, so another
// test's client could take it between the check and the listen of the
// server the port is for ("address already in use").
const (
	freePortLow  = 20000
	freePortHigh = 32000
)

func freePort() (int, error) {
	var err error
	for range 200 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("zktest: find a free port on 127.0.0.1 in [%d, %d): %w", freePortLow, freePortHigh, err)
}
