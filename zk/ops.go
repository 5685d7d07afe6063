package zk

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// Every operation comes in two forms that share one request builder:
// the synchronous method waits for the reply (or for ctx to end), and its
// ...Async twin returns at once and calls back on the delivery goroutine.
// An argument error is returned by the synchronous form and passed to the
// callback of the asynchronous one, through failAsync, so that the callback
// runs on the delivery goroutine, after those of the earlier calls.

func badArgs(op proto.OpCode, path, format string, args ...any) error {
	return &OpError{Op: op.String(), Path: path, Err: fmt.Errorf("%w: %s", ErrBadArguments, fmt.Sprintf(format, args...))}
}

// ---- create ----

type createCall struct {
	cl    *call
	plain *proto.CreateResponse
	full  *proto.Create2Response
}

func (r *createCall) result(root chroot) (string, *Stat) {
	if r.full != nil {
		return root.created(r.full.Path), statFrom(&r.full.Stat)
	}
	return root.created(r.plain.Path), nil
}

func (c *Conn) createCall(path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration, wantStat bool) (*createCall, error) {
	op := proto.OpCreate
	switch {
	case mode.IsTTL():
		op = proto.OpCreateTTL
	case mode == ModeContainer:
		op = proto.OpCreateContainer
	case wantStat:
		op = proto.OpCreate2
	}
	if !mode.valid() {
		return nil, badArgs(op, path, "unknown create mode %d", int32(mode))
	}
	if mode.IsTTL() && ttl <= 0 {
		return nil, badArgs(op, path, "%s needs a positive TTL", mode)
	}
	if !mode.IsTTL() && ttl != 0 {
		return nil, badArgs(op, path, "a TTL needs a TTL create mode, not %s", mode)
	}
	if err := checkPath(op, path, mode.IsSequential()); err != nil {
		return nil, err
	}
	r := &createCall{}
	var req proto.Request
	sp, pacl := c.root.server(path), aclsToProto(acl)
	if op == proto.OpCreateTTL {
		req = &proto.CreateTTLRequest{Path: sp, Data: data, ACL: pacl, Flags: int32(mode), TTL: ttl.Milliseconds()}
	} else {
		req = &proto.CreateRequest{Path: sp, Data: data, ACL: pacl, Flags: int32(mode)}
	}
	var resp proto.Response
	if op == proto.OpCreate {
		r.plain = &proto.CreateResponse{}
		resp = r.plain
	} else {
		r.full = &proto.Create2Response{}
		resp = r.full
	}
	r.cl = c.newCall(op, path, req, resp)
	return r, nil
}

// Create creates a znode and returns its path (with the sequence number for
// sequential modes). TTL modes need CreateTTL.
func (c *Conn) Create(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode) (string, error) {
	r, err := c.createCall(path, data, acl, mode, 0, false)
	if err != nil {
		return "", err
	}
	if err := c.do(ctx, r.cl); err != nil {
		return "", err
	}
	name, _ := r.result(c.root)
	return name, nil
}

// Create2 creates a znode like Create and also returns its Stat (the
// create2 request).
func (c *Conn) Create2(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode) (string, *Stat, error) {
	r, err := c.createCall(path, data, acl, mode, 0, true)
	if err != nil {
		return "", nil, err
	}
	if err := c.do(ctx, r.cl); err != nil {
		return "", nil, err
	}
	name, st := r.result(c.root)
	return name, st, nil
}

// CreateTTL creates a znode of mode ModePersistentWithTTL or
// ModePersistentSequentialWithTTL, which the server deletes once it has had
// no children and no change for ttl. The server must allow TTL nodes
// (extendedTypesEnabled).
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration) (string, *Stat, error) {
	r, err := c.createCall(path, data, acl, mode, ttl, true)
	if err != nil {
		return "", nil, err
	}
	if err := c.do(ctx, r.cl); err != nil {
		return "", nil, err
	}
	name, st := r.result(c.root)
	return name, st, nil
}

// CreateAsync is Create that calls cb with the created path.
func (c *Conn) CreateAsync(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode, cb func(name string, err error)) {
	r, err := c.createCall(path, data, acl, mode, 0, false)
	if err != nil {
		c.failAsync(func() { cb("", err) })
		return
	}
	c.start(ctx, r.cl, func() {
		if r.cl.err != nil {
			cb("", r.cl.err)
			return
		}
		name, _ := r.result(c.root)
		cb(name, nil)
	})
}

// Create2Async is Create2 that calls cb with the created path and Stat.
func (c *Conn) Create2Async(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode, cb func(name string, stat *Stat, err error)) {
	c.create2Async(ctx, path, data, acl, mode, 0, cb)
}

// CreateTTLAsync is CreateTTL that calls cb with the created path and Stat.
func (c *Conn) CreateTTLAsync(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration, cb func(name string, stat *Stat, err error)) {
	c.create2Async(ctx, path, data, acl, mode, ttl, cb)
}

func (c *Conn) create2Async(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration, cb func(string, *Stat, error)) {
	r, err := c.createCall(path, data, acl, mode, ttl, true)
	if err != nil {
		c.failAsync(func() { cb("", nil, err) })
		return
	}
	c.start(ctx, r.cl, func() {
		if r.cl.err != nil {
			cb("", nil, r.cl.err)
			return
		}
		name, st := r.result(c.root)
		cb(name, st, nil)
	})
}

// ---- delete ----

func (c *Conn) deleteCall(path string, version int32) (*call, error) {
	if err := checkPath(proto.OpDelete, path, false); err != nil {
		return nil, err
	}
	serverPath := c.root.server(path)
	if path == "/" {
		// As ZooKeeper's Java client: "/" is sent as is, not as the
		// chroot, so that deleting the root fails under a chroot too
		// (BADARGUMENTS) instead of deleting the chroot's node.
		serverPath = path
	}
	return c.newCall(proto.OpDelete, path, &proto.DeleteRequest{Path: serverPath, Version: version}, nil), nil
}

// Delete deletes the znode if its version is version (-1: any version).
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	cl, err := c.deleteCall(path, version)
	if err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// DeleteAsync is Delete that calls cb.
func (c *Conn) DeleteAsync(ctx context.Context, path string, version int32, cb func(err error)) {
	cl, err := c.deleteCall(path, version)
	if err != nil {
		c.failAsync(func() { cb(err) })
		return
	}
	c.start(ctx, cl, func() { cb(cl.err) })
}

// ---- exists ----

func (c *Conn) existsCall(path string, w Watcher) (*call, *proto.StatResponse, error) {
	if err := checkPath(proto.OpExists, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.StatResponse{}
	cl := c.newCall(proto.OpExists, path, &proto.ExistsRequest{Path: c.root.server(path), Watch: w != nil}, resp)
	cl.watch, cl.watcher = watchKindIf(w, watchExist), w
	return cl, resp, nil
}

func watchKindIf(w Watcher, k watchKind) watchKind {
	if w == nil {
		return watchNone
	}
	return k
}

// existsResult turns NoNode into "does not exist".
func existsResult(err error, resp *proto.StatResponse) (bool, *Stat, error) {
	if err != nil {
		if ErrorCode(err) == ErrNoNode.code {
			return false, nil, nil
		}
		return false, nil, err
	}
	return true, statFrom(&resp.Stat), nil
}

// Exists reports whether the znode exists, with its Stat if it does.
func (c *Conn) Exists(ctx context.Context, path string) (bool, *Stat, error) {
	return c.ExistsW(ctx, path, nil)
}

// ExistsW is Exists that also leaves a watch for w: it fires when the znode
// is created (if it did not exist), changed or deleted.
func (c *Conn) ExistsW(ctx context.Context, path string, w Watcher) (bool, *Stat, error) {
	cl, resp, err := c.existsCall(path, w)
	if err != nil {
		return false, nil, err
	}
	return existsResult(c.do(ctx, cl), resp)
}

// ExistsAsync is ExistsW (w may be nil) that calls cb.
func (c *Conn) ExistsAsync(ctx context.Context, path string, w Watcher, cb func(exists bool, stat *Stat, err error)) {
	cl, resp, err := c.existsCall(path, w)
	if err != nil {
		c.failAsync(func() { cb(false, nil, err) })
		return
	}
	c.start(ctx, cl, func() { cb(existsResult(cl.err, resp)) })
}

// ---- getData ----

func (c *Conn) getCall(path string, w Watcher) (*call, *proto.GetDataResponse, error) {
	if err := checkPath(proto.OpGetData, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.GetDataResponse{}
	cl := c.newCall(proto.OpGetData, path, &proto.GetDataRequest{Path: c.root.server(path), Watch: w != nil}, resp)
	cl.watch, cl.watcher = watchKindIf(w, watchData), w
	return cl, resp, nil
}

// Get returns the znode's data and Stat.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	return c.GetW(ctx, path, nil)
}

// GetW is Get that also leaves a watch for w: it fires when the data
// changes or the znode is deleted.
func (c *Conn) GetW(ctx context.Context, path string, w Watcher) ([]byte, *Stat, error) {
	cl, resp, err := c.getCall(path, w)
	if err != nil {
		return nil, nil, err
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, nil, err
	}
	return resp.Data, statFrom(&resp.Stat), nil
}

// GetAsync is GetW (w may be nil) that calls cb.
func (c *Conn) GetAsync(ctx context.Context, path string, w Watcher, cb func(data []byte, stat *Stat, err error)) {
	cl, resp, err := c.getCall(path, w)
	if err != nil {
		c.failAsync(func() { cb(nil, nil, err) })
		return
	}
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb(nil, nil, cl.err)
			return
		}
		cb(resp.Data, statFrom(&resp.Stat), nil)
	})
}

// ---- setData ----

func (c *Conn) setCall(path string, data []byte, version int32) (*call, *proto.StatResponse, error) {
	if err := checkPath(proto.OpSetData, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.StatResponse{}
	return c.newCall(proto.OpSetData, path, &proto.SetDataRequest{Path: c.root.server(path), Data: data, Version: version}, resp), resp, nil
}

// Set replaces the znode's data if its version is version (-1: any) and
// returns the new Stat.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*Stat, error) {
	cl, resp, err := c.setCall(path, data, version)
	if err != nil {
		return nil, err
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return statFrom(&resp.Stat), nil
}

// SetAsync is Set that calls cb.
func (c *Conn) SetAsync(ctx context.Context, path string, data []byte, version int32, cb func(stat *Stat, err error)) {
	cl, resp, err := c.setCall(path, data, version)
	if err != nil {
		c.failAsync(func() { cb(nil, err) })
		return
	}
	c.start(ctx, cl, func() { cb(statResult(cl, resp)) })
}

func statResult(cl *call, resp *proto.StatResponse) (*Stat, error) {
	if cl.err != nil {
		return nil, cl.err
	}
	return statFrom(&resp.Stat), nil
}

// ---- getChildren2 ----

func (c *Conn) childrenCall(path string, w Watcher) (*call, *proto.GetChildren2Response, error) {
	if err := checkPath(proto.OpGetChildren2, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.GetChildren2Response{}
	cl := c.newCall(proto.OpGetChildren2, path, &proto.GetChildren2Request{Path: c.root.server(path), Watch: w != nil}, resp)
	cl.watch, cl.watcher = watchKindIf(w, watchChild), w
	return cl, resp, nil
}

// Children returns the names of the znode's children (in no particular
// order) and its Stat.
func (c *Conn) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	return c.ChildrenW(ctx, path, nil)
}

// ChildrenW is Children that also leaves a watch for w: it fires when a
// child is created or deleted, or the znode is deleted.
func (c *Conn) ChildrenW(ctx context.Context, path string, w Watcher) ([]string, *Stat, error) {
	cl, resp, err := c.childrenCall(path, w)
	if err != nil {
		return nil, nil, err
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, nil, err
	}
	return resp.Children, statFrom(&resp.Stat), nil
}

// ChildrenAsync is ChildrenW (w may be nil) that calls cb.
func (c *Conn) ChildrenAsync(ctx context.Context, path string, w Watcher, cb func(children []string, stat *Stat, err error)) {
	cl, resp, err := c.childrenCall(path, w)
	if err != nil {
		c.failAsync(func() { cb(nil, nil, err) })
		return
	}
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb(nil, nil, cl.err)
			return
		}
		cb(resp.Children, statFrom(&resp.Stat), nil)
	})
}

// ---- getACL / setACL ----

func (c *Conn) getACLCall(path string) (*call, *proto.GetACLResponse, error) {
	if err := checkPath(proto.OpGetACL, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.GetACLResponse{}
	return c.newCall(proto.OpGetACL, path, &proto.GetACLRequest{Path: c.root.server(path)}, resp), resp, nil
}

// GetACL returns the znode's ACL and Stat.
func (c *Conn) GetACL(ctx context.Context, path string) ([]ACL, *Stat, error) {
	cl, resp, err := c.getACLCall(path)
	if err != nil {
		return nil, nil, err
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, nil, err
	}
	return aclsFromProto(resp.ACL), statFrom(&resp.Stat), nil
}

// GetACLAsync is GetACL that calls cb.
func (c *Conn) GetACLAsync(ctx context.Context, path string, cb func(acl []ACL, stat *Stat, err error)) {
	cl, resp, err := c.getACLCall(path)
	if err != nil {
		c.failAsync(func() { cb(nil, nil, err) })
		return
	}
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb(nil, nil, cl.err)
			return
		}
		cb(aclsFromProto(resp.ACL), statFrom(&resp.Stat), nil)
	})
}

func (c *Conn) setACLCall(path string, acl []ACL, version int32) (*call, *proto.StatResponse, error) {
	if err := checkPath(proto.OpSetACL, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.StatResponse{}
	return c.newCall(proto.OpSetACL, path, &proto.SetACLRequest{Path: c.root.server(path), ACL: aclsToProto(acl), Version: version}, resp), resp, nil
}

// SetACL replaces the znode's ACL if its ACL version (Stat.Aversion) is
// version (-1: any) and returns the new Stat.
func (c *Conn) SetACL(ctx context.Context, path string, acl []ACL, version int32) (*Stat, error) {
	cl, resp, err := c.setACLCall(path, acl, version)
	if err != nil {
		return nil, err
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return statFrom(&resp.Stat), nil
}

// SetACLAsync is SetACL that calls cb.
func (c *Conn) SetACLAsync(ctx context.Context, path string, acl []ACL, version int32, cb func(stat *Stat, err error)) {
	cl, resp, err := c.setACLCall(path, acl, version)
	if err != nil {
		c.failAsync(func() { cb(nil, err) })
		return
	}
	c.start(ctx, cl, func() { cb(statResult(cl, resp)) })
}

// ---- sync ----

func (c *Conn) syncCall(path string) (*call, *proto.SyncResponse, error) {
	if err := checkPath(proto.OpSync, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.SyncResponse{}
	return c.newCall(proto.OpSync, path, &proto.SyncRequest{Path: c.root.server(path)}, resp), resp, nil
}

// Sync waits until the server the Conn is connected to has applied every
// write the ensemble had committed when the server received the sync, so
// that reads after it see them. It returns the path.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	cl, resp, err := c.syncCall(path)
	if err != nil {
		return "", err
	}
	if err := c.do(ctx, cl); err != nil {
		return "", err
	}
	return c.root.client(resp.Path), nil
}

// SyncAsync is Sync that calls cb.
func (c *Conn) SyncAsync(ctx context.Context, path string, cb func(path string, err error)) {
	cl, resp, err := c.syncCall(path)
	if err != nil {
		c.failAsync(func() { cb("", err) })
		return
	}
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb("", cl.err)
			return
		}
		cb(c.root.client(resp.Path), nil)
	})
}
