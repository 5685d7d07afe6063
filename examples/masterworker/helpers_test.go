package masterworker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/examples/masterworker"
	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

const (
	// sessionTimeout is every role's: a killed master or worker is gone
	// (its ephemeral znodes deleted) about this long after it dies.
	sessionTimeout = time.Second
	// waitFor bounds every wait in the tests.
	waitFor   = 30 * time.Second
	pollEvery = 10 * time.Millisecond
)

// killSwitch is a dialer whose connections the test can reset at once;
// after that it refuses to dial, so the session expires: the process is
// dead as far as ZooKeeper can tell.
type killSwitch struct {
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
}

func (k *killSwitch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		return nil, errors.New("killed")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	k.conns = append(k.conns, c)
	return c, nil
}

// kill resets every connection (no FIN: linger 0) and refuses new ones.
func (k *killSwitch) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dead = true
	for _, c := range k.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
}

// env is one test's ensemble and the helpers its roles need.
type env struct {
	t     *testing.T
	ens   *paddocktest.Ensemble
	admin *zk.Conn // the test's own session, for reading the tree
	ctx   context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*waitFor)
	t.Cleanup(cancel)
	e := &env{t: t, ens: ens, ctx: ctx}
	e.admin = e.connect(nil)
	return e
}

// connect opens a session, through ks if not nil, closed at cleanup.
func (e *env) connect(ks *killSwitch) *zk.Conn {
	e.t.Helper()
	opts := []zk.Option{zk.WithSessionTimeout(sessionTimeout)}
	if ks != nil {
		opts = append(opts, zk.WithDialer(ks.dial))
	}
	c, err := zk.Connect(e.ctx, e.ens.ConnectString(), opts...)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// run runs a role's Run on its own goroutine. The returned channel gets
// Run's error; the role is stopped (and waited for) at cleanup.
func (e *env) run(run func(context.Context) error) <-chan error {
	ctx, cancel := context.WithCancel(e.ctx)
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		errc <- run(ctx)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-done
	})
	return errc
}

// eventually polls cond until it returns nil or waitFor passes.
func (e *env) eventually(what string, cond func() error) {
	e.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not true after %v: %v", what, waitFor, err)
		}
		time.Sleep(pollEvery)
	}
}

// recv waits for a value from c.
func recv[T any](e *env, what string, c <-chan T) T {
	e.t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitFor):
		e.t.Fatalf("%s: nothing after %v", what, waitFor)
	}
	var zero T
	return zero
}

// sync makes the admin session's server catch up with the leader, so that
// what the test reads next is at least as new as what the roles saw through
// other servers (the book's "hidden channel": the test learns of progress
// outside ZooKeeper).
func (e *env) sync() {
	e.t.Helper()
	if _, err := e.admin.Sync(e.ctx, "/"); err != nil {
		e.t.Fatalf("sync: %v", err)
	}
}

// children returns path's children, sorted, after a sync.
func (e *env) children(path string) []string {
	e.t.Helper()
	e.sync()
	ch, _, err := e.admin.Children(e.ctx, path)
	if err != nil {
		e.t.Fatalf("children %s: %v", path, err)
	}
	slices.Sort(ch)
	return ch
}

// get returns path's data, after a sync.
func (e *env) get(path string) string {
	e.t.Helper()
	e.sync()
	data, _, err := e.admin.Get(e.ctx, path)
	if err != nil {
		e.t.Fatalf("get %s: %v", path, err)
	}
	return string(data)
}

func (e *env) create(path, data string) {
	e.t.Helper()
	if _, err := e.admin.Create(e.ctx, path, []byte(data), zk.OpenACL, zk.ModePersistent); err != nil {
		e.t.Fatalf("create %s: %v", path, err)
	}
}

// journal is the execution log of every worker of a test: who started
// executing each task, and who committed it.
type journal struct {
	mu        sync.Mutex
	started   map[string][]string
	completed map[string][]string
}

func newJournal() *journal {
	return &journal{started: map[string][]string{}, completed: map[string][]string{}}
}

func (j *journal) start(task, worker string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.started[task] = append(j.started[task], worker)
}

func (j *journal) complete(task, worker string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.completed[task] = append(j.completed[task], worker)
}

func (j *journal) completions() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, ws := range j.completed {
		n += len(ws)
	}
	return n
}

// worker starts worker id recording into j. If gate is not nil, Execute
// waits for it to be closed before returning (the task "takes long").
func (e *env) worker(id string, j *journal, ks *killSwitch, gate <-chan struct{}) <-chan error {
	w := masterworker.NewWorker(e.connect(ks), masterworker.WorkerConfig{
		ID: id,
		Execute: func(ctx context.Context, task string, _ []byte) {
			j.start(task, id)
			if gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
				}
			}
		},
		OnComplete: func(task string) { j.complete(task, id) },
	})
	return e.run(w.Run)
}

// checkExactlyOnce checks, for every task in tasks, that one worker committed it once and that the status names that
// worker, and that no worker other than those in mayRepeat (killed ones,
// whose execution was cut short) executed it besides the one that
// committed it.
func (e *env) checkExactlyOnce(j *journal, tasks []string, mayRepeat ...string) {
	e.t.Helper()
	// A worker learns that its commit succeeded in a callback that may run
	// after the client has seen the status.
	e.eventually("every commit reported", func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		for _, task := range tasks {
			if len(j.completed[task]) == 0 {
				return fmt.Errorf("no commit of %s reported", task)
			}
		}
		return nil
	})
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, task := range tasks {
		done := j.completed[task]
		if len(done) != 1 {
			e.t.Errorf("%s committed %d times, by %v; want once", task, len(done), done)
			continue
		}
		if got, want := e.get("/status/"+task), "done worker-"+done[0]; got != want {
			e.t.Errorf("/status/%s = %q; the commit was %q's", task, got, want)
		}
		var others []string
		for _, w := range j.started[task] {
			if !slices.Contains(mayRepeat, w) {
				others = append(others, w)
			}
		}
		if slices.Contains(mayRepeat, done[0]) || len(others) != 1 || others[0] != done[0] {
			e.t.Errorf("%s executed by %v, committed by %s: want one execution by a live worker, the committer", task, j.started[task], done[0])
		}
	}
}

func expectErr(e *env, what string, errc <-chan error, want error) {
	e.t.Helper()
	if err := recv(e, what, errc); !errors.Is(err, want) {
		e.t.Errorf("%s: Run returned %v, want %v", what, err, want)
	}
}

func countErr(what string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s: %d, want %d", what, got, want)
	}
	return nil
}
