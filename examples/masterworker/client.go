package masterworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Tasks is the number of tasks to submit.
	Tasks int
	// Interval is the pause between two submissions; 0 submits them all at
	// once.
	Interval time.Duration
	// Data returns the data of task i (0 ≤ i < Tasks); nil means
	// "task <i>".
	Data func(i int) []byte
	// OnSubmitted, if set, is called with the name the task got
	// ("task-0000000007"). OnResult, if set, is called once per task with
	// its status ("done worker-2"). Both run on the Conn's delivery
	// goroutine and must not block.
	OnSubmitted func(task string)
	OnResult    func(task string, status []byte)
	// Logger receives the client's log; nil discards it.
	Logger *slog.Logger
}

// Client submits tasks as sequential znodes under /tasks and waits for
// their status under /status, watching for it with exists.
type Client struct {
	session
	cfg ClientConfig

	mu       sync.Mutex // guards the counters, which Run reads
	accepted int        // submissions the server acknowledged
	results  int        // tasks with a status

	// Callbacks only.
	seen map[string]bool // tasks whose status was delivered

	progress chan struct{} // a status arrived (capacity 1)
}

// NewClient returns a Client that uses conn (which the caller keeps and
// closes).
func NewClient(conn *zk.Conn, cfg ClientConfig) *Client {
	if cfg.Data == nil {
		cfg.Data = func(i int) []byte { return []byte("task " + strconv.Itoa(i)) }
	}
	c := &Client{
		session:  newSession(conn, cfg.Logger),
		cfg:      cfg,
		seen:     map[string]bool{},
		progress: make(chan struct{}, 1),
	}
	return c
}

// Run bootstraps the tree, submits the tasks and returns nil once every
// one has a status. It returns an error saying how many have none when ctx
// ends first or the session ends. Run may be called once.
func (c *Client) Run(ctx context.Context) error {
	c.start(ctx)
	defer c.stop(nil)
	ready := make(chan struct{})
	c.bootstrap(func() { close(ready) })
	select {
	case <-ready:
	case <-c.ctx.Done():
		return c.failed()
	}
	for i := range c.cfg.Tasks {
		if i > 0 && c.cfg.Interval > 0 {
			t := time.NewTimer(c.cfg.Interval)
			select {
			case <-t.C:
			case <-c.ctx.Done():
				t.Stop()
				return c.failed()
			}
		}
		c.submitTask(c.cfg.Data(i))
	}
	for {
		c.mu.Lock()
		done := c.results == c.cfg.Tasks
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-c.progress:
		case <-c.ctx.Done():
			return c.failed()
		}
	}
}

// failed explains why Run ended before every task had a status.
func (c *Client) failed() error {
	c.stop(nil) // after this, c.err is settled
	c.mu.Lock()
	results, accepted := c.results, c.accepted
	c.mu.Unlock()
	cause := c.err
	if cause == nil {
		cause = context.Cause(c.ctx)
	}
	return fmt.Errorf("masterworker: %d of %d tasks have no status (%d submitted): %w",
		c.cfg.Tasks-results, c.cfg.Tasks, accepted, cause)
}

// submitTask creates /tasks/task-<seq> with the task's data. After a
// connection loss it submits again, as the book does: if the first create
// took, the task exists twice (the book's "has my sequential znode been
// created?"; zk's CreateProtected answers it with a name it can find
// again).
func (c *Client) submitTask(data []byte) {
	c.conn.CreateAsync(c.ctx, tasksPath+"/task-", data, zk.OpenACL, zk.ModePersistentSequential, func(name string, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			c.submitTask(data)
		case err == nil:
			task := path.Base(name)
			c.mu.Lock()
			c.accepted++
			c.mu.Unlock()
			c.log.Debug("task submitted", "task", task)
			if c.cfg.OnSubmitted != nil {
				c.cfg.OnSubmitted(task)
			}
			c.watchStatus(task, c.newWatcher(func(e zk.Event) {
				if e.Type == zk.EventNodeCreated {
					c.getStatus(task)
				}
			}))
		case c.over(err):
		default:
			c.log.Error("submitting task", "err", err)
			c.stop(err)
		}
	})
}

// watchStatus checks whether the status exists (the task may be done
// already) and leaves a watch for its creation if not.
func (c *Client) watchStatus(task string, w *watcher) {
	c.conn.ExistsAsync(c.ctx, statusPath+"/"+task, w, func(exists bool, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			c.watchStatus(task, w)
		case err == nil && exists:
			c.getStatus(task)
		case err == nil:
			// Not there yet: the watch fires when a worker creates it.
		case c.over(err):
		default:
			c.log.Error("watching status", "task", task, "err", err)
		}
	})
}

func (c *Client) getStatus(task string) {
	c.conn.GetAsync(c.ctx, statusPath+"/"+task, nil, func(data []byte, _ *zk.Stat, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			c.getStatus(task)
		case err == nil:
			c.result(task, data)
		case c.over(err):
		default:
			c.log.Error("reading status", "task", task, "err", err)
		}
	})
}

// result delivers a task's status once, however many ways it arrived.
func (c *Client) result(task string, status []byte) {
	if c.seen[task] {
		return
	}
	c.seen[task] = true
	c.log.Debug("task done", "task", task, "status", string(status))
	if c.cfg.OnResult != nil {
		c.cfg.OnResult(task, status)
	}
	c.mu.Lock()
	c.results++
	c.mu.Unlock()
	select {
	case c.progress <- struct{}{}:
	default:
	}
}
