package masterworker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	// ID names the worker: it registers as /workers/worker-<ID> and is
	// assigned tasks under /assign/worker-<ID>. Every live worker needs
	// its own.
	ID string
	// Parallelism is the number of goroutines of the worker's pool, which
	// run Execute; 0 means 2.
	Parallelism int
	// Execute does a task's work, on a pool goroutine; nil does nothing.
	// It should return soon after ctx ends. When it returns, the worker
	// reports the task done.
	Execute func(ctx context.Context, task string, data []byte)
	// OnComplete, if set, is called once the worker's status for task is
	// committed: at most once per task in the whole system. It runs on the
	// Conn's delivery goroutine and must not block.
	OnComplete func(task string)
	// Logger receives the worker's log; nil discards it.
	Logger *slog.Logger
}

// taskState is where a task assigned to this worker stands.
type taskState int

const (
	taskQueued taskState = iota // read, queued or executing, or being committed
	taskDone                    // committed or dropped; forgotten once unassigned
)

// Worker registers under /workers, watches its assignments and executes
// them on a pool of goroutines, reporting each under /status. Its callbacks
// and watchers run on the Conn's delivery goroutine, one at a time, so the
// fields marked "callbacks only" need no lock; the pool only runs Execute
// and sends the commit.
type Worker struct {
	session
	cfg    WorkerConfig
	name   string // worker-<ID>
	assign string // /assign/worker-<ID>
	pool   *pool

	// Callbacks only.
	registered bool
	tasks      map[string]taskState
	busy       int    // tasks read and not yet committed or dropped
	status     string // the status last asked for: "idle" or "busy"

	assignWatcher   *watcher // on /assign/worker-<ID>'s children
	registerWatcher *watcher // on /workers/worker-<ID> held by another session
}

// NewWorker returns a Worker that uses conn (which the caller keeps and
// closes).
func NewWorker(conn *zk.Conn, cfg WorkerConfig) *Worker {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 2
	}
	w := &Worker{
		session: newSession(conn, cfg.Logger),
		cfg:     cfg,
		name:    "worker-" + cfg.ID,
		tasks:   map[string]taskState{},
		status:  "idle",
	}
	w.assign = assignPath + "/" + w.name
	w.log = w.log.With("worker", w.name)
	w.assignWatcher = w.newWatcher(func(e zk.Event) {
		if e.Type == zk.EventNodeChildrenChanged && e.Path == w.assign {
			w.getTasks()
		}
	})
	w.registerWatcher = w.newWatcher(func(e zk.Event) {
		switch e.Type {
		case zk.EventNodeDeleted:
			w.register()
		case zk.EventNodeDataChanged:
			// The other session's znode changed: the one-time watch
			// fired without the deletion, so look and watch again, or
			// the deletion would go unnoticed.
			if !w.registered {
				w.checkRegistration()
			}
		}
	})
	return w
}

// Run bootstraps the tree, creates the worker's assignment parent,
// registers it and executes its assignments until ctx ends (it returns
// nil, once the pool's goroutines have returned) or the session ends (it
// returns the error). Run may be called once.
func (w *Worker) Run(ctx context.Context) error {
	w.start(ctx)
	w.pool = newPool(w.cfg.Parallelism)
	w.bootstrap(w.createAssignParent)
	err := w.wait()
	w.pool.close()
	return err
}

// createAssignParent creates /assign/worker-<ID> before the worker
// registers, so that the master never picks a worker it cannot assign to.
func (w *Worker) createAssignParent() {
	w.conn.CreateAsync(w.ctx, w.assign, nil, zk.OpenACL, zk.ModePersistent, func(_ string, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.createAssignParent()
		case err == nil, errors.Is(err, zk.ErrNodeExists):
			w.register()
		case w.over(err):
		default:
			w.log.Error("creating assignment parent", "err", err)
			w.stop(err)
		}
	})
}

// register creates the ephemeral /workers/worker-<ID>.
func (w *Worker) register() {
	w.conn.CreateAsync(w.ctx, workersPath+"/"+w.name, []byte(w.status), zk.OpenACL, zk.ModeEphemeral, func(_ string, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.register() // a repeat that finds our own znode gets ErrNodeExists
		case err == nil:
			w.onRegistered()
		case errors.Is(err, zk.ErrNodeExists):
			w.checkRegistration()
		case w.over(err):
		default:
			w.log.Error("registering", "err", err)
			w.stop(err)
		}
	})
}

// checkRegistration finds out whose the existing /workers/worker-<ID> is:
// ours (an earlier attempt made it), or an earlier process's with the same
// id whose session has not expired yet, in which case the worker waits for
// it to go (it is watched) rather than run unregistered.
func (w *Worker) checkRegistration() {
	w.conn.ExistsAsync(w.ctx, workersPath+"/"+w.name, w.registerWatcher, func(exists bool, stat *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.checkRegistration()
		case err == nil && !exists:
			w.register()
		case err == nil && stat.EphemeralOwner == w.conn.SessionID():
			w.onRegistered()
		case err == nil:
			w.log.Warn("registered by another session; waiting for it to go")
		case w.over(err):
		default:
			w.log.Error("checking registration", "err", err)
			w.stop(err)
		}
	})
}

func (w *Worker) onRegistered() {
	if w.registered {
		return
	}
	w.registered = true
	w.log.Info("registered")
	w.updateStatus(w.status)
	w.getTasks()
}

// getTasks lists the worker's assignments and leaves the watch.
func (w *Worker) getTasks() {
	w.conn.ChildrenAsync(w.ctx, w.assign, w.assignWatcher, func(children []string, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.getTasks()
		case err == nil:
			w.assigned(children)
		case w.over(err):
		default:
			w.log.Error("listing assignments", "err", err)
			w.stop(err)
		}
	})
}

// assigned starts the tasks it has not seen and forgets finished ones that
// are no longer assigned. A finished task stays known until a listing
// lacks it, so that a listing the server made before the commit does not
// start it again.
func (w *Worker) assigned(children []string) {
	for task, st := range w.tasks {
		if st == taskDone && !slices.Contains(children, task) {
			delete(w.tasks, task)
		}
	}
	slices.Sort(children)
	for _, task := range children {
		if _, known := w.tasks[task]; known {
			continue
		}
		w.tasks[task] = taskQueued
		w.getTaskData(task)
	}
}

func (w *Worker) getTaskData(task string) {
	w.conn.GetAsync(w.ctx, w.assign+"/"+task, nil, func(data []byte, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.getTaskData(task)
		case err == nil:
			w.setBusy(+1)
			// The work leaves the delivery goroutine: a callback must
			// not block the ones behind it.
			w.pool.submit(func() { w.execute(task, data) })
		case errors.Is(err, zk.ErrNoNode):
			delete(w.tasks, task) // taken away meanwhile
		case w.over(err):
		default:
			w.log.Error("reading assignment", "task", task, "err", err)
			delete(w.tasks, task)
		}
	})
}

// execute runs on a pool goroutine.
func (w *Worker) execute(task string, data []byte) {
	if w.cfg.Execute != nil {
		w.cfg.Execute(w.ctx, task, data)
	}
	w.commit(task)
}

// statusData is what a worker writes in /status/task-N.
func (w *Worker) statusData() []byte { return []byte("done " + w.name) }

// commit reports the task done: it creates /status/<task> and deletes the
// assignment in one multi. The delete makes the commit fail whole if the
// assignment was taken away (a master recovered it, believing the worker
// gone); the create makes a second commit fail whole. So a task gets one
// status, from the worker that held its assignment.
func (w *Worker) commit(task string) {
	w.conn.Txn().
		Create(statusPath+"/"+task, w.statusData(), zk.OpenACL, zk.ModePersistent).
		Delete(w.assign+"/"+task, -1).
		CommitAsync(w.ctx, func(_ []zk.OpResult, err error) {
			var me *zk.MultiError
			switch {
			case errors.Is(err, zk.ErrConnectionLoss):
				w.commit(task) // if the first attempt took, this one fails on the create
			case err == nil:
				w.completed(task)
			case w.over(err):
			case errors.As(err, &me) && me.Index == 0 && errors.Is(err, zk.ErrNodeExists):
				w.checkStatus(task)
			case errors.As(err, &me) && me.Index == 1 && errors.Is(err, zk.ErrNoNode):
				w.log.Warn("assignment taken away before the commit: result dropped", "task", task)
				w.finished(task)
			default:
				w.log.Error("committing", "task", task, "err", err)
				w.finished(task)
			}
		})
}

// checkStatus reads a status that was there when the worker committed:
// its own, if an earlier attempt took, or another worker's.
func (w *Worker) checkStatus(task string) {
	w.conn.GetAsync(w.ctx, statusPath+"/"+task, nil, func(data []byte, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.checkStatus(task)
		case err == nil && string(data) == string(w.statusData()):
			w.completed(task)
		case err == nil:
			w.log.Warn("task already done elsewhere: assignment dropped", "task", task, "status", string(data))
			w.dropAssignment(task)
		case w.over(err):
		default:
			w.log.Error("reading status", "task", task, "err", err)
			w.finished(task)
		}
	})
}

func (w *Worker) dropAssignment(task string) {
	w.conn.DeleteAsync(w.ctx, w.assign+"/"+task, -1, func(err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.dropAssignment(task)
		case err == nil, errors.Is(err, zk.ErrNoNode):
			w.finished(task)
		case w.over(err):
		default:
			w.log.Error("deleting assignment", "task", task, "err", err)
			w.finished(task)
		}
	})
}

func (w *Worker) completed(task string) {
	w.log.Debug("task done", "task", task)
	if w.cfg.OnComplete != nil {
		w.cfg.OnComplete(task)
	}
	w.finished(task)
}

func (w *Worker) finished(task string) {
	w.tasks[task] = taskDone
	w.setBusy(-1)
}

// setBusy counts the tasks in hand and keeps the worker's status, the data
// of /workers/worker-<ID>, at "busy" or "idle" (chapter 3's status).
func (w *Worker) setBusy(delta int) {
	w.busy += delta
	status := "idle"
	if w.busy > 0 {
		status = "busy"
	}
	if status != w.status {
		w.status = status
		w.updateStatus(status)
	}
}

// updateStatus writes status unless a newer one was asked for meanwhile
// (a retry after a connection loss must not overwrite it).
func (w *Worker) updateStatus(status string) {
	if status != w.status || !w.registered {
		return
	}
	w.conn.SetAsync(w.ctx, workersPath+"/"+w.name, []byte(status), -1, func(_ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			w.updateStatus(status)
		case err == nil, w.over(err):
		default:
			w.log.Warn("setting status", "status", status, "err", err)
		}
	})
}

// pool runs functions on a fixed set of goroutines. submit never blocks
// (the queue is unbounded, as the book's ThreadPoolExecutor's), so the
// delivery goroutine may call it.
type pool struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []func()
	closed bool
	wg     sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(n)
	for range n {
		go p.loop()
	}
	return p
}

func (p *pool) loop() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cond.Wait()
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		f()
	}
}

func (p *pool) submit(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return // Run is returning; the assignment stays in ZooKeeper
	}
	p.queue = append(p.queue, f)
	p.cond.Signal()
}

// close drops what is queued and waits for the running functions.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.queue = nil
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}
