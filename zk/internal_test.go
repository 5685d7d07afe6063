package zk

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// Unit tests of the client's internals: the watch registry, setWatches
// batching, connect strings, chroot mapping and host providers.

// named is a comparable watcher that says who it is.
type named struct{ name string }

func (*named) Process(Event) {}

func names(ws []Watcher) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.(*named).name)
	}
	return out
}

// testRegistry holds: data A on /a, exist B on /b, child C on /a,
// persistent P on /a, persistent-recursive R on / and R2 on /a.
func testRegistry() (*registry, map[string]*named) {
	ws := map[string]*named{}
	for _, n := range []string{"A", "B", "C", "P", "R", "R2"} {
		ws[n] = &named{n}
	}
	r := &registry{}
	r.add(watchData, "/a", ws["A"])
	r.add(watchExist, "/b", ws["B"])
	r.add(watchChild, "/a", ws["C"])
	r.add(watchPersistent, "/a", ws["P"])
	r.add(watchRecursive, "/", ws["R"])
	r.add(watchRecursive, "/a", ws["R2"])
	return r, ws
}

func TestInternalRegistryTrigger(t *testing.T) {
	tests := []struct {
		typ   EventType
		path  string
		want  []string // in delivery order
		again []string // a second identical event: one-time watches are gone
	}{
		{EventNodeDataChanged, "/a", []string{"A", "P", "R2", "R"}, []string{"P", "R2", "R"}},
		{EventNodeCreated, "/a", []string{"A", "P", "R2", "R"}, []string{"P", "R2", "R"}},
		{EventNodeChildrenChanged, "/a", []string{"C", "P"}, []string{"P"}}, // no children events for recursive watches
		{EventNodeDeleted, "/a", []string{"A", "C", "P", "R2", "R"}, []string{"P", "R2", "R"}},
		{EventNodeCreated, "/b", []string{"B", "R"}, []string{"R"}},
		{EventNodeDeleted, "/b", []string{"B", "R"}, []string{"R"}},
		{EventNodeChildrenChanged, "/b", nil, nil}, // an exist watch is not a child watch
		{EventNodeDataChanged, "/a/deep/er", []string{"R2", "R"}, []string{"R2", "R"}},
		{EventNodeDataChanged, "/zz", []string{"R"}, []string{"R"}},
		{EventNone, "/a", nil, nil},
		{EventDataWatchRemoved, "/a", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String()+tt.path, func(t *testing.T) {
			r, _ := testRegistry()
			if got := names(r.trigger(tt.typ, tt.path)); !slices.Equal(got, tt.want) {
				t.Errorf("trigger: %v, want %v", got, tt.want)
			}
			if got := names(r.trigger(tt.typ, tt.path)); !slices.Equal(got, tt.again) {
				t.Errorf("second trigger: %v, want %v", got, tt.again)
			}
		})
	}
}

func TestInternalRegistryDedup(t *testing.T) {
	r := &registry{}
	w := &named{"W"}
	r.add(watchData, "/x", w)
	r.add(watchData, "/x", w) // GetW twice
	r.add(watchExist, "/x", w)
	if got := names(r.trigger(EventNodeDataChanged, "/x")); !slices.Equal(got, []string{"W"}) {
		t.Errorf("a comparable watcher registered three times got %v, want once", got)
	}
	n := 0
	f := WatcherFunc(func(Event) { n++ })
	r.add(watchData, "/y", f)
	r.add(watchData, "/y", f)
	for _, w := range r.trigger(EventNodeDataChanged, "/y") {
		w.Process(Event{})
	}
	if n != 2 {
		t.Errorf("a WatcherFunc registered twice ran %d times, want 2 (not comparable)", n)
	}
	if !r.empty() {
		t.Errorf("registry not empty after every one-time watch fired")
	}
	if got := len(r.all()); got != 0 {
		t.Errorf("all() = %d watchers, want 0", got)
	}
}

func TestInternalRegistryRemove(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		w       string // "" removes every watcher
		typ     WatcherType
		removed []string // "name:event"
		left    []string // what a delete of path then fires
	}{
		{"children", "/a", "", WatcherChildren, []string{"C:ChildWatchRemoved"}, []string{"A", "P", "R2", "R"}},
		{"data", "/a", "", WatcherData, []string{"A:DataWatchRemoved"}, []string{"C", "P", "R2", "R"}},
		{"exist counts as data", "/b", "", WatcherData, []string{"B:DataWatchRemoved"}, []string{"R"}},
		{"persistent", "/a", "", WatcherPersistent, []string{"P:PersistentWatchRemoved"}, []string{"A", "C", "R2", "R"}},
		{"recursive", "/a", "", WatcherPersistentRecursive, []string{"R2:PersistentWatchRemoved"}, []string{"A", "C", "P", "R"}},
		{"any", "/a", "", WatcherAny, []string{"C:ChildWatchRemoved", "A:DataWatchRemoved", "P:PersistentWatchRemoved", "R2:PersistentWatchRemoved"}, []string{"R"}},
		{"one watcher", "/a", "C", WatcherAny, []string{"C:ChildWatchRemoved"}, []string{"A", "P", "R2", "R"}},
		{"other watcher", "/a", "B", WatcherAny, nil, []string{"A", "C", "P", "R2", "R"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ws := testRegistry()
			var w Watcher
			if tt.w != "" {
				w = ws[tt.w]
			}
			if got, want := r.hasAny(tt.path, w, tt.typ), len(tt.removed) > 0; got != want {
				t.Errorf("hasAny = %v, want %v", got, want)
			}
			var got []string
			for _, x := range r.remove(tt.path, w, tt.typ) {
				got = append(got, x.w.(*named).name+":"+x.t.String())
			}
			if !slices.Equal(got, tt.removed) {
				t.Errorf("removed %v, want %v", got, tt.removed)
			}
			if left := names(r.trigger(EventNodeDeleted, tt.path)); !slices.Equal(left, tt.left) {
				t.Errorf("left %v, want %v", left, tt.left)
			}
		})
	}
}

func TestInternalSetWatches(t *testing.T) {
	if got := (&registry{}).setWatches(1, ""); got != nil {
		t.Errorf("no watches: %d requests, want none", len(got))
	}

	r := &registry{}
	w := &named{"W"}
	want := map[string]string{}
	long := strings.Repeat("x", 200)
	for i := range 1000 {
		p := "/d/" + long + strings.Repeat("d", i%7) + string(rune('a'+i%26)) + strings.Repeat("0", i/26)
		k := []watchKind{watchData, watchExist, watchChild}[i%3]
		r.add(k, p, w)
		want["/root"+p] = []string{"data", "exist", "child"}[i%3]
	}
	huge := "/" + strings.Repeat("h", setWatchesMaxBytes+10)
	r.add(watchData, huge, w)
	want["/root"+huge] = "data"
	r.add(watchRecursive, "/", w)
	want["/root"] = "recursive"

	got := map[string]string{}
	reqs := r.setWatches(0x77, "/root")
	if len(reqs) < 3 {
		t.Fatalf("%d requests, want at least 3 (more than 2x128 KiB of paths)", len(reqs))
	}
	n2 := 0
	for i, req := range reqs {
		lists := map[string][]string{}
		var rel int64
		switch q := req.(type) {
		case *proto.SetWatches:
			rel = q.RelativeZxid
			lists["data"], lists["exist"], lists["child"] = q.DataWatches, q.ExistWatches, q.ChildWatches
		case *proto.SetWatches2:
			n2++
			rel = q.RelativeZxid
			lists["data"], lists["exist"], lists["child"] = q.DataWatches, q.ExistWatches, q.ChildWatches
			lists["persistent"], lists["recursive"] = q.PersistentWatches, q.PersistentRecursiveWatches
			if len(q.PersistentWatches)+len(q.PersistentRecursiveWatches) == 0 {
				t.Errorf("request %d: setWatches2 with no persistent watch", i)
			}
		}
		if rel != 0x77 {
			t.Errorf("request %d: relativeZxid %#x, want 0x77", i, rel)
		}
		size, count := 0, 0
		hasHuge := false
		for k, ps := range lists {
			if ps == nil {
				t.Errorf("request %d: null %s list", i, k)
			}
			for _, p := range ps {
				got[p] = k
				size += len(p)
				count++
				hasHuge = hasHuge || p == "/root"+huge
			}
		}
		switch {
		case hasHuge && count != 1:
			t.Errorf("request %d: a path longer than the limit shares its request with %d others", i, count-1)
		case !hasHuge && size > setWatchesMaxBytes:
			t.Errorf("request %d: %d bytes of paths, limit %d", i, size, setWatchesMaxBytes)
		}
	}
	if n2 != 1 {
		t.Errorf("%d setWatches2 requests, want 1 (the batch with the persistent watch)", n2)
	}
	if len(got) != len(want) {
		t.Errorf("%d paths re-registered, want %d", len(got), len(want))
	}
	for p, k := range want {
		if got[p] != k {
			t.Errorf("path %.40s...: kind %q, want %q", p, got[p], k)
		}
	}
}

func TestInternalParseConnectString(t *testing.T) {
	tests := []struct {
		in     string
		hosts  []string
		chroot string
		bad    bool
	}{
		{in: "127.0.0.1:2181", hosts: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2,c:3/chroot/x", hosts: []string{"a:1", "b:2", "c:3"}, chroot: "/chroot/x"},
		{in: "host", hosts: []string{"host:2181"}},
		{in: "a:1,b", hosts: []string{"a:1", "b:2181"}},
		{in: " a:1 , b:2 ", hosts: []string{"a:1", "b:2"}},
		{in: "a:1,,b:2", hosts: []string{"a:1", "b:2"}},
		{in: "[::1]:2182", hosts: []string{"[::1]:2182"}},
		{in: "[::1]", hosts: []string{"[::1]:2181"}},
		{in: "::1", hosts: []string{"[::1]:2181"}},
		{in: "h:1/", hosts: []string{"h:1"}},
		{in: "h:1/app", hosts: []string{"h:1"}, chroot: "/app"},
		{in: "", bad: true},
		{in: ",,", bad: true},
		{in: "/app", bad: true},
		{in: "h:1/app/", bad: true},
		{in: "h:1/a/../b", bad: true},
		{in: "h:1//x", bad: true},
		{in: "h:", bad: true},
		{in: ":2181", bad: true},
		{in: "[::1", bad: true},
		{in: "::1]", bad: true},
		{in: "a:1,[::1", bad: true},
	}
	for _, tt := range tests {
		hosts, chroot, err := ParseConnectString(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrBadConnectString) {
				t.Errorf("ParseConnectString(%q) = %v %q %v, want ErrBadConnectString", tt.in, hosts, chroot, err)
			}
			continue
		}
		if err != nil || !slices.Equal(hosts, tt.hosts) || chroot != tt.chroot {
			t.Errorf("ParseConnectString(%q) = %v %q %v, want %v %q", tt.in, hosts, chroot, err, tt.hosts, tt.chroot)
		}
	}
}

func TestInternalChroot(t *testing.T) {
	tests := []struct {
		root           chroot
		client, server string
	}{
		{"", "/a", "/a"},
		{"", "/", "/"},
		{"/app", "/", "/app"},
		{"/app", "/a", "/app/a"},
		{"/app", "/a/b", "/app/a/b"},
		{"/a/b", "/c", "/a/b/c"},
	}
	for _, tt := range tests {
		if got := tt.root.server(tt.client); got != tt.server {
			t.Errorf("chroot %q: server(%q) = %q, want %q", tt.root, tt.client, got, tt.server)
		}
		if got := tt.root.client(tt.server); got != tt.client {
			t.Errorf("chroot %q: client(%q) = %q, want %q", tt.root, tt.server, got, tt.client)
		}
	}
	// Paths outside the chroot come back unchanged.
	for _, p := range []string{"/", "/ap", "/other/app", "/zookeeper/config"} {
		if got := chroot("/app").client(p); got != p {
			t.Errorf("client(%q) outside /app = %q, want it unchanged", p, got)
		}
	}
	// The chroot is cut off as a string prefix, as the Java client does:
	// a sequential node created at "/" is named after the chroot.
	if got := chroot("/app").client("/app0000000001"); got != "0000000001" {
		t.Errorf("client(/app0000000001) under /app = %q, want 0000000001", got)
	}
}

func TestInternalStaticHostProvider(t *testing.T) {
	addrs := []string{"a:1", "b:2", "c:3"}
	p := NewStaticHostProvider(addrs)
	if p.Len() != 3 {
		t.Fatalf("Len() = %d, want 3", p.Len())
	}
	next := func() (string, bool) {
		a, round, err := p.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return a, round
	}
	var order []string
	for i := range 3 {
		a, round := next()
		if round {
			t.Errorf("attempt %d: round done before every address was tried", i+1)
		}
		order = append(order, a)
	}
	if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, addrs) {
		t.Fatalf("first round %v, want each of %v once", order, addrs)
	}
	if a, round := next(); !round || a != order[0] {
		t.Errorf("4th attempt: %s round %v, want %s and round done", a, round, order[0])
	}
	if _, round := next(); round {
		t.Errorf("5th attempt: round done again too soon")
	}
	p.Connected()
	for i := range 3 {
		if a, round := next(); round || a != order[(i+2)%3] {
			t.Errorf("after Connected, attempt %d: %s round %v, want %s, no round", i+1, a, round, order[(i+2)%3])
		}
	}
	if _, round := next(); !round {
		t.Errorf("after Connected, 4th attempt: round not done")
	}
}

func TestInternalDNSHostProvider(t *testing.T) {
	// A resolver that reads /etc/hosts and fails any DNS query, so the test
	// stays on this machine.
	offline := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}}
	ctx := context.Background()

	p := NewDNSHostProvider([]string{"localhost:2181", "no-such-host.invalid:2181"}, offline)
	if p.Len() != 2 {
		t.Errorf("Len() before resolving = %d, want the 2 names", p.Len())
	}
	addr, round, err := p.Next(ctx)
	if err != nil || round {
		t.Fatalf("Next: %s %v %v", addr, round, err)
	}
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); port != "2181" || ip == nil || !ip.IsLoopback() {
		t.Errorf("Next = %q, want a loopback address with port 2181", addr)
	}
	n := p.Len()
	for range n - 1 {
		if _, round, err := p.Next(ctx); round || err != nil {
			t.Fatalf("round done or error inside the first round: %v", err)
		}
	}
	if _, round, err := p.Next(ctx); !round || err != nil {
		t.Errorf("after every resolved address: round %v err %v, want a round done", round, err)
	}

	bad := NewDNSHostProvider([]string{"no-such-host.invalid:2181", "also-not.invalid:1"}, offline)
	if _, _, err := bad.Next(ctx); err == nil {
		t.Errorf("Next with no name resolving: no error")
	}
}

func TestInternalPingInterval(t *testing.T) {
	tests := []struct{ session, want time.Duration }{
		{3 * time.Second, time.Second},
		{900 * time.Millisecond, 300 * time.Millisecond},
		{30 * time.Second, 10 * time.Second},
		{120 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		if got := pingInterval(tt.session * 2 / 3); got != tt.want {
			t.Errorf("session timeout %v: ping every %v, want %v", tt.session, got, tt.want)
		}
	}
}

// TestInternalHostProvidersWithoutAddresses: providers made over no
// addresses fail Next with an error; they panicked (index out of range,
// modulo by zero).
func TestInternalHostProvidersWithoutAddresses(t *testing.T) {
	for name, p := range map[string]HostProvider{
		"static": NewStaticHostProvider(nil),
		"dns":    NewDNSHostProvider(nil, nil),
	} {
		for i := range 2 {
			if addr, _, err := p.Next(context.Background()); err == nil {
				t.Errorf("%s: Next #%d = %q, want an error", name, i+1, addr)
			}
		}
	}
}
