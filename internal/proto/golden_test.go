package proto

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The golden files in testdata were captured from Apache ZooKeeper 3.8
// by internal/capture (see testdata/README.md). Each holds one frame as
// the server sent it, length prefix included. Zxids and times vary
// between captures, so the checks below assert what is deterministic and
// compare bytes only by re-encoding the decoded file itself.

// goldenReply describes a captured reply: the opcode of the request it
// answers (OpNotification for events), its xid and error code, and a
// check of the decoded body (nil when there is none to check).
type goldenReply struct {
	op    OpCode
	xid   int32
	err   ErrCode
	check func(t *testing.T, h ReplyHeader, r Response)
}

func goldenReplies() map[string]goldenReply {
	openACL := []ACL{{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyone"}}}
	golden := []string{"c2", "container", "eph", "seq-0000000001", "ttl"}
	event := func(typ EventType, path string) goldenReply {
		return goldenReply{op: OpNotification, xid: XidNotification, check: func(t *testing.T, h ReplyHeader, r Response) {
			want := &WatcherEvent{Type: typ, State: StateSyncConnected, Path: path}
			if !reflect.DeepEqual(r, want) {
				t.Errorf("event %+v, want %+v", r, want)
			}
			if h.Zxid != -1 { // 3.8 sends no zxid with events (3.9 sends the txn's)
				t.Errorf("event zxid %d, want -1", h.Zxid)
			}
		}}
	}
	empty := func(op OpCode, xid int32) goldenReply {
		return goldenReply{op: op, xid: xid, check: func(t *testing.T, _ ReplyHeader, r Response) {
			if _, ok := r.(*Empty); !ok {
				t.Errorf("body %T, want *Empty", r)
			}
		}}
	}
	failed := func(op OpCode, xid int32, code ErrCode) goldenReply {
		return goldenReply{op: op, xid: xid, err: code}
	}
	return map[string]goldenReply{
		"create": {op: OpCreate, xid: 1, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &CreateResponse{Path: "/golden"})
		}},
		"create_nodeexists": failed(OpCreate, 2, ErrNodeExists),
		"create2": {op: OpCreate2, xid: 3, check: func(t *testing.T, h ReplyHeader, r Response) {
			c := r.(*Create2Response)
			if c.Path != "/golden/c2" || c.Stat.DataLength != 0 || c.Stat.Version != 0 || c.Stat.NumChildren != 0 {
				t.Errorf("got %+v", c)
			}
			if c.Stat.Czxid != h.Zxid || c.Stat.Mzxid != h.Zxid || c.Stat.Pzxid != h.Zxid || c.Stat.Ctime == 0 {
				t.Errorf("stat %+v does not match the create zxid %d", c.Stat, h.Zxid)
			}
		}},
		"create2_sequential": {op: OpCreate2, xid: 4, check: func(t *testing.T, _ ReplyHeader, r Response) {
			c := r.(*Create2Response)
			if c.Path != "/golden/seq-0000000001" || c.Stat.DataLength != 1 {
				t.Errorf("got %+v", c)
			}
		}},
		"create_container": {op: OpCreateContainer, xid: 5, check: func(t *testing.T, _ ReplyHeader, r Response) {
			c := r.(*Create2Response)
			if c.Path != "/golden/container" || c.Stat.EphemeralOwner != 0 {
				t.Errorf("got %+v (clients see ephemeralOwner 0 for containers)", c)
			}
		}},
		"create_ttl": {op: OpCreateTTL, xid: 6, check: func(t *testing.T, _ ReplyHeader, r Response) {
			c := r.(*Create2Response)
			if c.Path != "/golden/ttl" || c.Stat.EphemeralOwner != 0 || c.Stat.DataLength != 1 {
				t.Errorf("got %+v (clients see ephemeralOwner 0 for TTL nodes)", c)
			}
		}},
		"create_ephemeral": {op: OpCreate, xid: 7, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &CreateResponse{Path: "/golden/eph"})
		}},
		"exists": {op: OpExists, xid: 8, check: func(t *testing.T, _ ReplyHeader, r Response) {
			s := r.(*StatResponse).Stat
			if s.DataLength != 5 || s.NumChildren != 5 || s.Version != 0 || s.Cversion != 5 {
				t.Errorf("stat %+v", s)
			}
		}},
		"exists_nonode": failed(OpExists, 9, ErrNoNode),
		"getdata": {op: OpGetData, xid: 10, check: func(t *testing.T, _ ReplyHeader, r Response) {
			g := r.(*GetDataResponse)
			if string(g.Data) != "hello" || g.Stat.DataLength != 5 || g.Stat.Version != 0 {
				t.Errorf("got %+v", g)
			}
		}},
		"setdata_event0": event(EventNodeDataChanged, "/golden"),
		"setdata": {op: OpSetData, xid: 11, check: func(t *testing.T, h ReplyHeader, r Response) {
			s := r.(*StatResponse).Stat
			if s.Version != 1 || s.Mzxid != h.Zxid || s.DataLength != 5 {
				t.Errorf("stat %+v, reply zxid %d", s, h.Zxid)
			}
		}},
		"setdata_badversion": failed(OpSetData, 12, ErrBadVersion),
		"getchildren": {op: OpGetChildren, xid: 13, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, sorted(r.(*GetChildrenResponse).Children), golden)
		}},
		"getchildren2": {op: OpGetChildren2, xid: 14, check: func(t *testing.T, _ ReplyHeader, r Response) {
			g := r.(*GetChildren2Response)
			wantEqual(t, sorted(g.Children), golden)
			if g.Stat.NumChildren != 5 {
				t.Errorf("stat %+v", g.Stat)
			}
		}},
		"getacl": {op: OpGetACL, xid: 15, check: func(t *testing.T, _ ReplyHeader, r Response) {
			g := r.(*GetACLResponse)
			wantEqual(t, g.ACL, openACL)
			if g.Stat.Aversion != 0 || g.Stat.Version != 1 {
				t.Errorf("stat %+v", g.Stat)
			}
		}},
		"setacl": {op: OpSetACL, xid: 16, check: func(t *testing.T, _ ReplyHeader, r Response) {
			if s := r.(*StatResponse).Stat; s.Aversion != 1 {
				t.Errorf("stat %+v", s)
			}
		}},
		"getacl_two": {op: OpGetACL, xid: 17, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r.(*GetACLResponse).ACL, []ACL{openACL[0], {Perms: PermRead, ID: ID{Scheme: "ip", ID: "127.0.0.1"}}})
		}},
		"sync": {op: OpSync, xid: 18, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &SyncResponse{Path: "/golden"})
		}},
		"getallchildrennumber": {op: OpGetAllChildrenNumber, xid: 19, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &GetAllChildrenNumberResponse{TotalNumber: 5})
		}},
		"getephemerals": {op: OpGetEphemerals, xid: 20, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &GetEphemeralsResponse{Ephemerals: []string{"/golden/eph"}})
		}},
		"auth": empty(OpAuth, XidAuth),
		"whoami": {op: OpWhoAmI, xid: 21, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}, {"digest", "user"}}})
		}},
		"addwatch": {op: OpAddWatch, xid: 22, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &ErrorResponse{Err: ErrOK})
		}},
		"checkwatches":            empty(OpCheckWatches, 23),
		"removewatches_nowatcher": failed(OpRemoveWatches, 24, ErrNoWatcher),
		"removewatches":           empty(OpRemoveWatches, 25),
		"multi": {op: OpMulti, xid: 26, check: func(t *testing.T, h ReplyHeader, r Response) {
			res := r.(*MultiResponse).Results
			ops := make([]OpCode, len(res))
			for i := range res {
				ops[i] = res[i].Op
			}
			// ZooKeeper 3.8 answers create2 inside a multi as a plain create
			// (ZOOKEEPER-4026 changed that in 3.9); container and TTL creates
			// answer as create2.
			wantEqual(t, ops, []OpCode{OpCreate, OpCreate, OpCreate2, OpCreate2, OpSetData, OpCheck, OpDelete})
			if len(res) != 7 {
				return
			}
			if res[0].Path != "/golden/m1" || res[1].Path != "/golden/m2" || res[2].Path != "/golden/mc" || res[3].Path != "/golden/mt" {
				t.Errorf("paths %+v", res)
			}
			for _, i := range []int{2, 3, 4} {
				if res[i].Stat == nil || res[i].Stat.Mzxid != h.Zxid {
					t.Errorf("result %d stat %+v, want mzxid %d (one zxid for the whole multi)", i, res[i].Stat, h.Zxid)
				}
			}
			if res[4].Stat.Version != 1 || res[4].Stat.DataLength != 2 {
				t.Errorf("setData stat %+v", res[4].Stat)
			}
		}},
		"multi_failed": {op: OpMulti, xid: 27, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r.(*MultiResponse).Results, []MultiResult{
				{Op: OpError, Err: ErrOK}, {Op: OpError, Err: ErrNoNode}, {Op: OpError, Err: ErrRuntimeInconsistency},
			})
		}},
		"multiread": {op: OpMultiRead, xid: 28, check: func(t *testing.T, _ ReplyHeader, r Response) {
			res := r.(*MultiResponse).Results
			if len(res) != 4 {
				t.Fatalf("results %+v", res)
			}
			if res[0].Op != OpGetData || string(res[0].Data) != "world" || res[0].Stat == nil || res[0].Stat.Version != 1 {
				t.Errorf("getData result %+v", res[0])
			}
			wantEqual(t, res[1:], []MultiResult{
				{Op: OpGetChildren, Children: []string{}}, {Op: OpError, Err: ErrNoNode}, {Op: OpError, Err: ErrNoNode},
			})
		}},
		"multi_empty": {op: OpMulti, xid: 29, check: func(t *testing.T, _ ReplyHeader, r Response) {
			if n := len(r.(*MultiResponse).Results); n != 0 {
				t.Errorf("%d results", n)
			}
		}},
		// setWatches relative to zxid 1 fires at once: data changed, data
		// watch on a missing node, exist watch on an existing node, child
		// watch with newer children.
		"setwatches_event0": event(EventNodeDataChanged, "/golden"),
		"setwatches_event1": event(EventNodeDeleted, "/golden/gone"),
		"setwatches_event2": event(EventNodeCreated, "/golden/c2"),
		"setwatches_event3": event(EventNodeChildrenChanged, "/golden"),
		"setwatches":        empty(OpSetWatches, XidSetWatches),
		"ping":              empty(OpPing, XidPing),
		"setwatches2":       empty(OpSetWatches2, XidSetWatches),
		// The persistent-recursive watch on /golden/c2 sees its new child.
		"create_child_persistent_event0": event(EventNodeCreated, "/golden/c2/child"),
		"create_child_persistent": {op: OpCreate, xid: 30, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, r, &CreateResponse{Path: "/golden/c2/child"})
		}},
		"delete_event0":   event(EventNodeDeleted, "/golden/c2/child"),
		"delete":          empty(OpDelete, 31),
		"delete_notempty": failed(OpDelete, 32, ErrNotEmpty),
		// Closing deletes /golden/eph, which the persistent watch on /golden sees.
		"close_event0": event(EventNodeChildrenChanged, "/golden"),
		"close":        empty(OpCloseSession, 33),
		"old_getchildren2": {op: OpGetChildren2, xid: 1, check: func(t *testing.T, _ ReplyHeader, r Response) {
			wantEqual(t, sorted(r.(*GetChildren2Response).Children), []string{"golden", "zookeeper"})
		}},
		"unimplemented": {op: OpCode(99), xid: 2, err: ErrUnimplemented, check: func(t *testing.T, h ReplyHeader, _ Response) {
			if h.Zxid != -1 {
				t.Errorf("zxid %d, want -1", h.Zxid)
			}
		}},
	}
}

func goldenConnects() map[string]func(t *testing.T, r *ConnectResponse) {
	return map[string]func(t *testing.T, r *ConnectResponse){
		"connect_response": func(t *testing.T, r *ConnectResponse) {
			if r.OmitReadOnly || r.ReadOnly || r.TimeOut != 30000 || r.SessionID == 0 || len(r.Passwd) != 16 {
				t.Errorf("got %+v", r)
			}
		},
		"connect_response_noreadonly": func(t *testing.T, r *ConnectResponse) {
			if !r.OmitReadOnly || r.TimeOut != 30000 || r.SessionID == 0 || len(r.Passwd) != 16 {
				t.Errorf("got %+v", r)
			}
		},
		"connect_response_expired": func(t *testing.T, r *ConnectResponse) {
			want := ConnectResponse{Passwd: make([]byte, 16)}
			if !reflect.DeepEqual(*r, want) {
				t.Errorf("got %+v, want %+v", r, want)
			}
		},
	}
}

func readGolden(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no golden files in testdata; run the capture program (testdata/README.md)")
	}
	files := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(filepath.Base(p), ".bin")] = b
	}
	return files
}

// goldenPayload strips and checks the frame's length prefix.
func goldenPayload(t *testing.T, frame []byte) []byte {
	t.Helper()
	p, err := ReadFrame(bytes.NewReader(frame), nil, DefaultMaxBuffer)
	if err != nil {
		t.Fatalf("reading frame: %v", err)
	}
	if len(p)+4 != len(frame) {
		t.Fatalf("frame has %d bytes after its %d-byte payload", len(frame)-4-len(p), len(p))
	}
	return p
}

func TestGoldenFilesAreAllKnown(t *testing.T) {
	files := readGolden(t)
	replies, connects := goldenReplies(), goldenConnects()
	for name := range files {
		if strings.HasPrefix(name, "java_") {
			continue // request frames: golden_request_test.go
		}
		if _, ok := replies[name]; !ok && connects[name] == nil {
			t.Errorf("testdata/%s.bin has no expectation in golden_test.go", name)
		}
	}
	for name := range replies {
		if files[name] == nil {
			t.Errorf("testdata/%s.bin is missing", name)
		}
	}
	for name := range connects {
		if files[name] == nil {
			t.Errorf("testdata/%s.bin is missing", name)
		}
	}
}

func TestGoldenConnectResponses(t *testing.T) {
	files := readGolden(t)
	for name, check := range goldenConnects() {
		t.Run(name, func(t *testing.T) {
			p := goldenPayload(t, files[name])
			var r ConnectResponse
			if err := Unmarshal(p, &r); err != nil {
				t.Fatal(err)
			}
			check(t, &r)
			if re := r.Append(nil); !bytes.Equal(re, p) {
				t.Errorf("re-encoded % x\n    captured % x", re, p)
			}
		})
	}
}

func TestGoldenReplies(t *testing.T) {
	files := readGolden(t)
	for name, want := range goldenReplies() {
		t.Run(name, func(t *testing.T) {
			p := goldenPayload(t, files[name])
			d := NewDecoder(p)
			var h ReplyHeader
			h.Decode(d)
			if err := d.Err(); err != nil {
				t.Fatalf("reply header: %v", err)
			}
			if h.Xid != want.xid || h.Err != want.err {
				t.Fatalf("header %+v, want xid %d err %d", h, want.xid, want.err)
			}
			body := p[ReplyHeaderSize:]
			if h.Err != ErrOK {
				if len(body) != 0 {
					t.Fatalf("error reply has a %d-byte body", len(body))
				}
				if want.check != nil {
					want.check(t, h, nil)
				}
				if re := AppendReplyFrame(nil, h, nil); !bytes.Equal(re, files[name]) {
					t.Errorf("re-encoded % x\n    captured % x", re, files[name])
				}
				return
			}
			r, err := DecodeResponse(want.op, body)
			if err != nil {
				t.Fatal(err)
			}
			if want.check != nil {
				want.check(t, h, r)
			}
			if re := AppendReplyFrame(nil, h, r); !bytes.Equal(re, files[name]) {
				t.Errorf("re-encoded % x\n    captured % x", re, files[name])
			}
			// The decoder consumed the whole body: nothing is skipped.
			if n := len(r.Append(nil)); n != len(body) {
				t.Errorf("record is %d bytes of a %d-byte body", n, len(body))
			}
		})
	}
}

// TestGoldenStream reads all captured frames back to back, as a client
// reads them off one connection.
func TestGoldenStream(t *testing.T) {
	files := readGolden(t)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var stream []byte
	for _, name := range names {
		stream = append(stream, files[name]...)
	}
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 64)
	for _, name := range names {
		p, err := ReadFrame(r, buf, DefaultMaxBuffer)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(p, files[name][4:]) {
			t.Fatalf("%s: payload differs", name)
		}
	}
	if _, err := ReadFrame(r, buf, DefaultMaxBuffer); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func wantEqual(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}
