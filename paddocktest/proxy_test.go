package paddocktest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
