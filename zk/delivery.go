package zk

import "sync"

// delivery runs callbacks and watcher invocations one at a time, in the order
// they were queued, on one goroutine (the Java client's event thread).
//
// The queue is unbounded on purpose: the reader never waits for it, so a
// callback may make synchronous calls on its own Conn without deadlock. What
// it holds is bounded by what the application asked for: at most one reply per
// outstanding asynchronous call, at most one event per one-time watch and per
// session state change, and one event per change under a persistent watch.
type delivery struct {
	exec Executor

	mu      sync.Mutex
	cond    sync.Cond
	items   []func()
	spare   []func()
	running bool // a run goroutine exists
	closed  bool // the Conn is done: run exits once the queue is empty
}

func newDelivery(exec Executor) *delivery {
	d := &delivery{exec: exec}
	d.cond.L = &d.mu
	return d
}

// push queues f, starting the delivery goroutine if there is none (after
// the Conn is done, calls still complete through their callbacks).
func (d *delivery) push(f func()) {
	d.mu.Lock()
	d.items = append(d.items, f)
	if !d.running {
		d.running = true
		go d.run()
	} else if len(d.items) == 1 {
		d.cond.Signal()
	}
	d.mu.Unlock()
}

// close lets the goroutine end once everything queued has run.
func (d *delivery) close() {
	d.mu.Lock()
	d.closed = true
	d.cond.Signal()
	d.mu.Unlock()
}

// len returns the number of queued, not yet started, tasks.
func (d *delivery) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.items)
}

func (d *delivery) run() {
	for {
		d.mu.Lock()
		for len(d.items) == 0 && !d.closed {
			d.cond.Wait()
		}
		if len(d.items) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		batch := d.items
		d.items, d.spare = d.spare[:0], nil
		d.mu.Unlock()
		for i, f := range batch {
			batch[i] = nil
			if d.exec != nil {
				d.exec(f)
			} else {
				f()
			}
		}
		d.mu.Lock()
		if d.spare == nil {
			d.spare = batch[:0]
		}
		d.mu.Unlock()
	}
}
