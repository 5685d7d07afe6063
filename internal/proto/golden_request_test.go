package proto

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// The java_*.bin golden files are request frames sent by Apache
// ZooKeeper's own Java client (ZooKeeperMain, as zkCli.sh runs it),
// recorded by internal/capture through a proxy. They pin our request
// decoders to the reference encoder.

type goldenRequest struct {
	hdr RequestHeader
	req Request
}

func goldenRequests() map[string]goldenRequest {
	open := []ACL{{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyone"}}}
	r := func(xid int32, op OpCode, req Request) goldenRequest {
		return goldenRequest{hdr: RequestHeader{Xid: xid, Op: op}, req: req}
	}
	deleteOp := func(path string) MultiOp { return MultiOp{Op: OpDelete, Path: path, Version: -1} }
	return map[string]goldenRequest{
		"java_create_0":               r(1, OpCreate, &CreateRequest{Path: "/java", Data: []byte("hello"), ACL: open}),
		"java_create_1":               r(2, OpCreate, &CreateRequest{Path: "/java/seq-", Data: []byte("s"), ACL: open, Flags: FlagPersistentSequential}),
		"java_create_2":               r(3, OpCreate, &CreateRequest{Path: "/java/eph", Data: []byte("e"), ACL: open, Flags: FlagEphemeral}),
		"java_createContainer_0":      r(4, OpCreateContainer, &CreateRequest{Path: "/java/cont", ACL: open, Flags: FlagContainer}),
		"java_createTTL_0":            r(5, OpCreateTTL, &CreateTTLRequest{Path: "/java/ttl", Data: []byte("t"), ACL: open, Flags: FlagPersistentWithTTL, TTL: 60000}),
		"java_getData_0":              r(6, OpGetData, &GetDataRequest{Path: "/java", Watch: true}),
		"java_setData_0":              r(7, OpSetData, &SetDataRequest{Path: "/java", Data: []byte("world"), Version: -1}),
		"java_setData_1":              r(8, OpSetData, &SetDataRequest{Path: "/java", Data: []byte("again"), Version: 1}),
		"java_exists_0":               r(9, OpExists, &ExistsRequest{Path: "/java", Watch: true}),
		"java_getChildren2_0":         r(10, OpGetChildren2, &GetChildren2Request{Path: "/java", Watch: true}),
		"java_getChildren2_1":         r(11, OpGetChildren2, &GetChildren2Request{Path: "/java"}),
		"java_getACL_0":               r(12, OpGetACL, &GetACLRequest{Path: "/java"}),
		"java_setACL_0":               r(13, OpSetACL, &SetACLRequest{Path: "/java", ACL: open, Version: -1}),
		"java_sync_0":                 r(14, OpSync, &SyncRequest{Path: "/java"}),
		"java_getAllChildrenNumber_0": r(15, OpGetAllChildrenNumber, &GetAllChildrenNumberRequest{Path: "/java"}),
		"java_getEphemerals_0":        r(16, OpGetEphemerals, &GetEphemeralsRequest{PrefixPath: "/java"}),
		"java_auth_0":                 r(XidAuth, OpAuth, &AuthPacket{Scheme: "digest", Auth: []byte("user:secret")}),
		"java_whoAmI_0":               r(17, OpWhoAmI, &Empty{}),
		"java_addWatch_0":             r(18, OpAddWatch, &AddWatchRequest{Path: "/java", Mode: AddWatchPersistentRecursive}),
		"java_removeWatches_0":        r(19, OpRemoveWatches, &RemoveWatchesRequest{Path: "/java", Type: WatcherAny}),
		"java_delete_0":               r(20, OpDelete, &DeleteRequest{Path: "/java/eph", Version: -1}),
		"java_getChildren_0":          r(21, OpGetChildren, &GetChildrenRequest{Path: "/java"}),
		"java_getChildren_1":          r(22, OpGetChildren, &GetChildrenRequest{Path: "/java/cont"}),
		"java_getChildren_2":          r(23, OpGetChildren, &GetChildrenRequest{Path: "/java/ttl"}),
		"java_getChildren_3":          r(24, OpGetChildren, &GetChildrenRequest{Path: "/java/seq-0000000000"}),
		// deleteall: one multi of deletes, children before parents.
		"java_multi_0": r(25, OpMulti, &MultiRequest{Ops: []MultiOp{
			deleteOp("/java/seq-0000000000"), deleteOp("/java/ttl"), deleteOp("/java/cont"), deleteOp("/java"),
		}}),
		"java_closeSession_0": r(26, OpCloseSession, &Empty{}),
	}
}

func TestGoldenJavaConnectRequest(t *testing.T) {
	p := goldenPayload(t, readGolden(t)["java_connect"])
	if len(p) != ConnectRequestSize {
		t.Fatalf("Java ConnectRequest is %d bytes, want %d", len(p), ConnectRequestSize)
	}
	var got ConnectRequest
	if err := Unmarshal(p, &got); err != nil {
		t.Fatal(err)
	}
	want := ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if re := got.Append(nil); !bytes.Equal(re, p) {
		t.Fatalf("re-encoded % x\n    captured % x", re, p)
	}
}

func TestGoldenJavaRequests(t *testing.T) {
	files := readGolden(t)
	want := goldenRequests()
	for name := range files {
		// Pings depend on timing; any other request frame needs an expectation.
		if strings.HasPrefix(name, "java_") && name != "java_connect" && !strings.HasPrefix(name, "java_ping_") {
			if _, ok := want[name]; !ok {
				t.Errorf("testdata/%s.bin has no expectation", name)
			}
		}
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			frame, ok := files[name]
			if !ok {
				t.Fatalf("testdata/%s.bin is missing", name)
			}
			p := goldenPayload(t, frame)
			d := NewDecoder(p)
			var h RequestHeader
			h.Decode(d)
			if d.Err() != nil || h != w.hdr {
				t.Fatalf("header %+v (%v), want %+v", h, d.Err(), w.hdr)
			}
			req, err := DecodeRequest(h.Op, p[RequestHeaderSize:])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(req, w.req) {
				t.Errorf("got  %#v\nwant %#v", req, w.req)
			}
			// Our encoder writes what the Java client wrote.
			if re := AppendRequestFrame(nil, w.hdr.Xid, w.hdr.Op, w.req); !bytes.Equal(re, frame) {
				t.Errorf("encoded  % x\ncaptured % x", re, frame)
			}
		})
	}
}
