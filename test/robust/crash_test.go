package robust_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/proto"
)

const (
	crashWriters = 16
	// The load runs for crashLoad, or until crashMaxAcks writes are
	// acknowledged if that comes first, before the kill.
	crashLoad    = 2 * time.Second
	crashMaxAcks = 40000
	// crashMaxOps bounds each writer's loop.
	crashMaxOps = 1 << 20
)

// writerLog is what one writer had acknowledged, and the one operation it
// attempted without an answer.
type writerLog struct {
	id      int
	creates []string // acknowledged creates, in order
	setData string   // data of the last acknowledged setData
	setVer  int32    // the version that setData returned
	// pending is the operation that failed (never acknowledged): it may or
	// may not have been applied before the kill.
	pendingCreate string
	pendingSet    string
	err           error
	errAt         time.Time
}

func writerNode(i int) string { return fmt.Sprintf("/crash/w%02d", i) }

// runWriter alternates creates of new nodes and setData of the writer's own
// node until stop is closed or an operation fails, recording every
// acknowledged write in log.
func runWriter(conn *zk.Conn, log *writerLog, stop <-chan struct{}, acks *atomic.Int64) {
	node := writerNode(log.id)
	for k := 1; k < crashMaxOps; k++ {
		select {
		case <-stop:
			return
		default:
		}
		if k%2 == 1 {
			path := fmt.Sprintf("%s-c%06d", node, k)
			data := fmt.Sprintf("c-%d-%d", log.id, k)
			if _, err := conn.Create(path, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
				log.pendingCreate, log.err, log.errAt = path, err, time.Now()
				return
			}
			log.creates = append(log.creates, path)
		} else {
			data := fmt.Sprintf("s-%d-%d", log.id, k)
			st, err := conn.Set(node, []byte(data), -1)
			if err != nil {
				log.pendingSet, log.err, log.errAt = data, err, time.Now()
				return
			}
			log.setData, log.setVer = data, st.Version
		}
		acks.Add(1)
	}
}

// TestCrashAcknowledgedWritesSurvive runs 16 writers against Paddock,
// SIGKILLs it mid-load, restarts it on the same data directory and checks
// that every acknowledged write is there, and that at most the one
// unacknowledged write of each writer was applied besides.
func TestCrashAcknowledgedWritesSurvive(t *testing.T) {
	p := startPaddock(t, 1000)
	admin, _ := connectZK(t, p.Addr, 10*time.Second)
	if _, err := admin.Create("/crash", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	conns := make([]*zk.Conn, crashWriters)
	logs := make([]*writerLog, crashWriters)
	for i := range conns {
		conns[i], _ = connectZK(t, p.Addr, 10*time.Second)
		st := writerNode(i)
		if _, err := conns[i].Create(st, []byte(fmt.Sprintf("s-%d-0", i)), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		logs[i] = &writerLog{id: i, setData: fmt.Sprintf("s-%d-0", i)}
	}

	var acks atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWriter(conns[i], logs[i], stop, &acks)
		}()
	}
	loadStart := time.Now()
	tick := time.NewTicker(pollEvery)
	for acks.Load() < crashMaxAcks && time.Since(loadStart) < crashLoad {
		<-tick.C
	}
	tick.Stop()
	killAt := time.Now()
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	t.Logf("killed after %d acknowledged writes in %v", acks.Load(), killAt.Sub(loadStart))
	closeAll(append(conns, admin))

	for _, l := range logs {
		if len(l.creates) == 0 {
			t.Errorf("writer %d had no create acknowledged before the kill (error %v)", l.id, l.err)
		}
		if l.err != nil && l.errAt.Before(killAt) {
			t.Errorf("writer %d failed before the kill: %v", l.id, l.err)
		}
	}

	p.Restart(t)
	check, _ := connectZK(t, p.Addr, 10*time.Second)
	children, _, err := check.Children("/crash")
	if err != nil {
		t.Fatalf("children of /crash after restart: %v", err)
	}
	var checks sync.WaitGroup
	for _, l := range logs {
		checks.Add(1)
		go func() {
			defer checks.Done()
			checkWriter(t, check, l, children)
		}()
	}
	checks.Wait()
}

// checkWriter checks one writer's acknowledged writes after the restart.
// It may run on any goroutine.
func checkWriter(t *testing.T, conn *zk.Conn, l *writerLog, children []string) {
	node := writerNode(l.id)
	data, st, err := conn.Get(node)
	if err != nil {
		t.Errorf("writer %d: get %s: %v", l.id, node, err)
		return
	}
	switch {
	case string(data) == l.setData && st.Version == l.setVer:
	case l.pendingSet != "" && string(data) == l.pendingSet && st.Version == l.setVer+1:
		// The unacknowledged setData made it to the log.
	default:
		t.Errorf("writer %d: %s has %q version %d; acknowledged %q version %d (pending %q)",
			l.id, node, data, st.Version, l.setData, l.setVer, l.pendingSet)
	}

	prefix := strings.TrimPrefix(node, "/crash/") + "-c"
	var got []string
	for _, c := range children {
		if strings.HasPrefix(c, prefix) {
			got = append(got, "/crash/"+c)
		}
	}
	slices.Sort(got)
	want := l.creates
	if len(got) == len(want)+1 && l.pendingCreate != "" && got[len(got)-1] == l.pendingCreate {
		want = append(slices.Clip(want), l.pendingCreate)
	}
	if !slices.Equal(got, want) {
		missing, extra := diff(want, got), diff(got, want)
		t.Errorf("writer %d: after restart %d nodes, %d acknowledged (pending %q); missing %q, unexpected %q",
			l.id, len(got), len(l.creates), l.pendingCreate, head(missing), head(extra))
		return
	}
	for _, path := range want {
		var k int
		if _, err := fmt.Sscanf(path[strings.LastIndex(path, "-c")+2:], "%d", &k); err != nil {
			t.Errorf("writer %d: parse %s: %v", l.id, path, err)
			return
		}
		data, st, err := conn.Get(path)
		if wantData := fmt.Sprintf("c-%d-%d", l.id, k); err != nil || string(data) != wantData || st.Version != 0 {
			t.Errorf("writer %d: %s = %q (stat %+v, err %v), want %q version 0", l.id, path, data, st, err, wantData)
		}
	}
}

// diff returns the elements of a not in b.
func diff(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// head returns at most the first 5 elements of s, for messages.
func head(s []string) []string { return s[:min(len(s), 5)] }

// closeAll closes go-zk connections in parallel (each Close may wait for a
// dead server).
func closeAll(conns []*zk.Conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
}

// TestCrashSessions SIGKILLs Paddock with three sessions open and restarts
// it: a go-zk session and a raw session that reconnect within their timeout
// keep their ephemerals and stay valid; a raw session that does not come
// back expires a whole timeout after the restart (not before), and its
// ephemeral goes with it.
func TestCrashSessions(t *testing.T) {
	const (
		tick    = 500
		timeout = 3000
	)
	p := startPaddock(t, tick)

	gz, gzEvents := connectZK(t, p.Addr, 8*time.Second)
	if _, err := gz.Create("/gz", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	gzID := gz.SessionID()
	back := newSession(t, p.Addr, timeout)
	back.create("/back", "", proto.FlagEphemeral)
	gone := newSession(t, p.Addr, timeout)
	gone.create("/gone", "", proto.FlagEphemeral)

	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	restartAt := time.Now()
	p.Restart(t)

	// The raw session comes back with its id and password, and with the
	// last zxid any client saw: the restarted server has recovered it all
	// before it serves.
	back.LastZxid = max(back.LastZxid, gone.LastZxid)
	c, resp, err := reattach(t, p.Addr, back, nil, timeout)
	if err != nil {
		t.Fatalf("reattach after restart: %v", err)
	}
	if resp.SessionID != back.SessionID || resp.TimeOut != timeout {
		t.Fatalf("reattach of 0x%x after restart answered %+v", back.SessionID, resp)
	}
	for path, owner := range map[string]int64{"/back": back.SessionID, "/gone": gone.SessionID, "/gz": gzID} {
		if st := c.exists(path, false); st == nil || st.EphemeralOwner != owner {
			t.Errorf("%s right after restart: stat %+v, want an ephemeral of 0x%x", path, st, owner)
		}
	}
	c.create("/back2", "", proto.FlagEphemeral)

	// go-zk reconnects by itself with the same session.
	eventually(t, 15*time.Second, "go-zk back in its session", func() error {
		if gzEvents.count(zk.StateDisconnected) == 0 || gz.State() != zk.StateHasSession {
			return fmt.Errorf("states %v", gzEvents.all())
		}
		return nil
	})
	if gz.SessionID() != gzID || gzEvents.count(zk.StateExpired) != 0 {
		t.Fatalf("go-zk session after restart: id 0x%x (was 0x%x), states %v", gz.SessionID(), gzID, gzEvents.all())
	}
	if _, err := gz.Create("/gz2", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("go-zk write after restart: %v", err)
	}

	// The session that stays away expires: polling on c also keeps c's
	// session alive.
	goneAt := waitGone(t, c, "/gone", time.Duration(timeout+2*tick)*time.Millisecond+5*time.Second)
	took := goneAt.Sub(restartAt)
	if took < timeout*time.Millisecond {
		t.Errorf("session 0x%x expired %v after the restart began, before its %d ms timeout", gone.SessionID, took, timeout)
	}
	if max := time.Duration(timeout+2*tick)*time.Millisecond + 2*time.Second; took > max {
		t.Errorf("session 0x%x expired %v after the restart began, want at most %v", gone.SessionID, took, max)
	}
	for _, path := range []string{"/back", "/back2"} {
		if st := c.exists(path, false); st == nil || st.EphemeralOwner != back.SessionID {
			t.Errorf("%s after the other session expired: stat %+v", path, st)
		}
	}
	for _, path := range []string{"/gz", "/gz2"} {
		ok, st, err := gz.Exists(path)
		if err != nil || !ok || st.EphemeralOwner != gzID {
			t.Errorf("%s after the other session expired: %v %+v %v", path, ok, st, err)
		}
	}
	if n := gzEvents.count(zk.StateExpired); n != 0 {
		t.Errorf("go-zk saw its session expire: states %v", gzEvents.all())
	}
	if err := c.ping(); err != nil {
		t.Error(err)
	}
}
