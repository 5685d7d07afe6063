package proto

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeRequestByOpcode(t *testing.T) {
	acl := sampleACL()
	tests := []struct {
		op  OpCode
		req Request
	}{
		{OpCreate, &CreateRequest{Path: "/a", Data: []byte("d"), ACL: acl, Flags: FlagEphemeral}},
		{OpCreate2, &CreateRequest{Path: "/a", Data: []byte{}, ACL: acl}},
		{OpCreateContainer, &CreateRequest{Path: "/c", ACL: acl, Flags: FlagContainer}},
		{OpCreateTTL, &CreateTTLRequest{Path: "/t", ACL: acl, Flags: FlagPersistentWithTTL, TTL: 1}},
		{OpDelete, &DeleteRequest{Path: "/a", Version: 3}},
		{OpExists, &ExistsRequest{Path: "/a", Watch: true}},
		{OpGetData, &GetDataRequest{Path: "/a", Watch: true}},
		{OpSetData, &SetDataRequest{Path: "/a", Data: []byte("x"), Version: -1}},
		{OpGetACL, &GetACLRequest{Path: "/a"}},
		{OpSetACL, &SetACLRequest{Path: "/a", ACL: acl, Version: 0}},
		{OpGetChildren, &GetChildrenRequest{Path: "/", Watch: true}},
		{OpSync, &SyncRequest{Path: "/"}},
		{OpPing, &Empty{}},
		{OpGetChildren2, &GetChildren2Request{Path: "/"}},
		{OpCheck, &CheckVersionRequest{Path: "/a", Version: 1}},
		{OpMulti, &MultiRequest{Ops: testMultiOps()}},
		{OpMultiRead, &MultiRequest{Ops: []MultiOp{{Op: OpGetChildren, Path: "/"}}}},
		{OpCheckWatches, &CheckWatchesRequest{Path: "/a", Type: WatcherChildren}},
		{OpRemoveWatches, &RemoveWatchesRequest{Path: "/a", Type: WatcherAny}},
		{OpDeleteContainer, &DeleteContainerRequest{Path: "/c"}},
		{OpAuth, &AuthPacket{Scheme: "digest", Auth: []byte("u:p")}},
		{OpSetWatches, &SetWatches{RelativeZxid: 1, DataWatches: []string{"/a"}}},
		{OpGetEphemerals, &GetEphemeralsRequest{PrefixPath: "/"}},
		{OpGetAllChildrenNumber, &GetAllChildrenNumberRequest{Path: "/"}},
		{OpSetWatches2, &SetWatches2{PersistentRecursiveWatches: []string{"/r"}}},
		{OpAddWatch, &AddWatchRequest{Path: "/a", Mode: AddWatchPersistent}},
		{OpWhoAmI, &Empty{}},
		{OpCloseSession, &Empty{}},
	}
	for _, tt := range tests {
		t.Run(tt.op.String(), func(t *testing.T) {
			got, err := DecodeRequest(tt.op, tt.req.Append(nil))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.req) {
				t.Fatalf("got %#v, want %#v", got, tt.req)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		op   OpCode
		body []byte
		want error
		msg  string
	}{
		{"unknown opcode", OpCode(99), nil, ErrUnknownOpcode, "op(99)"},
		{"notification", OpNotification, nil, ErrUnknownOpcode, "notification"},
		{"createSession", OpCreateSession, nil, ErrUnknownOpcode, "createSession"},
		{"error", OpError, nil, ErrUnknownOpcode, "error"},
		{"reconfig not implemented", OpReconfig, nil, ErrUnknownOpcode, "reconfig"},
		{"sasl not implemented", OpSASL, nil, ErrUnknownOpcode, "sasl"},
		{"short create", OpCreate, []byte{0, 0, 0, 5, '/'}, ErrShortBuffer, "decoding create request"},
		{"negative path", OpGetData, []byte{0xff, 0xff, 0xff, 0xf0}, ErrMalformed, "decoding getData request"},
		{"read op in multi", OpMulti, (&MultiRequest{Ops: []MultiOp{{Op: OpGetData, Path: "/"}}}).Append(nil),
			ErrMalformed, "op 0 has type getData"},
		{"write op in multiRead", OpMultiRead, (&MultiRequest{Ops: []MultiOp{{Op: OpDelete, Path: "/"}}}).Append(nil),
			ErrMalformed, "op 0 has type delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRequest(tt.op, tt.body)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
			if got != nil {
				t.Errorf("request returned with error: %#v", got)
			}
		})
	}
}

func TestDecodeResponseByOpcode(t *testing.T) {
	st := sampleStat()
	tests := []struct {
		op   OpCode
		resp Response
	}{
		{OpCreate, &CreateResponse{Path: "/a"}},
		{OpCreate2, &Create2Response{Path: "/a", Stat: st}},
		{OpCreateContainer, &Create2Response{Path: "/c", Stat: st}},
		{OpCreateTTL, &Create2Response{Path: "/t", Stat: st}},
		{OpDelete, &Empty{}},
		{OpExists, &StatResponse{Stat: st}},
		{OpGetData, &GetDataResponse{Data: []byte("x"), Stat: st}},
		{OpSetData, &StatResponse{Stat: st}},
		{OpGetACL, &GetACLResponse{ACL: sampleACL(), Stat: st}},
		{OpSetACL, &StatResponse{Stat: st}},
		{OpGetChildren, &GetChildrenResponse{Children: []string{"a"}}},
		{OpSync, &SyncResponse{Path: "/"}},
		{OpPing, &Empty{}},
		{OpGetChildren2, &GetChildren2Response{Children: []string{"a"}, Stat: st}},
		{OpCheck, &Empty{}},
		{OpMulti, &MultiResponse{Results: testMultiResults()}},
		{OpMultiRead, &MultiResponse{Results: []MultiResult{{Op: OpGetChildren, Children: []string{}}}}},
		{OpCheckWatches, &Empty{}},
		{OpRemoveWatches, &Empty{}},
		{OpDeleteContainer, &Empty{}},
		{OpAuth, &Empty{}},
		{OpSetWatches, &Empty{}},
		{OpSetWatches2, &Empty{}},
		{OpGetEphemerals, &GetEphemeralsResponse{Ephemerals: []string{"/e"}}},
		{OpGetAllChildrenNumber, &GetAllChildrenNumberResponse{TotalNumber: 3}},
		{OpAddWatch, &ErrorResponse{Err: ErrOK}},
		{OpWhoAmI, &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}}}},
		{OpCloseSession, &Empty{}},
		{OpNotification, &WatcherEvent{Type: EventNodeCreated, State: StateSyncConnected, Path: "/n"}},
	}
	for _, tt := range tests {
		t.Run(tt.op.String(), func(t *testing.T) {
			got, err := DecodeResponse(tt.op, tt.resp.Append(nil))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.resp) {
				t.Fatalf("got %#v, want %#v", got, tt.resp)
			}
		})
	}
	if _, err := DecodeResponse(OpCode(55), nil); !errors.Is(err, ErrUnknownOpcode) {
		t.Errorf("unknown op: %v", err)
	}
	if _, err := DecodeResponse(OpGetData, []byte{0, 0}); !errors.Is(err, ErrShortBuffer) ||
		!strings.Contains(err.Error(), "getData response") {
		t.Errorf("short getData: %v", err)
	}
}

// TestEveryNamedOpcodeHasARecord keeps NewRequest and NewResponse in step
// with the opcode list of types.go.
func TestEveryNamedOpcodeHasARecord(t *testing.T) {
	noRequest := map[OpCode]bool{OpNotification: true, OpReconfig: true, OpSASL: true, OpCreateSession: true, OpError: true}
	noResponse := map[OpCode]bool{OpReconfig: true, OpSASL: true, OpCreateSession: true, OpError: true}
	for op := range opNames {
		if _, err := NewRequest(op); (err == nil) == noRequest[op] {
			t.Errorf("NewRequest(%v): %v", op, err)
		}
		if _, err := NewResponse(op); (err == nil) == noResponse[op] {
			t.Errorf("NewResponse(%v): %v", op, err)
		}
	}
}
