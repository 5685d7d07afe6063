package difftest

import (
	"fmt"
	"strings"

	"github.com/paddockhq/paddock/internal/proto"
)

// opNames maps script command names to opcodes.
var opNames = map[string]proto.OpCode{
	"create": proto.OpCreate, "create2": proto.OpCreate2, "createcontainer": proto.OpCreateContainer,
	"createttl": proto.OpCreateTTL, "delete": proto.OpDelete, "exists": proto.OpExists,
	"get": proto.OpGetData, "set": proto.OpSetData, "getacl": proto.OpGetACL, "setacl": proto.OpSetACL,
	"ls": proto.OpGetChildren, "ls2": proto.OpGetChildren2, "sync": proto.OpSync, "check": proto.OpCheck,
	"multi": proto.OpMulti, "multiread": proto.OpMultiRead, "checkwatches": proto.OpCheckWatches,
	"removewatches": proto.OpRemoveWatches, "auth": proto.OpAuth, "setwatches": proto.OpSetWatches,
	"setwatches2": proto.OpSetWatches2, "getephemerals": proto.OpGetEphemerals,
	"allchildren": proto.OpGetAllChildrenNumber, "addwatch": proto.OpAddWatch, "whoami": proto.OpWhoAmI,
	"deletecontainer": proto.OpDeleteContainer,
}

// build turns a request step into an opcode, an encoded body and an xid.
// "request <op> [hex]" sends any opcode with a raw body.
func (r *runner) build(c *client, st Step) (proto.OpCode, []byte, int32, error) {
	if st.Cmd == "request" {
		if len(st.Args) < 1 || len(st.Args) > 2 {
			return 0, nil, 0, fmt.Errorf("want: request <opcode> [hex body]")
		}
		op, err := parseInt32("opcode", st.Args[0])
		if err != nil {
			return 0, nil, 0, err
		}
		var body []byte
		if len(st.Args) == 2 {
			if body, err = r.hexWithPaths(st.Args[1].Text); err != nil {
				return 0, nil, 0, err
			}
		}
		return proto.OpCode(op), body, c.allocXid(), nil
	}
	op, ok := opNames[st.Cmd]
	if !ok {
		return 0, nil, 0, fmt.Errorf("unknown command %q", st.Cmd)
	}
	req, err := r.request(c, op, st.Args)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("%s: %w", st.Cmd, err)
	}
	var body []byte
	if req != nil {
		body = req.Append(nil)
	}
	var xid int32
	switch op {
	case proto.OpAuth:
		xid = proto.XidAuth
	case proto.OpSetWatches, proto.OpSetWatches2:
		xid = proto.XidSetWatches
	default:
		xid = c.allocXid()
	}
	return op, body, xid, nil
}

// nargs checks the number of arguments.
func nargs(args []Token, lo, hi int, usage string) error {
	if len(args) < lo || len(args) > hi {
		return fmt.Errorf("want: %s", usage)
	}
	return nil
}

// request builds the request record of a step.
func (r *runner) request(c *client, op proto.OpCode, args []Token) (proto.Request, error) {
	root := r.opts.Root
	path := func() (string, error) { return ResolvePath(root, args[0]) }
	switch op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		m, err := r.createOp(op, args)
		if err != nil {
			return nil, err
		}
		if op == proto.OpCreateTTL {
			return &proto.CreateTTLRequest{Path: m.Path, Data: m.Data, ACL: m.ACL, Flags: m.Flags, TTL: m.TTL}, nil
		}
		return &proto.CreateRequest{Path: m.Path, Data: m.Data, ACL: m.ACL, Flags: m.Flags}, nil
	case proto.OpDelete, proto.OpCheck:
		m, err := r.versionOp(op, args)
		if err != nil {
			return nil, err
		}
		if op == proto.OpDelete {
			return &proto.DeleteRequest{Path: m.Path, Version: m.Version}, nil
		}
		return &proto.CheckVersionRequest{Path: m.Path, Version: m.Version}, nil
	case proto.OpExists, proto.OpGetData, proto.OpGetChildren, proto.OpGetChildren2:
		if err := nargs(args, 1, 2, "<path> [watch]"); err != nil {
			return nil, err
		}
		p, err := path()
		if err != nil {
			return nil, err
		}
		watch := false
		if len(args) == 2 {
			if args[1].Text != "watch" {
				return nil, fmt.Errorf("second argument %q: only \"watch\" is allowed", args[1].Text)
			}
			watch = true
		}
		switch op {
		case proto.OpExists:
			return &proto.ExistsRequest{Path: p, Watch: watch}, nil
		case proto.OpGetData:
			return &proto.GetDataRequest{Path: p, Watch: watch}, nil
		case proto.OpGetChildren:
			return &proto.GetChildrenRequest{Path: p, Watch: watch}, nil
		}
		return &proto.GetChildren2Request{Path: p, Watch: watch}, nil
	case proto.OpSetData:
		m, err := r.setOp(args)
		if err != nil {
			return nil, err
		}
		return &proto.SetDataRequest{Path: m.Path, Data: m.Data, Version: m.Version}, nil
	case proto.OpGetACL, proto.OpSync, proto.OpGetEphemerals, proto.OpGetAllChildrenNumber, proto.OpDeleteContainer:
		if err := nargs(args, 1, 1, "<path>"); err != nil {
			return nil, err
		}
		p, err := path()
		if err != nil {
			return nil, err
		}
		switch op {
		case proto.OpGetACL:
			return &proto.GetACLRequest{Path: p}, nil
		case proto.OpSync:
			return &proto.SyncRequest{Path: p}, nil
		case proto.OpGetEphemerals:
			return &proto.GetEphemeralsRequest{PrefixPath: p}, nil
		case proto.OpDeleteContainer:
			return &proto.DeleteContainerRequest{Path: p}, nil
		}
		return &proto.GetAllChildrenNumberRequest{Path: p}, nil
	case proto.OpSetACL:
		if err := nargs(args, 3, 3, "<path> <acl> <version>"); err != nil {
			return nil, err
		}
		p, err := path()
		if err != nil {
			return nil, err
		}
		acl, err := ParseACLs(args[1])
		if err != nil {
			return nil, err
		}
		v, err := parseInt32("version", args[2])
		if err != nil {
			return nil, err
		}
		return &proto.SetACLRequest{Path: p, ACL: acl, Version: v}, nil
	case proto.OpMulti, proto.OpMultiRead:
		m := &proto.MultiRequest{}
		for _, g := range args {
			if !g.IsList || len(g.Group) == 0 {
				return nil, fmt.Errorf("multi operand %s: want [<op> args...]", g)
			}
			mop, err := r.multiOp(g.Group)
			if err != nil {
				return nil, fmt.Errorf("multi operand %s: %w", g, err)
			}
			m.Ops = append(m.Ops, mop)
		}
		return m, nil
	case proto.OpCheckWatches, proto.OpRemoveWatches:
		if err := nargs(args, 2, 2, "<path> <children|data|any|persistent|recursive|n>"); err != nil {
			return nil, err
		}
		p, err := path()
		if err != nil {
			return nil, err
		}
		w, err := ParseWatcherType(args[1])
		if err != nil {
			return nil, err
		}
		if op == proto.OpCheckWatches {
			return &proto.CheckWatchesRequest{Path: p, Type: w}, nil
		}
		return &proto.RemoveWatchesRequest{Path: p, Type: w}, nil
	case proto.OpAddWatch:
		if err := nargs(args, 2, 2, "<path> <persistent|recursive|n>"); err != nil {
			return nil, err
		}
		p, err := path()
		if err != nil {
			return nil, err
		}
		mode, err := ParseAddWatchMode(args[1])
		if err != nil {
			return nil, err
		}
		return &proto.AddWatchRequest{Path: p, Mode: mode}, nil
	case proto.OpAuth:
		if err := nargs(args, 2, 2, "<scheme> <data>"); err != nil {
			return nil, err
		}
		data, err := ParseData(args[1])
		if err != nil {
			return nil, err
		}
		return &proto.AuthPacket{Scheme: args[0].Text, Auth: data}, nil
	case proto.OpSetWatches, proto.OpSetWatches2:
		return r.setWatches(op, args)
	case proto.OpWhoAmI:
		return nil, nargs(args, 0, 0, "whoami")
	}
	return nil, fmt.Errorf("no builder for %v", op)
}

// createOp parses "<path> <data> [mode] [acl]" (createttl: "<path> <data>
// <mode> <ttl> [acl]"). The mode defaults to persistent (container for
// createcontainer) and the ACL to open.
func (r *runner) createOp(op proto.OpCode, args []Token) (proto.MultiOp, error) {
	m := proto.MultiOp{Op: op}
	usage := "<path> <data> [mode] [acl]"
	lo, hi := 2, 4
	if op == proto.OpCreateTTL {
		usage, lo, hi = "<path> <data> <mode> <ttl> [acl]", 4, 5
	}
	if err := nargs(args, lo, hi, usage); err != nil {
		return m, err
	}
	var err error
	if m.Path, err = ResolvePath(r.opts.Root, args[0]); err != nil {
		return m, err
	}
	if m.Data, err = ParseData(args[1]); err != nil {
		return m, err
	}
	if op == proto.OpCreateContainer {
		m.Flags = proto.FlagContainer
	}
	if len(args) > 2 {
		if m.Flags, err = ParseMode(args[2]); err != nil {
			return m, err
		}
	}
	rest := args[min(3, len(args)):]
	if op == proto.OpCreateTTL {
		if m.TTL, err = parseInt64("ttl", args[3]); err != nil {
			return m, err
		}
		rest = args[4:]
	}
	m.ACL = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	if len(rest) == 1 {
		if m.ACL, err = ParseACLs(rest[0]); err != nil {
			return m, err
		}
	}
	return m, nil
}

// versionOp parses "<path> <version>" for delete and check.
func (r *runner) versionOp(op proto.OpCode, args []Token) (proto.MultiOp, error) {
	m := proto.MultiOp{Op: op}
	if err := nargs(args, 2, 2, "<path> <version>"); err != nil {
		return m, err
	}
	var err error
	if m.Path, err = ResolvePath(r.opts.Root, args[0]); err != nil {
		return m, err
	}
	m.Version, err = parseInt32("version", args[1])
	return m, err
}

// setOp parses "<path> <data> <version>".
func (r *runner) setOp(args []Token) (proto.MultiOp, error) {
	m := proto.MultiOp{Op: proto.OpSetData}
	if err := nargs(args, 3, 3, "<path> <data> <version>"); err != nil {
		return m, err
	}
	var err error
	if m.Path, err = ResolvePath(r.opts.Root, args[0]); err != nil {
		return m, err
	}
	if m.Data, err = ParseData(args[1]); err != nil {
		return m, err
	}
	m.Version, err = parseInt32("version", args[2])
	return m, err
}

// multiOp parses one [op args...] operand of multi or multiread.
func (r *runner) multiOp(g []Token) (proto.MultiOp, error) {
	op, ok := opNames[g[0].Text]
	if !ok {
		return proto.MultiOp{}, fmt.Errorf("unknown op %q", g[0].Text)
	}
	args := g[1:]
	switch op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		return r.createOp(op, args)
	case proto.OpDelete, proto.OpCheck:
		return r.versionOp(op, args)
	case proto.OpSetData:
		return r.setOp(args)
	case proto.OpGetData, proto.OpGetChildren:
		if err := nargs(args, 1, 1, "<path>"); err != nil {
			return proto.MultiOp{}, err
		}
		p, err := ResolvePath(r.opts.Root, args[0])
		return proto.MultiOp{Op: op, Path: p}, err
	}
	return proto.MultiOp{}, fmt.Errorf("op %q cannot be encoded in a multi", g[0].Text)
}

// setWatches parses "<relzxid|client> [data=p,...] [exist=...]
// [child=...]" and, for setwatches2, "[persistent=...] [recursive=...]".
// A client name as relzxid stands for the last zxid that client saw.
func (r *runner) setWatches(op proto.OpCode, args []Token) (proto.Request, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("want: <relzxid|client> [data=...] [exist=...] [child=...]")
	}
	var rel int64
	if other, ok := r.clients[args[0].Text]; ok {
		rel = other.lastZxid
	} else {
		v, err := parseInt64("relzxid", args[0])
		if err != nil {
			return nil, err
		}
		rel = v
	}
	lists := map[string][]string{}
	for _, a := range args[1:] {
		key, val, ok := strings.Cut(a.Text, "=")
		if !ok {
			return nil, fmt.Errorf("argument %q: want kind=path,path", a.Text)
		}
		var paths []string
		if val != "" {
			for _, p := range strings.Split(val, ",") {
				rp, err := ResolvePath(r.opts.Root, Token{Text: p})
				if err != nil {
					return nil, err
				}
				paths = append(paths, rp)
			}
		}
		lists[key] = append(lists[key], paths...)
	}
	for k := range lists {
		switch k {
		case "data", "exist", "child":
		case "persistent", "recursive":
			if op == proto.OpSetWatches {
				return nil, fmt.Errorf("setwatches has no %s= list (use setwatches2)", k)
			}
		default:
			return nil, fmt.Errorf("unknown watch list %q", k)
		}
	}
	nonNil := func(ss []string) []string {
		if ss == nil {
			return []string{}
		}
		return ss
	}
	if op == proto.OpSetWatches {
		return &proto.SetWatches{RelativeZxid: rel, DataWatches: nonNil(lists["data"]),
			ExistWatches: nonNil(lists["exist"]), ChildWatches: nonNil(lists["child"])}, nil
	}
	return &proto.SetWatches2{RelativeZxid: rel, DataWatches: nonNil(lists["data"]),
		ExistWatches: nonNil(lists["exist"]), ChildWatches: nonNil(lists["child"]),
		PersistentWatches: nonNil(lists["persistent"]), PersistentRecursiveWatches: nonNil(lists["recursive"])}, nil
}

// hexWithPaths decodes hex digits ('_' separates them) in which
// "{path}" stands for the jute encoding (length and bytes) of a script
// path, resolved like any other, and "<...>" wraps bytes in a frame (a
// 4-byte length prefix computed from what the brackets enclose).
func (r *runner) hexWithPaths(s string) ([]byte, error) {
	var out []byte
	var frames []int // offsets of open frames' length placeholders
	for len(s) > 0 {
		i := strings.IndexAny(s, "{<>")
		if i < 0 {
			i = len(s)
		}
		b, err := ParseHex(s[:i])
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		if i == len(s) {
			break
		}
		switch s[i] {
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("hex %q: '{' without '}'", s)
			}
			p, err := ResolvePath(r.opts.Root, Token{Text: s[i+1 : i+end]})
			if err != nil {
				return nil, err
			}
			out = proto.AppendString(out, p)
			s = s[i+end+1:]
			continue
		case '<':
			var at int
			out, at = proto.StartFrame(out)
			frames = append(frames, at)
		case '>':
			if len(frames) == 0 {
				return nil, fmt.Errorf("hex %q: '>' without '<'", s)
			}
			if err := proto.FinishFrame(out, frames[len(frames)-1]); err != nil {
				return nil, err
			}
			frames = frames[:len(frames)-1]
		}
		s = s[i+1:]
	}
	if len(frames) > 0 {
		return nil, fmt.Errorf("hex: '<' without '>'")
	}
	return out, nil
}
