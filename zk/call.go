package zk

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"sync"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
)

// call is one request from submission to completion.
type call struct {
	xid   int32
	op    proto.OpCode
	path  string  // the caller's path, for errors and watch registration
	frame []byte  // the whole request frame; the xid is patched in at submit
	fbuf  *[]byte // framePool's buffer frame was built in

	resp proto.Response // decoded into on success; nil for replies without a body
	err  error          // the outcome, set before done or cb

	// Watch registration when the reply arrives.
	watch   watchKind
	watcher Watcher

	// onReply runs on the reader goroutine after the outcome is known and
	// before completion (chroot fixes, local watch removal).
	onReply func(*call)

	// onQueue runs under the Conn's mutex as the call is queued, before
	// its xid is assigned: a request that depends on what else is in
	// flight is settled there (removeWatches).
	onQueue func(*call)

	done chan struct{} // synchronous calls: receives once on completion
	cb   func()        // asynchronous calls: queued for delivery on completion

	// then holds the callbacks of asynchronous calls that failed before
	// being sent while this one was the Conn's last asynchronous call (or
	// auth call) in flight: each is queued right after cb, in request
	// order, once the other call it may also wait for has completed.
	// Guarded by the Conn's mutex.
	then []*deferredCallback

	ch chan struct{} // done's channel, kept when the call is recycled
}

// callPool recycles the calls of synchronous requests that completed
// normally, with their (then empty) done channel. A call whose caller
// stopped waiting (ctx ended) is never recycled: the reader may still
// complete it.
var callPool = sync.Pool{New: func() any { return new(call) }}

// framePool recycles request frame buffers (the writer returns them once
// written).
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

const maxPooledFrame = 64 << 10

// bufSize is the size of a connection's read and write buffers: one read
// takes in, and one write sends, a burst of pipelined frames.
const bufSize = 64 << 10

// readerPool and writerPool recycle connections' buffers: a program that
// opens many short sessions would otherwise allocate and zero 128 KiB for
// each, and collect it soon after.
var (
	readerPool sync.Pool
	writerPool sync.Pool
)

func getReader(nc io.Reader) *bufio.Reader {
	if br, _ := readerPool.Get().(*bufio.Reader); br != nil {
		br.Reset(nc)
		return br
	}
	return bufio.NewReaderSize(nc, bufSize)
}

// putReader recycles br; its connection's reader must be done with it.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

func getWriter(nc io.Writer) *bufio.Writer {
	if bw, _ := writerPool.Get().(*bufio.Writer); bw != nil {
		bw.Reset(nc)
		return bw
	}
	return bufio.NewWriterSize(nc, bufSize)
}

// putWriter recycles bw; its connection's writer must be done with it.
func putWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	writerPool.Put(bw)
}

func (c *Conn) newCall(op proto.OpCode, path string, req proto.Request, resp proto.Response) *call {
	cl := callPool.Get().(*call)
	cl.op, cl.path, cl.resp = op, path, resp
	cl.fbuf = framePool.Get().(*[]byte)
	cl.frame = proto.AppendRequestFrame((*cl.fbuf)[:0], 0, op, req)
	return cl
}

// recycle puts a completed synchronous call back in callPool. Nothing may
// refer to cl afterwards: the reader and writer are done with it once its
// completion was received from done.
func recycle(cl *call) {
	*cl = call{ch: cl.ch}
	callPool.Put(cl)
}

// pooledFrame is a request frame and the framePool buffer it was built in
// (nil when unknown).
type pooledFrame struct {
	b   []byte
	buf *[]byte
}

// takeFrame removes cl's frame from it, for the writer.
func (cl *call) takeFrame() pooledFrame {
	f := pooledFrame{cl.frame, cl.fbuf}
	cl.frame, cl.fbuf = nil, nil
	return f
}

// release returns f's buffer to framePool.
func (f pooledFrame) release() {
	if f.buf == nil {
		releaseFrame(f.b)
		return
	}
	if cap(f.b) <= maxPooledFrame {
		*f.buf = f.b[:0]
		framePool.Put(f.buf)
	}
}

// releaseFrame returns a frame buffer to framePool when its pool pointer
// is not at hand.
func releaseFrame(b []byte) {
	if cap(b) <= maxPooledFrame {
		b = b[:0]
		framePool.Put(&b)
	}
}

// checkPath validates a caller's path before anything is sent.
func checkPath(op proto.OpCode, path string, sequential bool) error {
	p := path
	if sequential {
		p += "1" // a sequential name may end in '/', as ZooKeeper allows
	}
	if err := zpath.Validate(p); err != nil {
		return &OpError{Op: op.String(), Path: path, Err: &pathError{err}}
	}
	return nil
}

// pathError wraps the reason a path is invalid so that it matches
// ErrInvalidPath.
type pathError struct{ err error }

func (e *pathError) Error() string        { return "zk: " + e.err.Error() }
func (e *pathError) Is(target error) bool { return target == ErrInvalidPath }
func (e *pathError) Unwrap() error        { return e.err }

// submit queues cl to be written. The call completes exactly once: with the
// reply, or with an error when the connection is lost or the Conn is done.
func (c *Conn) submit(cl *call) {
	c.mu.Lock()
	if err := c.refuseLocked(cl.op); err != nil {
		c.mu.Unlock()
		c.failEarly(cl, err)
		return
	}
	if cl.onQueue != nil {
		cl.onQueue(cl)
	}
	c.assignXidLocked(cl)
	c.outq = append(c.outq, cl)
	if cl.cb != nil {
		if cl.op == proto.OpAuth {
			c.lastAuth = cl
		} else {
			c.lastAsync = cl
		}
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// refuseLocked returns the error a call gets when the Conn cannot take it.
func (c *Conn) refuseLocked(op proto.OpCode) error {
	switch {
	case c.state == StateExpired:
		return ErrSessionExpired
	case c.state == StateAuthFailed:
		return ErrAuthFailed
	case c.state == StateClosed:
		return ErrClosed
	case c.closing && op != proto.OpCloseSession:
		return ErrClosed
	}
	return nil
}

func (c *Conn) assignXidLocked(cl *call) {
	switch cl.op {
	case proto.OpPing:
		cl.xid = proto.XidPing
	case proto.OpAuth:
		cl.xid = proto.XidAuth
	case proto.OpSetWatches, proto.OpSetWatches2:
		cl.xid = proto.XidSetWatches
	default:
		c.xid++
		if c.xid <= 0 {
			c.xid = 1
		}
		cl.xid = c.xid
	}
	binary.BigEndian.PutUint32(cl.frame[4:8], uint32(cl.xid))
}

// finish completes cl with err (nil: success, resp decoded). It runs the
// reply hook, then wakes the synchronous caller or queues the callback,
// followed by the early failures queued behind it (failAsync).
func (c *Conn) finish(cl *call, err error) {
	if err != nil {
		cl.err = opError(cl.op, cl.path, err)
	}
	if cl.onReply != nil {
		cl.onReply(cl)
	}
	switch {
	case cl.done != nil:
		cl.done <- struct{}{}
	case cl.cb != nil:
		c.events.push(cl.cb)
		c.mu.Lock()
		if c.lastAsync == cl {
			c.lastAsync = nil
		}
		if c.lastAuth == cl {
			c.lastAuth = nil
		}
		for _, d := range cl.then {
			if d.wait--; d.wait == 0 {
				c.events.push(d.f)
			}
		}
		cl.then = nil
		c.mu.Unlock()
	}
}

// failEarly completes cl, which was not sent, with err: a synchronous
// caller is woken at once, a callback goes behind those of the earlier
// asynchronous calls (failAsync).
func (c *Conn) failEarly(cl *call, err error) {
	cl.takeFrame().release()
	cl.err = opError(cl.op, cl.path, err)
	if cl.onReply != nil {
		cl.onReply(cl)
	}
	switch {
	case cl.done != nil:
		cl.done <- struct{}{}
	case cl.cb != nil:
		c.failAsync(cl.cb)
	}
}

// failAsync queues f, the callback of an asynchronous call that failed
// before it was sent (a bad argument, a ctx already done, a Conn closing),
// behind the callbacks of the asynchronous calls still in flight, so that
// callbacks run in request order. Calls complete in order, so the last
// asynchronous call in flight completes after all the others; auth packets
// are the exception (a ZooKeeper server answers them as they arrive, ahead
// of the requests before them), so f waits for the last auth call in flight
// too.
func (c *Conn) failAsync(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &deferredCallback{f: f}
	for _, last := range [...]*call{c.lastAsync, c.lastAuth} {
		if last != nil {
			last.then = append(last.then, d)
			d.wait++
		}
	}
	if d.wait == 0 {
		c.events.push(f)
	}
}

// deferredCallback is the callback of an asynchronous call that failed
// before being sent, waiting for the asynchronous calls made before it.
type deferredCallback struct {
	f    func()
	wait int // calls still to complete before f is queued
}

// do submits cl and waits for it. Cancelling ctx abandons the wait, not the
// request: a write may still be applied.
func (c *Conn) do(ctx context.Context, cl *call) error {
	_, err := c.wait(ctx, cl)
	return err
}

// wait is do that also reports whether the call completed (false: ctx
// ended first). Either way cl must not be used afterwards: a completed call
// is recycled.
func (c *Conn) wait(ctx context.Context, cl *call) (bool, error) {
	if err := ctx.Err(); err != nil {
		cl.takeFrame().release()
		return false, opError(cl.op, cl.path, err)
	}
	if cl.ch == nil {
		cl.ch = make(chan struct{}, 1)
	}
	cl.done = cl.ch
	c.submit(cl)
	select {
	case <-cl.done:
		err := cl.err
		recycle(cl)
		return true, err
	case <-ctx.Done():
		return false, opError(cl.op, cl.path, ctx.Err())
	}
}

// start submits cl to complete through cb on the delivery goroutine. A done
// ctx completes it with ctx's error without sending it (the callback still
// runs after those of the earlier calls).
func (c *Conn) start(ctx context.Context, cl *call, cb func()) {
	cl.cb = cb
	if err := ctx.Err(); err != nil {
		c.failEarly(cl, err)
		return
	}
	c.submit(cl)
}
