package server

import (
	"strings"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/watch"
)

// read answers a request that does not change the replicated state. It holds
// the state lock while it reads, registers watches and queues the reply, so
// no event for a later change can overtake the reply (see the package doc).
func (s *Server) read(c *conn, it *item) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	hdr := proto.ReplyHeader{Xid: it.xid, Zxid: s.fsm.LastZxid()}
	r := readReply{tree: s.fsm.Tree()}
	hdr.Err = s.readOp(c, it, &r)
	c.sendReply(hdr, &r)
}

// readReply is a read's response. The common ones (a stat, getData,
// getChildren and getChildren2) are kept as the node they answer from and
// encoded by append straight into the connection's outbound queue, with
// the state lock still held, so answering them allocates nothing; any
// other is a proto.Response in resp.
type readReply struct {
	kind replyKind
	node *tree.Node
	tree *tree.Tree // node's tree, whose Stat classifies it
	resp proto.Response
}

type replyKind uint8

const (
	replyResp      replyKind = iota // resp, nil for an empty body
	replyStat                       // StatResponse of node
	replyData                       // GetDataResponse of node
	replyChildren                   // GetChildrenResponse of node
	replyChildren2                  // GetChildren2Response of node
)

// append appends the response's jute encoding to b.
func (r *readReply) append(b []byte) []byte {
	switch r.kind {
	case replyStat:
		st := proto.StatResponse{Stat: r.tree.Stat(r.node)}
		return st.Append(b)
	case replyData:
		gd := proto.GetDataResponse{Data: r.node.Data, Stat: r.tree.Stat(r.node)}
		return gd.Append(b)
	case replyChildren:
		return appendChildren(b, r.node)
	case replyChildren2:
		b = appendChildren(b, r.node)
		st := r.tree.Stat(r.node)
		return st.Append(b)
	}
	if r.resp == nil {
		return b
	}
	return r.resp.Append(b)
}

// appendChildren appends n's child names as a jute vector<ustring>, as
// proto.AppendStrings(b, n.Children()) does, without building the slice.
func appendChildren(b []byte, n *tree.Node) []byte {
	b = proto.AppendVectorLen(b, n.NumChildren(), false)
	n.EachChild(func(name string, _ *tree.Node) { b = proto.AppendString(b, name) })
	return b
}

// readOp runs a read and sets its response in out.
func (s *Server) readOp(c *conn, it *item, out *readReply) proto.ErrCode {
	resp, code := s.readResp(c, it, out)
	if resp != nil {
		out.resp = resp
	}
	return code
}

// readResp runs a read. It returns the response, or sets it in out for the
// kinds readReply encodes itself.
func (s *Server) readResp(c *conn, it *item, out *readReply) (proto.Response, proto.ErrCode) {
	t := s.fsm.Tree()
	auth := it.auth // as the connection was when the request came
	switch r := it.req.(type) {
	case *proto.ExistsRequest:
		if strings.IndexByte(r.Path, 0) >= 0 {
			return nil, proto.ErrBadArguments
		}
		n := lookup(t, r.Path)
		if n == nil {
			// The watch is set even though the node is missing: it fires on
			// creation.
			if r.Watch {
				s.addWatch(r.Path, watch.Data, c)
			}
			return nil, proto.ErrNoNode
		}
		if !acl.Allowed(t.ACL(n), proto.PermRead, auth) {
			return nil, proto.ErrNoAuth
		}
		if r.Watch {
			s.addWatch(r.Path, watch.Data, c)
		}
		out.kind, out.node = replyStat, n
		return nil, proto.ErrOK
	case *proto.GetDataRequest:
		n, code := s.readable(t, r.Path, proto.PermRead, auth)
		if code != proto.ErrOK {
			return nil, code
		}
		if r.Watch {
			s.addWatch(r.Path, watch.Data, c)
		}
		out.kind, out.node = replyData, n
		return nil, proto.ErrOK
	case *proto.GetChildrenRequest:
		n, code := s.readable(t, r.Path, proto.PermRead, auth)
		if code != proto.ErrOK {
			return nil, code
		}
		if r.Watch {
			s.addWatch(r.Path, watch.Child, c)
		}
		out.kind, out.node = replyChildren, n
		return nil, proto.ErrOK
	case *proto.GetChildren2Request:
		n, code := s.readable(t, r.Path, proto.PermRead, auth)
		if code != proto.ErrOK {
			return nil, code
		}
		if r.Watch {
			s.addWatch(r.Path, watch.Child, c)
		}
		out.kind, out.node = replyChildren2, n
		return nil, proto.ErrOK
	case *proto.GetACLRequest:
		n, code := s.readable(t, r.Path, proto.PermRead|proto.PermAdmin, auth)
		if code != proto.ErrOK {
			return nil, code
		}
		list := t.ACL(n)
		if !acl.Allowed(list, proto.PermAdmin, auth) {
			// Without ADMIN the digest hashes are masked, as ZooKeeper does.
			masked := make([]proto.ACL, len(list))
			for i, a := range list {
				if a.ID.Scheme == acl.Digest {
					if j := strings.IndexByte(a.ID.ID, ':'); j >= 0 {
						a.ID.ID = a.ID.ID[:j] + ":x"
					}
				}
				masked[i] = a
			}
			list = masked
		}
		return &proto.GetACLResponse{ACL: list, Stat: t.Stat(n)}, proto.ErrOK
	case *proto.SyncRequest:
		// In standalone every write this session made is applied by the time
		// the responder reaches the sync.
		return &proto.SyncResponse{Path: r.Path}, proto.ErrOK
	case *proto.GetEphemeralsRequest:
		all := t.Ephemerals(c.sessionID)
		prefix := javaTrim(r.PrefixPath)
		out := make([]string, 0, len(all))
		for _, p := range all {
			if prefix == "" || prefix == "/" || strings.HasPrefix(p, r.PrefixPath) {
				out = append(out, p)
			}
		}
		return &proto.GetEphemeralsResponse{Ephemerals: out}, proto.ErrOK
	case *proto.GetAllChildrenNumberRequest:
		n, code := s.readable(t, r.Path, proto.PermRead, auth)
		if code != proto.ErrOK {
			return nil, code
		}
		total := tree.CountDescendants(n)
		if r.Path == "" {
			// DataTree.getAllChildrenNumber special-cases "/" alone; for
			// "" it counts the node keys starting with "/", the root's own
			// "/" key among them.
			total++
		}
		return &proto.GetAllChildrenNumberResponse{TotalNumber: int32(total)}, proto.ErrOK
	case *proto.CheckWatchesRequest:
		if !validWatcherType(r.Type) {
			return nil, proto.ErrMarshallingError
		}
		if !s.watches.Contains(c, r.Path, r.Type) {
			return nil, proto.ErrNoWatcher
		}
		return nil, proto.ErrOK
	case *proto.RemoveWatchesRequest:
		if !validWatcherType(r.Type) {
			return nil, proto.ErrMarshallingError
		}
		if !s.watches.Remove(c, r.Path, r.Type) {
			return nil, proto.ErrNoWatcher
		}
		return nil, proto.ErrOK
	case *proto.AddWatchRequest:
		kind, err := watch.ParseAddWatchMode(r.Mode)
		if err != nil {
			// ZooKeeper fails to map the mode and answers MARSHALLINGERROR.
			return nil, proto.ErrMarshallingError
		}
		s.addWatch(r.Path, kind, c)
		return &proto.ErrorResponse{Err: proto.ErrOK}, proto.ErrOK
	case *proto.SetWatches:
		return nil, s.setWatches(c, r.RelativeZxid, r.DataWatches, r.ExistWatches, r.ChildWatches, noPaths, noPaths)
	case *proto.SetWatches2:
		return nil, s.setWatches(c, r.RelativeZxid, r.DataWatches, r.ExistWatches, r.ChildWatches,
			r.PersistentWatches, r.PersistentRecursiveWatches)
	case *proto.MultiRequest:
		if it.op == proto.OpMulti {
			// A multi comes here only when writeEntry made no entry of it:
			// ZooKeeper cannot decode one of its creates and fails the
			// whole request.
			return nil, proto.ErrMarshallingError
		}
		return s.multiRead(auth, r), proto.ErrOK
	case *proto.Empty:
		if it.op == proto.OpWhoAmI {
			return whoAmI(auth), proto.ErrOK
		}
	}
	return nil, proto.ErrUnimplemented
}

// javaTrim is Java's String.trim, with which ZooKeeper decides whether a
// getEphemerals prefix is empty: it strips the characters up to U+0020
// (the space and every control character before it) from both ends, and
// nothing else.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// lookup finds a node for a read. ZooKeeper's node table holds the root
// under "" as well as "/", so reads of "" see the root.
func lookup(t *tree.Tree, path string) *tree.Node {
	if path == "" {
		return t.Get("/")
	}
	return t.Get(path)
}

func validWatcherType(w proto.WatcherType) bool {
	return w >= proto.WatcherChildren && w <= proto.WatcherPersistentRecursive
}

// readable looks a node up and checks perm against its ACL.
func (s *Server) readable(t *tree.Tree, path string, perm int32, auth []proto.ID) (*tree.Node, proto.ErrCode) {
	n := lookup(t, path)
	if n == nil {
		return nil, proto.ErrNoNode
	}
	if !acl.Allowed(t.ACL(n), perm, auth) {
		return nil, proto.ErrNoAuth
	}
	return n, proto.ErrOK
}

func (s *Server) multiRead(auth []proto.ID, r *proto.MultiRequest) *proto.MultiResponse {
	t := s.fsm.Tree()
	out := &proto.MultiResponse{Results: make([]proto.MultiResult, len(r.Ops))}
	for i, op := range r.Ops {
		n, code := s.readable(t, op.Path, proto.PermRead, auth)
		if code != proto.ErrOK {
			out.Results[i] = proto.MultiResult{Op: proto.OpError, Err: code}
			continue
		}
		st := t.Stat(n)
		if op.Op == proto.OpGetData {
			out.Results[i] = proto.MultiResult{Op: op.Op, Data: n.Data, Stat: &st}
		} else {
			out.Results[i] = proto.MultiResult{Op: op.Op, Children: n.Children()}
		}
	}
	return out
}

// addWatch registers c's watch. From then on apply queues c's write
// replies itself, in the log's order with c's events (see Server.Apply):
// a connection that never set a watch gets no events to order them with,
// and its responder queues them, off the apply loop.
func (s *Server) addWatch(path string, kind watch.Kind, c *conn) bool {
	c.watched.Store(true)
	return s.watches.Add(path, kind, c)
}

// whoAmI lists the connection's identities as ZooKeeper reports them: the
// user name for digest, the address for ip, and super with an empty user.
func whoAmI(auth []proto.ID) *proto.WhoAmIResponse {
	out := &proto.WhoAmIResponse{ClientInfo: make([]proto.ClientInfo, 0, len(auth))}
	for _, id := range auth {
		user := id.ID
		switch id.Scheme {
		case acl.Digest:
			if i := strings.IndexByte(user, ':'); i >= 0 {
				user = user[:i]
			}
		}
		out.ClientInfo = append(out.ClientInfo, proto.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	return out
}

// setWatches re-registers a reconnecting client's watches with ZooKeeper's
// relativeZxid rules (DataTree.setWatches): a watch whose event the client
// missed fires at once (zxid -1), the others are armed again. Persistent
// watches are only re-armed. The events fired here are not filtered by the
// node's ACL, as ZooKeeper's are not (it hands them to the connection
// without an ACL to check): a watch that fires is not armed again, so
// dropping its event would lose the watch without a word.
//
// A null list (vector count -1, decoded as nil) is where ZooKeeper's loop
// over it fails: the lists before it have taken effect, the ones from it
// on have not, and the answer is MARSHALLINGERROR on a connection that
// stays open. setWatches (101) has no persistent lists; its caller passes
// noPaths for them.
func (s *Server) setWatches(c *conn, rel int64, data, exist, child, persistent, recursive []string) proto.ErrCode {
	t := s.fsm.Tree()
	fire := func(typ proto.EventType, path string) {
		c.Notify(proto.WatcherEvent{Type: typ, State: proto.StateSyncConnected, Path: path}, -1)
	}
	if data == nil {
		return proto.ErrMarshallingError
	}
	for _, p := range data {
		n := lookup(t, p)
		switch {
		case n == nil:
			fire(proto.EventNodeDeleted, p)
		case n.Mzxid > rel:
			fire(proto.EventNodeDataChanged, p)
		default:
			s.addWatch(p, watch.Data, c)
		}
	}
	if exist == nil {
		return proto.ErrMarshallingError
	}
	for _, p := range exist {
		if n := lookup(t, p); n != nil {
			fire(proto.EventNodeCreated, p)
		} else {
			s.addWatch(p, watch.Data, c)
		}
	}
	if child == nil {
		return proto.ErrMarshallingError
	}
	for _, p := range child {
		n := lookup(t, p)
		switch {
		case n == nil:
			fire(proto.EventNodeDeleted, p)
		case n.Pzxid > rel:
			fire(proto.EventNodeChildrenChanged, p)
		default:
			s.addWatch(p, watch.Child, c)
		}
	}
	if persistent == nil {
		return proto.ErrMarshallingError
	}
	for _, p := range persistent {
		s.addWatch(p, watch.Persistent, c)
	}
	if recursive == nil {
		return proto.ErrMarshallingError
	}
	for _, p := range recursive {
		s.addWatch(p, watch.PersistentRecursive, c)
	}
	return proto.ErrOK
}

// noPaths is an empty, non-null list of watched paths.
var noPaths = []string{}
