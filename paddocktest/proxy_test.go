package paddocktest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// echoServer accepts connections and echoes each line back; a line "bye"
// makes it close the connection.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "bye\n" {
						return
					}
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p, err := newProxy(func() string { return target })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeWithin(t, p, 5*time.Second) })
	return p
}

func closeWithin(t *testing.T, p *proxy, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { p.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("proxy close did not return within %v", d)
	}
}

func dialProxy(t *testing.T, p *proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes line and reads the echo within d.
func roundTrip(c net.Conn, line string, d time.Duration) (string, error) {
	if _, err := io.WriteString(c, line); err != nil {
		return "", err
	}
	return readLine(c, d)
}

func readLine(c net.Conn, d time.Duration) (string, error) {
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 0, 64)
	b := make([]byte, 1)
	for {
		if _, err := c.Read(b); err != nil {
			return string(buf), err
		}
		buf = append(buf, b[0])
		if b[0] == '\n' {
			return string(buf), nil
		}
	}
}

// refused checks that a connection through p is closed at once: the dial
// itself may see the reset, or the first read does.
func refused(p *proxy) error {
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		return nil
	}
	defer c.Close()
	got, err := roundTrip(c, "x\n", ready)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("read %q, %v; want the connection closed", got, err)
	}
	return nil
}

const (
	quiet = 200 * time.Millisecond // how long "nothing arrives" is watched
	ready = 5 * time.Second        // bound for what must arrive
)

func TestProxyPass(t *testing.T) {
	p := startProxy(t, echoServer(t))
	c := dialProxy(t, p)
	for _, line := range []string{"one\n", "two\n"} {
		if got, err := roundTrip(c, line, ready); err != nil || got != line {
			t.Fatalf("echo of %q = %q, %v", line, got, err)
		}
	}
	// The server's close reaches the client as an end of stream.
	io.WriteString(c, "bye\n")
	if _, err := readLine(c, ready); !errors.Is(err, io.EOF) {
		t.Fatalf("after the server closed: %v, want EOF", err)
	}
}

func TestProxyFrozen(t *testing.T) {
	p := startProxy(t, echoServer(t))
	old := dialProxy(t, p)
	if _, err := roundTrip(old, "before\n", ready); err != nil {
		t.Fatal(err)
	}
	p.setMode(modeFrozen)
	// An open connection carries nothing, and stays open.
	if got, err := roundTrip(old, "held\n", quiet); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("frozen: read %q, %v; want a timeout", got, err)
	}
	// A new connection is accepted but carries nothing either.
	fresh := dialProxy(t, p)
	if got, err := roundTrip(fresh, "new\n", quiet); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("frozen, new connection: read %q, %v; want a timeout", got, err)
	}
	// The server's close is held too.
	io.WriteString(old, "bye\n")
	p.setMode(modePass)
	for _, tc := range []struct {
		c    net.Conn
		want string
	}{{old, "held\n"}, {fresh, "new\n"}} {
		if got, err := readLine(tc.c, ready); err != nil || got != tc.want {
			t.Fatalf("after thawing: %q, %v; want %q", got, err, tc.want)
		}
	}
	if _, err := readLine(old, ready); !errors.Is(err, io.EOF) {
		t.Fatalf("after thawing, the held close: %v, want EOF", err)
	}
	if got, err := roundTrip(fresh, "again\n", ready); err != nil || got != "again\n" {
		t.Fatalf("after thawing, new traffic: %q, %v", got, err)
	}
}

func TestProxyCut(t *testing.T) {
	p := startProxy(t, echoServer(t))
	old := dialProxy(t, p)
	if _, err := roundTrip(old, "before\n", ready); err != nil {
		t.Fatal(err)
	}
	// Cutting a frozen proxy also resets what the freeze held.
	p.setMode(modeFrozen)
	p.setMode(modeCut)
	if _, err := readLine(old, ready); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("cut: existing connection read %v; want it reset", err)
	}
	if err := refused(p); err != nil {
		t.Fatalf("cut: new connection: %v", err)
	}
	p.setMode(modePass)
	if got, err := roundTrip(dialProxy(t, p), "healed\n", ready); err != nil || got != "healed\n" {
		t.Fatalf("healed: %q, %v", got, err)
	}
}

func TestProxyUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close()
	p := startProxy(t, target)
	if err := refused(p); err != nil {
		t.Fatalf("target down: %v", err)
	}
}

func TestProxyCloseEndsEverything(t *testing.T) {
	target := echoServer(t)
	p, err := newProxy(func() string { return target })
	if err != nil {
		t.Fatal(err)
	}
	passing := dialProxy(t, p)
	if _, err := roundTrip(passing, "x\n", ready); err != nil {
		t.Fatal(err)
	}
	p.setMode(modeFrozen)
	held := dialProxy(t, p)
	io.WriteString(held, "y\n")
	closeWithin(t, p, ready)
	for _, c := range []net.Conn{passing, held} {
		if _, err := readLine(c, ready); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("after close: read %v; want the connection closed", err)
		}
	}
	if c, err := net.Dial("tcp", p.addr()); err == nil {
		c.Close()
		t.Fatal("the proxy still accepts connections after close")
	}
}

func TestProxyUnlistenRefuses(t *testing.T) {
	p := startProxy(t, echoServer(t))
	old := dialProxy(t, p)
	if _, err := roundTrip(old, "before\n", ready); err != nil {
		t.Fatal(err)
	}
	addr := p.addr()
	p.unlisten()
	p.unlisten() // twice is harmless
	// A connect is refused, as by a port nothing listens on...
	if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("unlistened: dial %s: %v, want connection refused", addr, err)
	}
	// ...while what was accepted goes on as the mode says.
	if got, err := roundTrip(old, "still\n", ready); err != nil || got != "still\n" {
		t.Fatalf("unlistened, existing connection: %q, %v", got, err)
	}
	if err := p.listen(); err != nil {
		t.Fatal(err)
	}
	if err := p.listen(); err != nil {
		t.Fatalf("listening twice: %v", err)
	}
	if p.addr() != addr {
		t.Fatalf("listening again on %s, was %s", p.addr(), addr)
	}
	if got, err := roundTrip(dialProxy(t, p), "again\n", ready); err != nil || got != "again\n" {
		t.Fatalf("listening again: %q, %v", got, err)
	}
}

// A port taken for a moment while the proxy did not listen is waited for.
func TestProxyListenWaitsForPort(t *testing.T) {
	p := startProxy(t, echoServer(t))
	p.unlisten()
	squatter, err := net.Listen("tcp", p.addr())
	if err != nil {
		t.Fatalf("taking the proxy's port: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.listen() }()
	select {
	case err := <-done:
		squatter.Close()
		t.Fatalf("listen returned %v while the port was taken", err)
	case <-time.After(quiet):
	}
	squatter.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("listen after the port was freed: %v", err)
		}
	case <-time.After(relistenTimeout + ready):
		t.Fatal("listen did not return")
	}
	if got, err := roundTrip(dialProxy(t, p), "back\n", ready); err != nil || got != "back\n" {
		t.Fatalf("listening again: %q, %v", got, err)
	}
}

func TestProxyCloseUnlistened(t *testing.T) {
	p, err := newProxy(func() string { return "127.0.0.1:0" })
	if err != nil {
		t.Fatal(err)
	}
	p.unlisten()
	closeWithin(t, p, ready)
	if err := p.listen(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listen after close: %v, want net.ErrClosed", err)
	}
}
