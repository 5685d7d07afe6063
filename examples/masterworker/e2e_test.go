package masterworker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/examples/masterworker"
	"github.com/paddockhq/paddock/zk"
)

// TestFailover runs the whole application on a three-member ensemble: two
// masters, three workers and a client submitting 100 tasks. Midway the
// primary master and a worker holding assignments are killed (their TCP
// connections reset, redial refused, so their sessions expire). The backup
// takes over, the dead worker's assignments are recovered, and every task
// gets exactly one status, committed by the one live worker that executed
// it.
func TestFailover(t *testing.T) {
	e := newEnv(t)
	const tasks = 100
	const killAt, electedAt = 40, 70 // submissions held until the kill, and until the new master

	m1ks := &killSwitch{}
	m1 := masterworker.NewMaster(e.connect(m1ks), masterworker.MasterConfig{ID: "m1"})
	m1err := e.run(m1.Run)
	recv(e, "m1 elected", m1.Elected())
	m2 := masterworker.NewMaster(e.connect(nil), masterworker.MasterConfig{ID: "m2"})
	e.run(m2.Run)
	e.eventually("m2 is a backup", func() error {
		if s := m2.State(); s != masterworker.MasterNotElected {
			return fmt.Errorf("m2 is %v", s)
		}
		return nil
	})

	j := newJournal()
	w3ks := &killSwitch{}
	w3gate := make(chan struct{}) // w3's tasks never end before it is killed
	e.worker("1", j, nil, nil)
	e.worker("2", j, nil, nil)
	w3err := e.worker("3", j, w3ks, w3gate)
	e.eventually("three workers registered", func() error {
		return countErr("workers", len(e.children("/workers")), 3)
	})

	// The client's submission loop asks for each task's data: holding
	// Data(i) holds submission i.
	reached := map[int]chan struct{}{killAt: make(chan struct{}), electedAt: make(chan struct{})}
	resume := map[int]chan struct{}{killAt: make(chan struct{}), electedAt: make(chan struct{})}
	var mu sync.Mutex
	var submitted []string
	results := map[string]int{}
	c := masterworker.NewClient(e.connect(nil), masterworker.ClientConfig{
		Tasks: tasks,
		Data: func(i int) []byte {
			if reached[i] != nil {
				close(reached[i])
				<-resume[i]
			}
			return fmt.Appendf(nil, "task %d", i)
		},
		OnSubmitted: func(task string) {
			mu.Lock()
			submitted = append(submitted, task)
			mu.Unlock()
		},
		OnResult: func(task string, _ []byte) {
			mu.Lock()
			results[task]++
			mu.Unlock()
		},
	})
	cerr := e.run(c.Run)

	// Phase 1: the first 40 tasks are done, except those w3 holds.
	recv(e, "submission 40", reached[killAt])
	var held []string
	e.eventually("first tasks done or held by w3", func() error {
		held = e.children("/assign/worker-3")
		return countErr("done + held by w3", j.completions()+len(held), killAt)
	})
	if len(held) == 0 {
		t.Fatal("w3 was assigned none of the first 40 tasks")
	}
	m1ks.kill()
	w3ks.kill()
	close(w3gate) // w3's executions end and try to commit, in vain
	close(resume[killAt])

	// Phase 2: tasks submitted while /master is held by a dead session.
	recv(e, "submission 70", reached[electedAt])
	recv(e, "m2 elected", m2.Elected())
	close(resume[electedAt])

	// Phase 3: the rest, under m2.
	if err := recv(e, "client done", cerr); err != nil {
		t.Fatalf("client: %v", err)
	}
	expectErr(e, "killed m1", m1err, zk.ErrSessionExpired)
	expectErr(e, "killed w3", w3err, zk.ErrSessionExpired)

	mu.Lock()
	slices.Sort(submitted)
	if len(submitted) != tasks {
		t.Errorf("%d tasks submitted, want %d", len(submitted), tasks)
	}
	for _, task := range submitted {
		if results[task] != 1 {
			t.Errorf("client got %d results for %s, want 1", results[task], task)
		}
	}
	mu.Unlock()
	if got := e.children("/status"); !slices.Equal(got, submitted) {
		t.Errorf("/status has %d children, want the %d tasks submitted: %v", len(got), len(submitted), got)
	}
	e.checkExactlyOnce(j, submitted, "3")
	for _, task := range held {
		if got := e.get("/status/" + task); got == "done worker-3" {
			t.Errorf("%s, held by the killed w3, has status %q", task, got)
		}
	}
	if got := e.get("/master"); got != "m2" {
		t.Errorf("/master = %q, want m2", got)
	}
	for _, p := range []string{"/tasks", "/assign/worker-1", "/assign/worker-2", "/assign/worker-3"} {
		if got := e.children(p); len(got) != 0 {
			t.Errorf("%s still has %v", p, got)
		}
	}
	if got := e.children("/workers"); !slices.Equal(got, []string{"worker-1", "worker-2"}) {
		t.Errorf("/workers = %v, want worker-1 and worker-2", got)
	}
	e.eventually("live workers idle", func() error {
		for _, w := range []string{"worker-1", "worker-2"} {
			if s := e.get("/workers/" + w); s != "idle" {
				return fmt.Errorf("%s is %q", w, s)
			}
		}
		return nil
	})
	t.Logf("%d tasks; w3 held %d when killed", tasks, len(held))
}

// TestWorkerDiesUnderMaster kills a worker holding assignments while the
// primary master runs: the master sees it leave /workers and moves its
// assignments back to /tasks, from where they go to the other worker.
func TestWorkerDiesUnderMaster(t *testing.T) {
	e := newEnv(t)
	const tasks = 20

	m := masterworker.NewMaster(e.connect(nil), masterworker.MasterConfig{ID: "m1"})
	e.run(m.Run)
	recv(e, "m1 elected", m.Elected())
	j := newJournal()
	w2ks := &killSwitch{}
	w2gate := make(chan struct{})
	e.worker("1", j, nil, nil)
	w2err := e.worker("2", j, w2ks, w2gate)
	e.eventually("two workers registered", func() error {
		return countErr("workers", len(e.children("/workers")), 2)
	})

	var mu sync.Mutex
	var submitted []string
	c := masterworker.NewClient(e.connect(nil), masterworker.ClientConfig{
		Tasks: tasks,
		OnSubmitted: func(task string) {
			mu.Lock()
			submitted = append(submitted, task)
			mu.Unlock()
		},
	})
	cerr := e.run(c.Run)
	var held []string
	e.eventually("tasks done or held by w2", func() error {
		held = e.children("/assign/worker-2")
		return countErr("done + held by w2", j.completions()+len(held), tasks)
	})
	if len(held) == 0 {
		t.Fatal("w2 was assigned none of the tasks")
	}
	w2ks.kill()
	close(w2gate)
	if err := recv(e, "client done", cerr); err != nil {
		t.Fatalf("client: %v", err)
	}
	expectErr(e, "killed w2", w2err, zk.ErrSessionExpired)
	if m.State() != masterworker.MasterElected {
		t.Errorf("master is %v, want elected throughout", m.State())
	}
	mu.Lock()
	slices.Sort(submitted)
	mu.Unlock()
	if got := e.children("/status"); !slices.Equal(got, submitted) {
		t.Errorf("/status has %d children, want the %d tasks submitted: %v", len(got), len(submitted), got)
	}
	e.checkExactlyOnce(j, submitted, "2")
}

// TestRecoveryOnTakeover starts a master on the tree a crash left: a gone
// worker (no /workers znode) with two assignments, one of them finished
// (its status written) but not deleted, and a task never assigned. The
// master must remove the finished assignment without running the task
// again, move the other back and have both pending tasks run once.
func TestRecoveryOnTakeover(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/workers", "/assign", "/tasks", "/status", "/assign/worker-gone"} {
		e.create(p, "")
	}
	const done, orphan, fresh = "task-0000000001", "task-0000000002", "task-0000000003"
	e.create("/assign/worker-gone/"+done, "one")
	e.create("/status/"+done, "done worker-gone")
	e.create("/assign/worker-gone/"+orphan, "two")
	e.create("/tasks/"+fresh, "three")

	j := newJournal()
	var mu sync.Mutex
	data := map[string][]string{}
	w := masterworker.NewWorker(e.connect(nil), masterworker.WorkerConfig{
		ID: "1",
		Execute: func(_ context.Context, task string, d []byte) {
			j.start(task, "1")
			mu.Lock()
			data[task] = append(data[task], string(d))
			mu.Unlock()
		},
		OnComplete: func(task string) { j.complete(task, "1") },
	})
	e.run(w.Run)
	e.eventually("worker registered", func() error {
		return countErr("workers", len(e.children("/workers")), 1)
	})
	m := masterworker.NewMaster(e.connect(nil), masterworker.MasterConfig{ID: "m1"})
	e.run(m.Run)

	e.eventually("recovered", func() error {
		if err := countErr("statuses", len(e.children("/status")), 3); err != nil {
			return err
		}
		return countErr("assignments of the gone worker", len(e.children("/assign/worker-gone")), 0)
	})
	if got := e.get("/status/" + done); got != "done worker-gone" {
		t.Errorf("/status/%s = %q, want the gone worker's", done, got)
	}
	j.mu.Lock()
	if got := j.started[done]; len(got) != 0 {
		t.Errorf("%s, done before the crash, was executed again by %v", done, got)
	}
	j.mu.Unlock()
	e.checkExactlyOnce(j, []string{orphan, fresh})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(data[orphan], []string{"two"}) || !slices.Equal(data[fresh], []string{"three"}) {
		t.Errorf("executed with data %v, want the tasks' own", data)
	}
}
