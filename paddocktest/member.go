package paddocktest

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/paddockhq/paddock/internal/server"
)

// Member is one server of an Ensemble.
type Member struct {
	e        *Ensemble
	id       int
	observer bool
	dir      string
	log      *slog.Logger
	client   *proxy // clients' way in: ClientAddr

	// opMu serialises start, Stop, Kill and Restart, and guards peerPort.
	opMu     sync.Mutex
	peerPort int

	srv        atomic.Pointer[server.Server] // nil while stopped
	peerAddr   atomic.Pointer[string]        // where the link proxies into this member forward
	clientAddr atomic.Pointer[string]        // where the client proxy forwards

	// Guarded by e.mu.
	down   bool // stopped or being killed: its proxies reset everything
	paused bool // (while down, its inbound proxies do not listen either)
}

// ErrRunning is returned by Restart for a member that is running.
var ErrRunning = errors.New("paddocktest: member is running")

// ErrClosed is returned by Restart once the ensemble is closed.
var ErrClosed = errors.New("paddocktest: ensemble closed")

// ID returns the member's server id (its myid).
func (m *Member) ID() int { return m.id }

// Observer reports whether the member is an observer.
func (m *Member) Observer() bool { return m.observer }

// ClientAddr returns the host:port clients use to reach this member. It
// is the address of the member's client proxy (see Pause), and stays the
// same across Stop and Restart.
func (m *Member) ClientAddr() string { return m.client.addr() }

// Mode returns the member's part as srvr's "Mode:" line names it:
// "leader", "follower" or "observer" ("standalone" for an ensemble of
// one); "" when the member is stopped or not serving (it knows no leader,
// or has not caught up with it yet). A paused member reports its own
// view, which others cannot see.
func (m *Member) Mode() string {
	s := m.server()
	if s == nil || !s.Serving() {
		return ""
	}
	return s.Mode()
}

// Running reports whether the member is started (neither stopped nor
// killed). A running member may still not serve: see Mode.
func (m *Member) Running() bool { return m.server() != nil }

func (m *Member) server() *server.Server { return m.srv.Load() }

// Stop stops the member gracefully, as Paddock does on SIGTERM: its
// client and peer ports stop listening (connecting to them is refused until
// Restart), it closes its client connections and its peer streams, waits
// for its work in flight and closes its log. Its sessions stay in the
// ensemble's state, so clients that move to another member keep them.
// Stopping a stopped member does nothing.
func (m *Member) Stop() error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	s := m.srv.Swap(nil)
	if s == nil {
		return nil
	}
	m.unlisten()
	err := s.Close()
	m.setDown(true)
	return err
}

// Kill stops the member as abruptly as can be done inside one process:
// first its client and peer ports stop listening, and every connection of
// the member, to its clients and to its peers, is reset at its proxy, with
// no goodbye of any kind and nothing more delivered either way; then the
// server is closed. Others see what they see when a process dies: their
// streams from it fail, and connecting to its ports (ClientAddr, and the
// address each other member has for it) is refused until Restart. A
// follower that sees its leader's streams end and its port refuse
// connections stands for election at once rather than after the election
// timeout, as it does when a real leader process dies.
//
// Unlike kill -9, the member's own state is not cut short: the server's
// goroutines finish the step they are in, and its write-ahead log and
// snapshots are closed cleanly, so a restart never finds a torn write or
// a half-written snapshot. Crashes mid-write are what the multi-process
// tests (internal/zktest's Process.Kill, a real SIGKILL) and raftnode's
// crash tests cover. Killing a stopped member does nothing.
func (m *Member) Kill() error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	s := m.srv.Load()
	if s == nil {
		return nil
	}
	m.unlisten()
	m.setDown(true)
	m.srv.Store(nil)
	return s.Close()
}

// Restart starts a stopped or killed member again with the same data
// directory, id, configuration and addresses: its ports listen again
// (the same ports: should another socket hold one meanwhile, Restart waits
// a few seconds for it, then fails), and it recovers its state from its
// snapshot and log and catches up with the leader. It returns once the
// member is started, not once it serves (see Ensemble.WaitServing and
// Mode). A member paused before it was stopped or killed restarts
// unpaused, as a new process would. It returns ErrRunning if the member is
// running and ErrClosed once the ensemble is closed.
func (m *Member) Restart() error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if m.srv.Load() != nil {
		return ErrRunning
	}
	m.e.mu.Lock()
	closed := m.e.closed
	m.e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := m.listen(); err != nil {
		return err
	}
	m.e.mu.Lock()
	m.down, m.paused = false, false
	m.e.applyLocked()
	m.e.mu.Unlock()
	if err := m.startLocked(); err != nil {
		m.unlisten()
		m.setDown(true)
		return err
	}
	return nil
}

// inbound returns the proxies through which others reach the member: its
// client proxy and the links from every other member to it.
func (m *Member) inbound() []*proxy {
	ps := []*proxy{m.client}
	for _, o := range m.e.members {
		if o != m {
			ps = append(ps, m.e.links[link{o.id, m.id}])
		}
	}
	return ps
}

// unlisten closes the listeners of the member's inbound proxies, so that
// connecting to the member is refused, as to a process that is gone.
// m.opMu is held.
func (m *Member) unlisten() {
	for _, p := range m.inbound() {
		p.unlisten()
	}
}

// listen undoes unlisten. If a port cannot be had again, it unlistens
// those it reopened and returns the error. m.opMu is held.
func (m *Member) listen() error {
	for _, p := range m.inbound() {
		if err := p.listen(); err != nil {
			m.unlisten()
			if errors.Is(err, net.ErrClosed) {
				return ErrClosed
			}
			return fmt.Errorf("paddocktest: %v: listening again on %s: %w", m, p.addr(), err)
		}
	}
	return nil
}

// Pause freezes the member as others would see a SIGSTOPped process: the
// traffic of its client connections and of its links to every other
// member stops flowing, both ways, while the connections stay open; new
// connections are accepted but carry nothing. Resume lets everything
// queued meanwhile through.
//
// Only the network is frozen, not the member: its clocks keep running, so
// it notices it hears no leader after an election timeout and stops
// serving (a paused leader steps down), closing its client connections,
// which its clients see only after Resume. A stopped process would notice
// only once resumed. Pausing a paused member does nothing.
func (m *Member) Pause() { m.setPaused(true) }

// Resume undoes Pause.
func (m *Member) Resume() { m.setPaused(false) }

func (m *Member) setPaused(p bool) {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	m.paused = p
	m.e.applyLocked()
}

func (m *Member) setDown(d bool) {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	m.down = d
	m.e.applyLocked()
}

func (m *Member) peerTarget() string   { return deref(m.peerAddr.Load()) }
func (m *Member) clientTarget() string { return deref(m.clientAddr.Load()) }

func deref(p *string) string {
	if p == nil {
		return "127.0.0.1:0" // not started yet: the dial fails
	}
	return *p
}

// start starts the member for the first time.
func (m *Member) start() error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	return m.startLocked()
}

// startLocked starts the server. If its peer port was taken meanwhile
// (freePort cannot reserve it), it retries once on a new one: others reach
// it through proxies, which follow. m.opMu is held.
func (m *Member) startLocked() error {
	for attempt := 0; ; attempt++ {
		err := m.startOnce()
		if err == nil || attempt > 0 || !errors.Is(err, syscall.EADDRINUSE) {
			return err
		}
		m.log.Warn("peer port taken; retrying on another", "port", m.peerPort)
		if m.peerPort, err = freePort(); err != nil {
			return err
		}
	}
}

func (m *Member) startOnce() error {
	cfg, err := memberConfig(m.e.opts, m.id, m.dir, m.lines())
	if err != nil {
		return err
	}
	s, err := server.New(cfg, m.log)
	if err != nil {
		return err
	}
	peer := net.JoinHostPort("127.0.0.1", strconv.Itoa(m.peerPort))
	m.peerAddr.Store(&peer)
	if err := s.Start(); err != nil {
		s.Close()
		return err
	}
	client := s.Addr().String()
	m.clientAddr.Store(&client)
	m.srv.Store(s)
	return nil
}

// lines returns the server lines of this member's configuration: itself
// at its own peer port, every other member at the port of the proxy for
// the link from this member to it.
func (m *Member) lines() []peerLine {
	if len(m.e.members) == 1 {
		return nil // standalone
	}
	lines := make([]peerLine, 0, len(m.e.members))
	for _, o := range m.e.members {
		port := m.peerPort
		if o != m {
			port = m.e.links[link{m.id, o.id}].port()
		}
		lines = append(lines, peerLine{id: o.id, port: port, observer: o.observer})
	}
	return lines
}

// String returns "member <id>" for messages.
func (m *Member) String() string { return fmt.Sprintf("member %d", m.id) }
