package masterworker

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// MasterState is where a Master stands in the election (the book's
// MasterStates).
type MasterState int

// Master states.
const (
	MasterRunning    MasterState = iota // running for master: creating /master
	MasterElected                       // the primary: it holds /master
	MasterNotElected                    // a backup: /master is someone else's and is watched
)

func (s MasterState) String() string {
	switch s {
	case MasterRunning:
		return "running"
	case MasterElected:
		return "elected"
	case MasterNotElected:
		return "not elected"
	}
	return "unknown"
}

// MasterConfig configures a Master.
type MasterConfig struct {
	// ID is the master's server id, the data of /master while it is the
	// primary. Every master needs its own.
	ID string
	// Logger receives the master's log; nil discards it.
	Logger *slog.Logger
}

// Master runs for master on /master and, once elected, assigns the tasks
// of /tasks to the workers of /workers and recovers the assignments of
// workers that went away. Everything it does after Run starts it happens in
// callbacks and watchers on the Conn's delivery goroutine, one at a time, so
// the fields marked "callbacks only" need no lock.
type Master struct {
	session
	id string

	elected chan struct{} // closed when it becomes the primary

	mu    sync.Mutex
	state MasterState // read by State; written by callbacks under mu

	// Callbacks only.
	leading    bool            // takeLeadership has run
	workers    []string        // the workers cache; nil until first read
	assigning  map[string]bool // tasks whose data is read or whose assignment is in flight
	waiting    bool            // tasks were left in /tasks for want of a worker
	recovering map[string]bool // "worker-X/task-N" being recovered

	masterWatcher  *watcher // on /master: run again when it is deleted
	workersWatcher *watcher // on /workers' children
	tasksWatcher   *watcher // on /tasks' children
}

// NewMaster returns a Master that uses conn (which the caller keeps and
// closes).
func NewMaster(conn *zk.Conn, cfg MasterConfig) *Master {
	m := &Master{
		session:    newSession(conn, cfg.Logger),
		id:         cfg.ID,
		elected:    make(chan struct{}),
		assigning:  map[string]bool{},
		recovering: map[string]bool{},
	}
	m.log = m.log.With("master", cfg.ID)
	m.masterWatcher = m.newWatcher(func(e zk.Event) {
		if e.Path != masterPath {
			return
		}
		switch e.Type {
		case zk.EventNodeDeleted:
			m.log.Info("/master deleted: running for master")
			m.runForMaster()
		case zk.EventNodeDataChanged:
			// The one-time watch fired without the deletion: watch
			// again, or the backup would miss it.
			if !m.leading {
				m.masterExists()
			}
		}
	})
	m.workersWatcher = m.newWatcher(func(e zk.Event) {
		if e.Type == zk.EventNodeChildrenChanged && e.Path == workersPath {
			m.getWorkers()
		}
	})
	m.tasksWatcher = m.newWatcher(func(e zk.Event) {
		if e.Type == zk.EventNodeChildrenChanged && e.Path == tasksPath {
			m.getTasks()
		}
	})
	return m
}

// Run bootstraps the tree, runs for master and, as primary or backup, works
// until ctx ends (it returns nil) or the session ends (it returns the
// error, zk.ErrSessionExpired for instance: a master whose session expired
// has lost /master, and the application should start a new Master on a new
// session). Run may be called once.
func (m *Master) Run(ctx context.Context) error {
	m.start(ctx)
	m.bootstrap(m.runForMaster)
	return m.wait()
}

// Elected returns a channel that is closed when the master becomes the
// primary.
func (m *Master) Elected() <-chan struct{} { return m.elected }

// State returns the master's state in the election.
func (m *Master) State() MasterState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

func (m *Master) setState(s MasterState) {
	m.mu.Lock()
	m.state = s
	m.mu.Unlock()
}

// runForMaster tries to create /master. After a connection loss it does
// not know whether the create happened, so it checks (checkMaster).
func (m *Master) runForMaster() {
	m.setState(MasterRunning)
	m.conn.CreateAsync(m.ctx, masterPath, []byte(m.id), zk.OpenACL, zk.ModeEphemeral, func(_ string, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.checkMaster()
		case err == nil:
			m.takeLeadership()
		case errors.Is(err, zk.ErrNodeExists):
			m.setState(MasterNotElected)
			m.masterExists()
		case m.over(err):
		default:
			m.setState(MasterNotElected)
			m.log.Error("running for master", "err", err)
		}
	})
}

// checkMaster reads /master to learn who holds it: after a connection
// loss, the znode may be our own. Ours means our session's: /master may
// hold our id and yet be an earlier process's (a master restarted with
// the same id before its old session expired), which the book's random
// server id rules out and a configured id does not.
func (m *Master) checkMaster() {
	m.conn.GetAsync(m.ctx, masterPath, nil, func(_ []byte, stat *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.checkMaster()
		case errors.Is(err, zk.ErrNoNode):
			m.runForMaster()
		case err == nil && stat.EphemeralOwner == m.conn.SessionID():
			m.takeLeadership()
		case err == nil:
			m.setState(MasterNotElected)
			m.masterExists()
		case m.over(err):
		default:
			m.log.Error("checking master", "err", err)
		}
	})
}

// masterExists watches /master. If /master went away between our create
// and this call, the exists watch would wait for a creation: run again now.
func (m *Master) masterExists() {
	m.conn.ExistsAsync(m.ctx, masterPath, m.masterWatcher, func(exists bool, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.masterExists() // no watch was set
		case err == nil && !exists:
			m.runForMaster()
		case err == nil:
			m.log.Info("backup master: watching /master")
		case m.over(err):
		default:
			m.checkMaster()
		}
	})
}

// takeLeadership starts the primary's work: the workers first, so that
// the cache is loaded before any task is assigned (getWorkers goes on with
// the recovery and the tasks once it has the list).
func (m *Master) takeLeadership() {
	if m.leading {
		return
	}
	m.leading = true
	m.setState(MasterElected)
	close(m.elected)
	m.log.Info("elected primary master")
	m.getWorkers()
}

func (m *Master) getWorkers() {
	m.conn.ChildrenAsync(m.ctx, workersPath, m.workersWatcher, func(children []string, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.getWorkers() // neither the list nor the watch
		case err == nil:
			m.reassignAndSet(children)
		case m.over(err):
		default:
			m.log.Error("listing workers", "err", err)
		}
	})
}

// reassignAndSet updates the workers cache and recovers the assignments
// of the workers that left. The first time, it also recovers what earlier
// masters left behind and starts on /tasks.
func (m *Master) reassignAndSet(children []string) {
	first := m.workers == nil
	var gone []string
	for _, w := range m.workers {
		if !slices.Contains(children, w) {
			gone = append(gone, w)
		}
	}
	m.workers = append([]string{}, children...)
	m.log.Info("workers", "count", len(children), "gone", gone)
	for _, w := range gone {
		m.getAbsentWorkerTasks(w)
	}
	switch {
	case first:
		m.recoverOrphans()
		m.getTasks()
	case m.waiting && len(children) > 0:
		m.waiting = false
		m.getTasks()
	}
}

// recoverOrphans is a new primary's first look at /assign: a worker that
// has an assignment parent but no /workers znode died (or never
// registered), perhaps while no master was watching, and its tasks must go
// back to /tasks.
func (m *Master) recoverOrphans() {
	m.conn.ChildrenAsync(m.ctx, assignPath, nil, func(children []string, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.recoverOrphans()
		case err == nil:
			for _, w := range children {
				if !slices.Contains(m.workers, w) {
					m.getAbsentWorkerTasks(w)
				}
			}
		case m.over(err):
		default:
			m.log.Error("listing assignments", "err", err)
		}
	})
}

// getAbsentWorkerTasks recovers every task assigned to worker w, once it
// is sure w is not registered.
func (m *Master) getAbsentWorkerTasks(w string) {
	m.conn.ExistsAsync(m.ctx, workersPath+"/"+w, nil, func(exists bool, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.getAbsentWorkerTasks(w)
		case err == nil && exists:
			// Registered again (a new process with the same id): its
			// assignments are its own.
		case err == nil:
			m.listAbsentWorkerTasks(w)
		case m.over(err):
		default:
			m.log.Error("checking worker", "worker", w, "err", err)
		}
	})
}

func (m *Master) listAbsentWorkerTasks(w string) {
	m.conn.ChildrenAsync(m.ctx, assignPath+"/"+w, nil, func(children []string, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.listAbsentWorkerTasks(w)
		case err == nil:
			slices.Sort(children)
			for _, task := range children {
				m.recoverTask(w, task)
			}
		case errors.Is(err, zk.ErrNoNode):
		case m.over(err):
		default:
			m.log.Error("listing assignments", "worker", w, "err", err)
		}
	})
}

// recoverTask deals with one assignment of a worker that is gone. If the
// task has a status, the worker finished it but died before removing the
// assignment: the assignment is deleted and the task is not run again.
// Otherwise a multi moves it back to /tasks (deleting the assignment at
// the version read and creating the task with its data), where it is
// assigned like a new one. The worker is gone, so no status can appear
// between the check and the move.
func (m *Master) recoverTask(w, task string) {
	key := w + "/" + task
	if m.recovering[key] {
		return
	}
	m.recovering[key] = true
	m.readAssignment(w, task)
}

func (m *Master) readAssignment(w, task string) {
	path := assignPath + "/" + w + "/" + task
	m.conn.GetAsync(m.ctx, path, nil, func(data []byte, stat *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.readAssignment(w, task)
		case err == nil:
			m.checkRecoveredStatus(w, task, data, stat.Version)
		case errors.Is(err, zk.ErrNoNode):
			m.recovered(w, task) // recovered by an earlier attempt
		case m.over(err):
		default:
			m.log.Error("reading assignment", "path", path, "err", err)
			m.recovered(w, task)
		}
	})
}

func (m *Master) checkRecoveredStatus(w, task string, data []byte, version int32) {
	m.conn.ExistsAsync(m.ctx, statusPath+"/"+task, nil, func(exists bool, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.checkRecoveredStatus(w, task, data, version)
		case err == nil && exists:
			m.deleteDoneAssignment(w, task, version)
		case err == nil:
			m.moveBack(w, task, data, version)
		case m.over(err):
		default:
			m.log.Error("checking status", "task", task, "err", err)
			m.recovered(w, task)
		}
	})
}

func (m *Master) deleteDoneAssignment(w, task string, version int32) {
	path := assignPath + "/" + w + "/" + task
	m.conn.DeleteAsync(m.ctx, path, version, func(err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.deleteDoneAssignment(w, task, version)
		case err == nil, errors.Is(err, zk.ErrNoNode):
			m.log.Info("task of a gone worker already done: assignment removed", "task", task, "worker", w)
			m.recovered(w, task)
		case m.over(err):
		default:
			m.log.Error("deleting assignment", "path", path, "err", err)
			m.recovered(w, task)
		}
	})
}

func (m *Master) moveBack(w, task string, data []byte, version int32) {
	m.conn.Txn().
		Delete(assignPath+"/"+w+"/"+task, version).
		Create(tasksPath+"/"+task, data, zk.OpenACL, zk.ModePersistent).
		CommitAsync(m.ctx, func(_ []zk.OpResult, err error) {
			var me *zk.MultiError
			switch {
			case errors.Is(err, zk.ErrConnectionLoss):
				// If the first attempt took, this one fails on the
				// delete: the assignment is gone.
				m.moveBack(w, task, data, version)
			case err == nil:
				m.log.Info("task of a gone worker moved back to /tasks", "task", task, "worker", w)
				m.recovered(w, task)
			case m.over(err):
			case errors.As(err, &me) && me.Index == 0 && errors.Is(err, zk.ErrNoNode):
				m.recovered(w, task) // moved by an earlier attempt
			default:
				m.log.Error("moving task back", "task", task, "worker", w, "err", err)
				m.recovered(w, task)
			}
		})
}

func (m *Master) recovered(w, task string) {
	delete(m.recovering, w+"/"+task)
}

func (m *Master) getTasks() {
	m.conn.ChildrenAsync(m.ctx, tasksPath, m.tasksWatcher, func(children []string, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.getTasks()
		case err == nil:
			m.assignTasks(children)
		case m.over(err):
		default:
			m.log.Error("listing tasks", "err", err)
		}
	})
}

// assignTasks assigns the tasks of /tasks. Every task there is unassigned:
// an assignment deletes the task in the same multi.
func (m *Master) assignTasks(tasks []string) {
	slices.Sort(tasks)
	for _, task := range tasks {
		if m.assigning[task] {
			continue // a listing that overlaps an assignment in flight
		}
		m.assigning[task] = true
		m.getTaskData(task)
	}
}

// getTaskData reads the task before assigning it, because the assignment
// deletes it from /tasks.
func (m *Master) getTaskData(task string) {
	m.conn.GetAsync(m.ctx, tasksPath+"/"+task, nil, func(data []byte, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			m.getTaskData(task)
		case err == nil:
			if len(m.workers) == 0 {
				// No worker: the task waits in /tasks until one comes.
				delete(m.assigning, task)
				m.waiting = true
				return
			}
			m.assign(m.workers[rand.IntN(len(m.workers))], task, data)
		case errors.Is(err, zk.ErrNoNode):
			delete(m.assigning, task) // assigned meanwhile
		case m.over(err):
		default:
			m.log.Error("reading task", "task", task, "err", err)
			delete(m.assigning, task)
		}
	})
}

// assign creates /assign/<worker>/<task> with the task's data and deletes
// /tasks/<task> in one multi, so that a master that dies in between cannot
// leave an assigned task in /tasks, nor assign a task twice: a second
// multi for the same task fails whole, on the delete.
func (m *Master) assign(worker, task string, data []byte) {
	m.conn.Txn().
		Create(assignPath+"/"+worker+"/"+task, data, zk.OpenACL, zk.ModePersistent).
		Delete(tasksPath+"/"+task, -1).
		CommitAsync(m.ctx, func(_ []zk.OpResult, err error) {
			var me *zk.MultiError
			switch {
			case errors.Is(err, zk.ErrConnectionLoss):
				// A repeat fails whole if the first attempt took.
				m.assign(worker, task, data)
				return
			case err == nil:
				m.log.Debug("task assigned", "task", task, "worker", worker)
			case m.over(err):
				return
			case errors.As(err, &me) && me.Index == 1 && errors.Is(err, zk.ErrNoNode),
				errors.As(err, &me) && me.Index == 0 && errors.Is(err, zk.ErrNodeExists):
				// An earlier attempt of ours assigned it.
			default:
				// /assign/<worker> missing, say: the task stays in
				// /tasks and is tried again at the next change.
				m.log.Warn("task not assigned", "task", task, "worker", worker, "err", err)
				m.waiting = true
			}
			delete(m.assigning, task)
		})
}
