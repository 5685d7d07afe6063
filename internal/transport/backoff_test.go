package transport

import (
	"net"
	"testing"
	"time"
)

// TestNoRedialStormOnStreamsThatBreakAtOnce plays an acceptor that accepts
// every message stream's hello and closes the stream at once (as a member
// does whose every stream breaks on arrival: a message over its bound, a
// peer misconfigured). The dialer must back off as it does for failed
// dials, not redial every 50ms for as long as it lasts.
func TestNoRedialStormOnStreamsThatBreakAtOnce(t *testing.T) {
	checkLeaks(t)
	ln, tn := handPlayedPeer(t)
	tn.start(t, 1, []uint64{1, 2}, nil)

	const window = 1500 * time.Millisecond
	// Backing off from 50ms (jittered down to half) to 1s, the dialer
	// sleeps at least 25+50+100+200+400 ms before its sixth dial and 500ms
	// before each one after: no more than 7 streams in the window. Without
	// backoff it opens one every 25-50ms.
	const most = 8
	end := time.Now().Add(window)
	streams := 0
	for {
		_ = ln.(*net.TCPListener).SetDeadline(end)
		c, err := ln.Accept()
		if err != nil {
			break // the window is over
		}
		_ = c.SetDeadline(time.Now().Add(waitTimeout))
		if _, err := readHello(c); err == nil {
			if _, err := c.Write([]byte{byte(helloOK)}); err == nil {
				streams++
			}
		}
		_ = c.Close()
	}
	if streams > most {
		t.Fatalf("%d message streams opened in %v to a peer that closes each at once; want at most %d (backoff)", streams, window, most)
	}
	if streams < 2 {
		t.Fatalf("only %d streams in %v: the dialer did not redial", streams, window)
	}
}
