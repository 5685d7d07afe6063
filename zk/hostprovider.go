package zk

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
)

// HostProvider chooses the server the Conn dials next. Its methods may be
// called from two goroutines at once (the connection loop, and the search
// for a read-write server while connected read-only), so an implementation
// must be safe for concurrent use.
type HostProvider interface {
	// Next returns the address to try next and whether a full round of
	// every address has passed without a successful connection since the
	// previous Connected (the Conn then pauses before trying again).
	Next(ctx context.Context) (addr string, roundDone bool, err error)
	// Connected tells the provider that a session was established with
	// the address Next returned last.
	Connected()
	// Len returns the number of addresses in a round; the Conn divides
	// the session timeout by it (by at least 3) to get each attempt's
	// connect timeout.
	Len() int
}

// StaticHostProvider goes round a fixed list of addresses in an order
// shuffled once, as ZooKeeper's StaticHostProvider does; names are resolved
// by the dialer at each attempt.
type StaticHostProvider struct {
	mu    sync.Mutex
	addrs []string
	next  int // index of the address Next returns
	tried int // attempts since the last Connected
}

// errNoHosts is what a host provider made over no addresses returns.
var errNoHosts = errors.New("zk: host provider has no addresses")

// NewStaticHostProvider returns a provider over addrs ("host:port"),
// shuffled. Over no addresses, its Next fails.
func NewStaticHostProvider(addrs []string) *StaticHostProvider {
	a := append([]string(nil), addrs...)
	rand.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	return &StaticHostProvider{addrs: a}
}

// Next returns the next address in the shuffled order.
func (p *StaticHostProvider) Next(context.Context) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.addrs) == 0 {
		return "", true, errNoHosts
	}
	addr := p.addrs[p.next]
	p.next = (p.next + 1) % len(p.addrs)
	p.tried++
	round := p.tried > len(p.addrs)
	if round {
		p.tried = 1
	}
	return addr, round, nil
}

// Connected resets the count of failed attempts.
func (p *StaticHostProvider) Connected() {
	p.mu.Lock()
	p.tried = 0
	p.mu.Unlock()
}

// Len returns the number of addresses.
func (p *StaticHostProvider) Len() int { return len(p.addrs) }

// DNSHostProvider resolves every host name into all its addresses at the
// start of each round, so servers that move to new IP addresses, or names
// that stand for several servers, are followed without restarting the
// client. Each round's addresses are shuffled. Each address keeps the name
// it was resolved from, and a TLS connection to it verifies the server's
// certificate against that name (unless the tls.Config sets ServerName), as
// ZooKeeper's Java client verifies the host name of the connect string.
type DNSHostProvider struct {
	resolver *net.Resolver
	hosts    []string // host:port as given

	mu    sync.Mutex
	round []string // addresses of the current round
	next  int
	tried int
	// names maps each address of the current round to the host name it
	// was resolved from; prevNames is the previous round's, for an address
	// handed out just before a new round began.
	names, prevNames map[string]string
}

// serverNamer is implemented by host providers that know the host name an
// address was resolved from; the Conn verifies TLS certificates against it.
type serverNamer interface {
	serverName(addr string) string
}

// NewDNSHostProvider returns a provider over hosts ("name:port"); a nil
// resolver means net.DefaultResolver.
func NewDNSHostProvider(hosts []string, resolver *net.Resolver) *DNSHostProvider {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return &DNSHostProvider{resolver: resolver, hosts: append([]string(nil), hosts...)}
}

// Next returns the next resolved address, resolving every name again when a
// round is over. Names that fail to resolve are left out of the round; when
// none resolves, Next returns the error of the last one.
func (p *DNSHostProvider) Next(ctx context.Context) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= len(p.round) {
		addrs, names, err := p.resolve(ctx)
		if err != nil {
			p.tried++
			return "", p.tried > len(p.hosts), err
		}
		p.round, p.next = addrs, 0
		p.names, p.prevNames = names, p.names
	}
	addr := p.round[p.next]
	p.next++
	p.tried++
	round := p.tried > len(p.round)
	if round {
		p.tried = 1
	}
	return addr, round, nil
}

// resolve returns the addresses of every name, shuffled, and the name each
// address was resolved from (the first, when two names share an address).
func (p *DNSHostProvider) resolve(ctx context.Context) ([]string, map[string]string, error) {
	var out []string
	names := make(map[string]string)
	var lastErr error
	for _, h := range p.hosts {
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			lastErr = err
			continue
		}
		ips, err := p.resolver.LookupHost(ctx, host)
		if err != nil {
			lastErr = err
			continue
		}
		for _, ip := range ips {
			addr := net.JoinHostPort(ip, port)
			out = append(out, addr)
			if _, ok := names[addr]; !ok {
				names[addr] = host
			}
		}
	}
	if len(out) == 0 {
		if lastErr == nil {
			lastErr = errNoHosts // no names at all
		}
		return nil, nil, lastErr
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, names, nil
}

// serverName returns the host name addr was resolved from, or "" when addr
// is not among the last two rounds' addresses.
func (p *DNSHostProvider) serverName(addr string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name, ok := p.names[addr]; ok {
		return name
	}
	return p.prevNames[addr]
}

// Connected resets the count of failed attempts.
func (p *DNSHostProvider) Connected() {
	p.mu.Lock()
	p.tried = 0
	p.mu.Unlock()
}

// Len returns the number of addresses in the current round (the number of
// names before the first resolution).
func (p *DNSHostProvider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.round) > 0 {
		return len(p.round)
	}
	return len(p.hosts)
}
