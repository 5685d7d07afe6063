package zk

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// Op is one operation of a Multi or MultiRead: *CreateOp, *DeleteOp,
// *SetDataOp and *CheckOp for Multi; *GetDataOp and *GetChildrenOp for
// MultiRead.
type Op interface {
	// multiOp returns the wire form, with the path made server-side.
	multiOp(root chroot) (proto.MultiOp, error)
	opPath() string
}

// CreateOp creates a znode. TTL is needed by (and only allowed with) the TTL
// modes.
type CreateOp struct {
	Path string
	Data []byte
	ACL  []ACL
	Mode CreateMode
	TTL  time.Duration
}

// DeleteOp deletes a znode at Version (-1: any).
type DeleteOp struct {
	Path    string
	Version int32
}

// SetDataOp sets a znode's data at Version (-1: any).
type SetDataOp struct {
	Path    string
	Data    []byte
	Version int32
}

// CheckOp fails the transaction unless the znode exists at Version (-1:
// any version).
type CheckOp struct {
	Path    string
	Version int32
}

// GetDataOp reads a znode's data and Stat in a MultiRead.
type GetDataOp struct {
	Path string
}

// GetChildrenOp reads a znode's children in a MultiRead.
type GetChildrenOp struct {
	Path string
}

func (o *CreateOp) opPath() string      { return o.Path }
func (o *DeleteOp) opPath() string      { return o.Path }
func (o *SetDataOp) opPath() string     { return o.Path }
func (o *CheckOp) opPath() string       { return o.Path }
func (o *GetDataOp) opPath() string     { return o.Path }
func (o *GetChildrenOp) opPath() string { return o.Path }

func (o *CreateOp) multiOp(root chroot) (proto.MultiOp, error) {
	op := proto.OpCreate2
	switch {
	case o.Mode.IsTTL():
		op = proto.OpCreateTTL
	case o.Mode == ModeContainer:
		op = proto.OpCreateContainer
	}
	switch {
	case !o.Mode.valid():
		return proto.MultiOp{}, badArgs(op, o.Path, "unknown create mode %d", int32(o.Mode))
	case o.Mode.IsTTL() && o.TTL <= 0:
		return proto.MultiOp{}, badArgs(op, o.Path, "%s needs a positive TTL", o.Mode)
	case !o.Mode.IsTTL() && o.TTL != 0:
		return proto.MultiOp{}, badArgs(op, o.Path, "a TTL needs a TTL create mode, not %s", o.Mode)
	}
	if err := checkPath(op, o.Path, o.Mode.IsSequential()); err != nil {
		return proto.MultiOp{}, err
	}
	return proto.MultiOp{Op: op, Path: root.server(o.Path), Data: o.Data, ACL: aclsToProto(o.ACL),
		Flags: int32(o.Mode), TTL: o.TTL.Milliseconds()}, nil
}

func simpleOp(op proto.OpCode, root chroot, path string, data []byte, version int32) (proto.MultiOp, error) {
	if err := checkPath(op, path, false); err != nil {
		return proto.MultiOp{}, err
	}
	return proto.MultiOp{Op: op, Path: root.server(path), Data: data, Version: version}, nil
}

func (o *DeleteOp) multiOp(root chroot) (proto.MultiOp, error) {
	return simpleOp(proto.OpDelete, root, o.Path, nil, o.Version)
}

func (o *SetDataOp) multiOp(root chroot) (proto.MultiOp, error) {
	return simpleOp(proto.OpSetData, root, o.Path, o.Data, o.Version)
}

func (o *CheckOp) multiOp(root chroot) (proto.MultiOp, error) {
	return simpleOp(proto.OpCheck, root, o.Path, nil, o.Version)
}

func (o *GetDataOp) multiOp(root chroot) (proto.MultiOp, error) {
	return simpleOp(proto.OpGetData, root, o.Path, nil, 0)
}

func (o *GetChildrenOp) multiOp(root chroot) (proto.MultiOp, error) {
	return simpleOp(proto.OpGetChildren, root, o.Path, nil, 0)
}

// OpResult is the outcome of one operation of a Multi or MultiRead. Which
// fields are set depends on the operation:
//
//	CreateOp:      Path (the created path, with sequence number), Stat
//	SetDataOp:     Stat
//	GetDataOp:     Data, Stat
//	GetChildrenOp: Children
//	DeleteOp, CheckOp: nothing
//
// Err is set when the operation failed; in a failed Multi every operation
// has an Err: ErrRuntimeInconsistency for those after the failed one, and
// nil for those before it, which were rolled back.
type OpResult struct {
	Path     string
	Stat     *Stat
	Data     []byte
	Children []string
	Err      error
}

type multiCall struct {
	cl   *call
	ops  []Op
	resp *proto.MultiResponse
}

func (c *Conn) multiCall(op proto.OpCode, ops []Op) (*multiCall, error) {
	req := &proto.MultiRequest{Ops: make([]proto.MultiOp, len(ops))}
	for i, o := range ops {
		if o == nil {
			return nil, badArgs(op, "", "op %d is nil", i)
		}
		mo, err := o.multiOp(c.root)
		if err != nil {
			return nil, err
		}
		if op == proto.OpMulti && !proto.IsMultiWriteOp(mo.Op) || op == proto.OpMultiRead && !proto.IsMultiReadOp(mo.Op) {
			return nil, badArgs(op, o.opPath(), "op %d (%s) is not allowed in %s", i, mo.Op, op)
		}
		req.Ops[i] = mo
	}
	m := &multiCall{ops: ops, resp: &proto.MultiResponse{}}
	m.cl = c.newCall(op, "", req, m.resp)
	m.cl.onReply = func(cl *call) {
		if cl.err == nil && op == proto.OpMulti {
			cl.err = multiFailure(m.ops, m.resp.Results)
		}
	}
	return m, nil
}

// multiFailure finds the operation that made a multi fail: the first result
// with a code other than OK and RuntimeInconsistency (which marks the
// operations after the failed one).
func multiFailure(ops []Op, results []proto.MultiResult) error {
	idx := -1
	for i, r := range results {
		if r.Op != proto.OpError || r.Err == proto.ErrOK {
			continue
		}
		if idx < 0 {
			idx = i
		}
		if r.Err != proto.ErrRuntimeInconsistency {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil
	}
	me := &MultiError{Index: idx, Err: codeError(results[idx].Err)}
	if idx < len(ops) {
		me.Path = ops[idx].opPath()
		if mo, err := ops[idx].multiOp(""); err == nil {
			me.Op = mo.Op.String()
		}
	}
	return &OpError{Op: proto.OpMulti.String(), Err: me}
}

func (c *Conn) multiResults(resp *proto.MultiResponse) []OpResult {
	out := make([]OpResult, len(resp.Results))
	for i, r := range resp.Results {
		res := &out[i]
		switch r.Op {
		case proto.OpError:
			res.Err = codeError(r.Err)
		case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
			res.Path = c.root.client(r.Path)
		case proto.OpGetData:
			res.Data = r.Data
		case proto.OpGetChildren:
			res.Children = r.Children
		}
		if r.Stat != nil {
			res.Stat = statFrom(r.Stat)
		}
	}
	return out
}

// Multi runs write operations as one transaction: all of them are applied,
// in order, or none is. When one fails, the error is an *OpError wrapping a
// *MultiError that names it (errors.Is sees its cause), and the results say
// what happened to each operation.
func (c *Conn) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	return c.multi(ctx, proto.OpMulti, ops)
}

// MultiRead runs read operations (*GetDataOp, *GetChildrenOp) in one
// request; each succeeds or fails on its own, reported in its OpResult.Err.
func (c *Conn) MultiRead(ctx context.Context, ops ...Op) ([]OpResult, error) {
	return c.multi(ctx, proto.OpMultiRead, ops)
}

func (c *Conn) multi(ctx context.Context, op proto.OpCode, ops []Op) ([]OpResult, error) {
	m, err := c.multiCall(op, ops)
	if err != nil {
		return nil, err
	}
	completed, err := c.wait(ctx, m.cl)
	if !completed || m.resp.Results == nil {
		return nil, err
	}
	return c.multiResults(m.resp), err
}

// MultiAsync is Multi that calls cb.
func (c *Conn) MultiAsync(ctx context.Context, ops []Op, cb func(results []OpResult, err error)) {
	c.multiAsync(ctx, proto.OpMulti, ops, cb)
}

// MultiReadAsync is MultiRead that calls cb.
func (c *Conn) MultiReadAsync(ctx context.Context, ops []Op, cb func(results []OpResult, err error)) {
	c.multiAsync(ctx, proto.OpMultiRead, ops, cb)
}

func (c *Conn) multiAsync(ctx context.Context, op proto.OpCode, ops []Op, cb func([]OpResult, error)) {
	m, err := c.multiCall(op, ops)
	if err != nil {
		c.failAsync(func() { cb(nil, err) })
		return
	}
	c.start(ctx, m.cl, func() {
		if m.resp.Results == nil {
			cb(nil, m.cl.err)
			return
		}
		cb(c.multiResults(m.resp), m.cl.err)
	})
}

// Txn builds a Multi: chain its methods and Commit.
//
//	results, err := conn.Txn().
//		Check("/config", 4).
//		Set("/config/a", []byte("x"), -1).
//		Create("/config/b", nil, zk.OpenACL, zk.ModePersistent).
//		Commit(ctx)
type Txn struct {
	c   *Conn
	ops []Op
}

// Txn starts an empty transaction.
func (c *Conn) Txn() *Txn { return &Txn{c: c} }

// Create adds a CreateOp.
func (t *Txn) Create(path string, data []byte, acl []ACL, mode CreateMode) *Txn {
	t.ops = append(t.ops, &CreateOp{Path: path, Data: data, ACL: acl, Mode: mode})
	return t
}

// CreateTTL adds a CreateOp with a TTL mode.
func (t *Txn) CreateTTL(path string, data []byte, acl []ACL, mode CreateMode, ttl time.Duration) *Txn {
	t.ops = append(t.ops, &CreateOp{Path: path, Data: data, ACL: acl, Mode: mode, TTL: ttl})
	return t
}

// Delete adds a DeleteOp.
func (t *Txn) Delete(path string, version int32) *Txn {
	t.ops = append(t.ops, &DeleteOp{Path: path, Version: version})
	return t
}

// Set adds a SetDataOp.
func (t *Txn) Set(path string, data []byte, version int32) *Txn {
	t.ops = append(t.ops, &SetDataOp{Path: path, Data: data, Version: version})
	return t
}

// Check adds a CheckOp.
func (t *Txn) Check(path string, version int32) *Txn {
	t.ops = append(t.ops, &CheckOp{Path: path, Version: version})
	return t
}

// Ops returns the operations added so far.
func (t *Txn) Ops() []Op { return t.ops }

// Commit runs the transaction (Multi).
func (t *Txn) Commit(ctx context.Context) ([]OpResult, error) {
	return t.c.Multi(ctx, t.ops...)
}

// CommitAsync runs the transaction (MultiAsync).
func (t *Txn) CommitAsync(ctx context.Context, cb func(results []OpResult, err error)) {
	t.c.MultiAsync(ctx, t.ops, cb)
}
