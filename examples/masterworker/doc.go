// Package masterworker is the master–worker application of the ZooKeeper
// book ("ZooKeeper: Distributed Process Coordination", chapters 3 and 4),
// written in the book's asynchronous style with the zk client: every
// ZooKeeper call is an ...Async call whose callback switches on the error
// as the book's switches on the return code, and reads that must learn of
// changes leave watchers.
//
// Three roles share one znode tree (docs/master-worker.md draws it and
// walks through the failure cases):
//
//   - Master runs for master by creating the ephemeral /master; backups
//     watch it and run again when it goes. The primary watches /workers and
//     /tasks, assigns each task to a random worker with a multi that
//     creates /assign/worker-X/task-N and deletes /tasks/task-N, and moves
//     the assignments of workers that went away back to /tasks.
//   - Worker creates /assign/worker-X, registers the ephemeral
//     /workers/worker-X, watches its assignments, executes them on a pool of
//     goroutines and commits each with a multi that creates /status/task-N
//     and deletes the assignment.
//   - Client submits tasks as sequential /tasks/task-N znodes and watches
//     /status/task-N for the result.
//
// Each role takes a *zk.Conn that the caller connects and closes, and runs
// until its Run's context ends or its session ends. Callbacks and watchers
// run on the Conn's delivery goroutine one at a time, so the state only
// they touch needs no lock; work that blocks (a task's execution) goes to
// other goroutines.
//
// A task gets exactly one status: /status/task-N can be created once, and
// only together with the deletion of the assignment of the worker that
// writes it. A task is executed again only when the worker executing it
// died before committing; a master never moves back to /tasks an
// assignment whose task has a status.
//
// "paddock example master|worker|submit" runs the roles as processes, and
// examples/masterworker/demo.sh runs the whole application against a
// three-member Paddock ensemble, killing the primary master and a worker
// midway.
package masterworker
