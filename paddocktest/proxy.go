package paddocktest

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// linkMode is what a proxy does with the traffic through it.
type linkMode int

const (
	// modePass copies bytes both ways.
	modePass linkMode = iota
	// modeCut resets every connection, and every new one as soon as it
	// is accepted: the connect itself succeeds, as it does to a live
	// process behind a broken link (a connect that is refused is unlisten's
	// work).
	modeCut
	// modeFrozen keeps connections open (and accepts new ones) but copies
	// nothing, not even a close, until the mode changes: what the other
	// end of a SIGSTOPped process sees.
	modeFrozen
)

func (m linkMode) String() string {
	switch m {
	case modePass:
		return "pass"
	case modeCut:
		return "cut"
	case modeFrozen:
		return "frozen"
	}
	return "linkMode(?)"
}

const (
	proxyDialTimeout = 5 * time.Second
	proxyBufferSize  = 32 << 10
)

// proxy is a TCP forwarder: a listener on a loopback port whose
// connections are forwarded to target() (asked at each new connection, so
// that the target may move). Every link between members and every
// member's client port goes through one.
//
// The port is chosen when the proxy is made and kept for its life. unlisten
// closes the listener, so that connecting to the port is refused, as to the
// port of a process that is gone; listen opens it again on the same port.
//
// Each accepted connection is served by one goroutine, which dials the
// target once the proxy is not frozen and then copies one direction while
// a second goroutine copies the other. A copier reads a chunk, then waits
// at the gate (wait) before it writes it; an end of stream or an error is
// passed on at the gate too. close stops the listener, resets every
// connection and waits for every goroutine.
type proxy struct {
	address *net.TCPAddr // where it listens (or listened, and will again)
	target  func() string
	ctx     context.Context // cancelled by close: abandons dials
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	ln      net.Listener // nil while unlistened and once closed
	mode    linkMode
	changed chan struct{} // closed and replaced at every change of mode and at close
	conns   map[net.Conn]struct{}
	closed  bool
}

// newProxy listens on a free loopback port and starts forwarding to target.
func newProxy(target func() string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxy{
		address: ln.Addr().(*net.TCPAddr),
		target:  target,
		ctx:     ctx,
		cancel:  cancel,
		ln:      ln,
		changed: make(chan struct{}),
		conns:   make(map[net.Conn]struct{}),
	}
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// addr is the proxy's listening address, host:port.
func (p *proxy) addr() string { return p.address.String() }

// port is the proxy's listening port.
func (p *proxy) port() int { return p.address.Port }

// relistenTimeout bounds how long listen keeps trying for a port that is
// taken: the port is free while the proxy does not listen, and another
// socket may hold it for a moment.
const relistenTimeout = 5 * time.Second

// unlisten closes the listener: connecting to the proxy's port is refused
// until listen. Connections already accepted are left as they are (the
// mode decides what becomes of them). Unlistening a proxy that does not
// listen does nothing.
func (p *proxy) unlisten() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	p.mu.Unlock()
	if ln != nil {
		ln.Close() // its accept goroutine returns
	}
}

// listen listens again on the proxy's port after unlisten. While the port
// is taken it tries again, for up to relistenTimeout; past that it returns
// the error, and the proxy still does not listen. Listening on a proxy that
// listens does nothing; listening on a closed one returns net.ErrClosed.
func (p *proxy) listen() error {
	deadline := time.Now().Add(relistenTimeout)
	for {
		err := p.listenOnce()
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-p.ctx.Done():
			return net.ErrClosed
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *proxy) listenOnce() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return net.ErrClosed
	case p.ln != nil:
		return nil
	}
	ln, err := net.ListenTCP("tcp", p.address)
	if err != nil {
		return err
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

// setMode changes what the proxy does; modeCut resets every connection.
func (p *proxy) setMode(m linkMode) {
	p.mu.Lock()
	if p.closed || p.mode == m {
		p.mu.Unlock()
		return
	}
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
	var victims []net.Conn
	if m == modeCut {
		victims = p.takeConns()
	}
	p.mu.Unlock()
	for _, c := range victims {
		reset(c)
	}
}

// getMode returns the current mode.
func (p *proxy) getMode() linkMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// close stops the proxy: it closes the listener, resets every connection
// and waits for every goroutine.
func (p *proxy) close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.changed)
	victims := p.takeConns()
	ln := p.ln
	p.ln = nil
	p.mu.Unlock()
	p.cancel()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	for _, c := range victims {
		reset(c)
	}
	p.wg.Wait()
	return err
}

// takeConns empties the connection set and returns what it held. p.mu is
// held.
func (p *proxy) takeConns() []net.Conn {
	cs := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
		delete(p.conns, c)
	}
	return cs
}

// track adds c to the connections close and a cut reset. It reports false,
// having reset c, when the proxy is closed or cut.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	if p.closed || p.mode == modeCut {
		p.mu.Unlock()
		reset(c)
		return false
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	return true
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.conns, c)
	}
	p.mu.Unlock()
}

// wait is the gate: it returns true at once in modePass, false when the
// proxy is cut or closed, and blocks while it is frozen.
func (p *proxy) wait() bool {
	for {
		p.mu.Lock()
		closed, mode, ch := p.closed, p.mode, p.changed
		p.mu.Unlock()
		switch {
		case closed || mode == modeCut:
			return false
		case mode == modePass:
			return true
		}
		<-ch
	}
}

// accept serves the connections ln accepts, until ln is closed (by
// unlisten or close).
func (p *proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, say: wait a little, as
			// net/http's server does, rather than give up.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			reset(c)
			return
		}
		if p.mode == modeCut {
			p.mu.Unlock()
			reset(c)
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(c)
	}
}

// serve forwards one accepted connection.
func (p *proxy) serve(in net.Conn) {
	defer p.wg.Done()
	defer p.untrack(in)
	if !p.wait() {
		reset(in)
		return
	}
	d := net.Dialer{Timeout: proxyDialTimeout}
	out, err := d.DialContext(p.ctx, "tcp", p.target())
	if err != nil {
		reset(in)
		return
	}
	if !p.track(out) {
		reset(in)
		return
	}
	defer p.untrack(out)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.copy(out, in)
	}()
	p.copy(in, out)
	<-done
	in.Close()
	out.Close()
}

// copy copies src to dst through the gate. An end of stream is passed on
// as a half close; an error, or a cut, resets both connections.
func (p *proxy) copy(dst, src net.Conn) {
	buf := make([]byte, proxyBufferSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				reset(src)
				reset(dst)
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				reset(src)
				reset(dst)
				return
			}
		}
		if err == nil {
			continue
		}
		if !p.wait() || !errors.Is(err, io.EOF) {
			reset(src)
			reset(dst)
			return
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		} else {
			dst.Close()
		}
		return
	}
}

// reset closes c with a TCP reset rather than a FIN, so that its peer
// sees the connection fail rather than end.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
