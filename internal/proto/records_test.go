package proto

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func sampleStat() Stat {
	return Stat{
		Czxid: 0x100000002, Mzxid: 0x100000009, Ctime: 1700000000000, Mtime: 1700000000500,
		Version: 3, Cversion: -1, Aversion: 2, EphemeralOwner: 0x7200000abc, DataLength: 5,
		NumChildren: 7, Pzxid: 0x10000000a,
	}
}

func sampleACL() []ACL {
	return []ACL{
		{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyone"}},
		{Perms: PermRead | PermAdmin, ID: ID{Scheme: "digest", ID: "user:x"}},
	}
}

// recordCase is one record value and a constructor for an empty record
// of the same type to decode into.
type recordCase struct {
	name  string
	value Record
	empty func() Record
}

func recordCases() []recordCase {
	testStat, testACL := sampleStat(), sampleACL()
	return []recordCase{
		{"ID", &ID{Scheme: "ip", ID: "127.0.0.1"}, func() Record { return new(ID) }},
		{"ACL", &testACL[1], func() Record { return new(ACL) }},
		{"Stat", &testStat, func() Record { return new(Stat) }},
		{"ClientInfo", &ClientInfo{AuthScheme: "digest", User: "bob"}, func() Record { return new(ClientInfo) }},
		{"ConnectRequest", &ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 0x1234, TimeOut: 30000, SessionID: 0x7200000abc,
			Passwd: bytes.Repeat([]byte{7}, 16), ReadOnly: true}, func() Record { return new(ConnectRequest) }},
		{"ConnectRequest old", &ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16), OmitReadOnly: true},
			func() Record { return new(ConnectRequest) }},
		{"ConnectResponse", &ConnectResponse{TimeOut: 30000, SessionID: 1, Passwd: bytes.Repeat([]byte{1}, 16), ReadOnly: true},
			func() Record { return new(ConnectResponse) }},
		{"ConnectResponse old", &ConnectResponse{TimeOut: 30000, SessionID: 1, Passwd: make([]byte, 16), OmitReadOnly: true},
			func() Record { return new(ConnectResponse) }},
		{"RequestHeader", &RequestHeader{Xid: 42, Op: OpCreate2}, func() Record { return new(RequestHeader) }},
		{"ReplyHeader", &ReplyHeader{Xid: -1, Zxid: 0x200000001, Err: ErrNoNode}, func() Record { return new(ReplyHeader) }},
		{"MultiHeader", &MultiHeader{Type: OpError, Done: true, Err: -1}, func() Record { return new(MultiHeader) }},
		{"CreateRequest", &CreateRequest{Path: "/a/b", Data: []byte("data"), ACL: testACL, Flags: FlagEphemeralSequential},
			func() Record { return new(CreateRequest) }},
		{"CreateRequest null data and acl", &CreateRequest{Path: "/a"}, func() Record { return new(CreateRequest) }},
		{"CreateTTLRequest", &CreateTTLRequest{Path: "/t", Data: []byte{}, ACL: testACL[:1], Flags: FlagPersistentWithTTL, TTL: 60000},
			func() Record { return new(CreateTTLRequest) }},
		{"DeleteRequest", &DeleteRequest{Path: "/d", Version: -1}, func() Record { return new(DeleteRequest) }},
		{"ExistsRequest", &ExistsRequest{Path: "/e", Watch: true}, func() Record { return new(ExistsRequest) }},
		{"GetDataRequest", &GetDataRequest{Path: "/g", Watch: true}, func() Record { return new(GetDataRequest) }},
		{"GetChildrenRequest", &GetChildrenRequest{Path: "/", Watch: false}, func() Record { return new(GetChildrenRequest) }},
		{"GetChildren2Request", &GetChildren2Request{Path: "/c", Watch: true}, func() Record { return new(GetChildren2Request) }},
		{"SetDataRequest", &SetDataRequest{Path: "/s", Data: []byte("v"), Version: 4}, func() Record { return new(SetDataRequest) }},
		{"GetACLRequest", &GetACLRequest{Path: "/acl"}, func() Record { return new(GetACLRequest) }},
		{"SetACLRequest", &SetACLRequest{Path: "/acl", ACL: testACL, Version: 1}, func() Record { return new(SetACLRequest) }},
		{"SetACLRequest empty acl", &SetACLRequest{Path: "/acl", ACL: []ACL{}, Version: -1}, func() Record { return new(SetACLRequest) }},
		{"SyncRequest", &SyncRequest{Path: "/sync"}, func() Record { return new(SyncRequest) }},
		{"CheckVersionRequest", &CheckVersionRequest{Path: "/chk", Version: 9}, func() Record { return new(CheckVersionRequest) }},
		{"CheckWatchesRequest", &CheckWatchesRequest{Path: "/w", Type: WatcherData}, func() Record { return new(CheckWatchesRequest) }},
		{"RemoveWatchesRequest", &RemoveWatchesRequest{Path: "/w", Type: WatcherPersistentRecursive},
			func() Record { return new(RemoveWatchesRequest) }},
		{"DeleteContainerRequest", &DeleteContainerRequest{Path: "/container"}, func() Record { return new(DeleteContainerRequest) }},
		{"AuthPacket", &AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("user:pw")}, func() Record { return new(AuthPacket) }},
		{"SetWatches", &SetWatches{RelativeZxid: 77, DataWatches: []string{"/a", "/b"}, ExistWatches: []string{},
			ChildWatches: []string{"/"}}, func() Record { return new(SetWatches) }},
		{"SetWatches2", &SetWatches2{RelativeZxid: -1, DataWatches: []string{"/a"}, ExistWatches: []string{"/x"},
			ChildWatches: []string{}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r", "/r2"}},
			func() Record { return new(SetWatches2) }},
		{"GetEphemeralsRequest", &GetEphemeralsRequest{PrefixPath: "/app"}, func() Record { return new(GetEphemeralsRequest) }},
		{"GetAllChildrenNumberRequest", &GetAllChildrenNumberRequest{Path: "/n"},
			func() Record { return new(GetAllChildrenNumberRequest) }},
		{"AddWatchRequest", &AddWatchRequest{Path: "/aw", Mode: AddWatchPersistentRecursive}, func() Record { return new(AddWatchRequest) }},
		{"CreateResponse", &CreateResponse{Path: "/a0000000001"}, func() Record { return new(CreateResponse) }},
		{"Create2Response", &Create2Response{Path: "/c2", Stat: testStat}, func() Record { return new(Create2Response) }},
		{"StatResponse", &StatResponse{Stat: testStat}, func() Record { return new(StatResponse) }},
		{"GetDataResponse", &GetDataResponse{Data: []byte("hello"), Stat: testStat}, func() Record { return new(GetDataResponse) }},
		{"GetDataResponse null data", &GetDataResponse{Stat: testStat}, func() Record { return new(GetDataResponse) }},
		{"GetACLResponse", &GetACLResponse{ACL: testACL, Stat: testStat}, func() Record { return new(GetACLResponse) }},
		{"GetChildrenResponse", &GetChildrenResponse{Children: []string{"a", "b", "c"}}, func() Record { return new(GetChildrenResponse) }},
		{"GetChildren2Response", &GetChildren2Response{Children: []string{}, Stat: testStat},
			func() Record { return new(GetChildren2Response) }},
		{"SyncResponse", &SyncResponse{Path: "/sync"}, func() Record { return new(SyncResponse) }},
		{"GetEphemeralsResponse", &GetEphemeralsResponse{Ephemerals: []string{"/e1", "/e2"}},
			func() Record { return new(GetEphemeralsResponse) }},
		{"GetAllChildrenNumberResponse", &GetAllChildrenNumberResponse{TotalNumber: 12345},
			func() Record { return new(GetAllChildrenNumberResponse) }},
		{"ErrorResponse", &ErrorResponse{Err: ErrNoWatcher}, func() Record { return new(ErrorResponse) }},
		{"WhoAmIResponse", &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}, {"digest", "bob"}}},
			func() Record { return new(WhoAmIResponse) }},
		{"WhoAmIResponse null", &WhoAmIResponse{}, func() Record { return new(WhoAmIResponse) }},
		{"WatcherEvent", &WatcherEvent{Type: EventNodeChildrenChanged, State: StateSyncConnected, Path: "/w"},
			func() Record { return new(WatcherEvent) }},
		{"MultiRequest", &MultiRequest{Ops: testMultiOps()}, func() Record { return new(MultiRequest) }},
		{"MultiRequest read", &MultiRequest{Ops: []MultiOp{{Op: OpGetData, Path: "/a"}, {Op: OpGetChildren, Path: "/b"}}},
			func() Record { return new(MultiRequest) }},
		{"MultiResponse", &MultiResponse{Results: testMultiResults()}, func() Record { return new(MultiResponse) }},
		{"Empty", &Empty{}, func() Record { return new(Empty) }},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, tc := range recordCases() {
		t.Run(tc.name, func(t *testing.T) {
			enc := tc.value.Append([]byte{0xEE}) // appends after existing bytes
			if enc[0] != 0xEE {
				t.Fatal("Append overwrote the prefix")
			}
			enc = enc[1:]
			got := tc.empty()
			if err := Unmarshal(enc, got); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.value) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.value)
			}
			if re := got.Append(nil); !bytes.Equal(re, enc) {
				t.Fatalf("re-encoding differs:\n got % x\nwant % x", re, enc)
			}
		})
	}
}

// TestRecordTruncated cuts every encoding at every length and checks the
// decoder reports ErrShortBuffer. The only prefix allowed to decode is a
// handshake record without its optional readOnly byte.
func TestRecordTruncated(t *testing.T) {
	for _, tc := range recordCases() {
		t.Run(tc.name, func(t *testing.T) {
			enc := tc.value.Append(nil)
			for n := 0; n < len(enc); n++ {
				err := Unmarshal(enc[:n], tc.empty())
				if optionalTail(tc.value) && n == len(enc)-1 {
					if err != nil {
						t.Errorf("without the readOnly byte: %v", err)
					}
					continue
				}
				if !errors.Is(err, ErrShortBuffer) {
					t.Errorf("cut at %d of %d: err = %v, want ErrShortBuffer", n, len(enc), err)
				}
			}
		})
	}
}

func optionalTail(r Record) bool {
	switch v := r.(type) {
	case *ConnectRequest:
		return !v.OmitReadOnly
	case *ConnectResponse:
		return !v.OmitReadOnly
	}
	return false
}

func TestConnectSizes(t *testing.T) {
	pw := make([]byte, 16)
	tests := []struct {
		name string
		r    Record
		want int
	}{
		{"request", &ConnectRequest{Passwd: pw}, ConnectRequestSize},
		{"request without readOnly", &ConnectRequest{Passwd: pw, OmitReadOnly: true}, ConnectRequestSizeNoReadOnly},
		{"response", &ConnectResponse{Passwd: pw}, ConnectResponseSize},
		{"response without readOnly", &ConnectResponse{Passwd: pw, OmitReadOnly: true}, ConnectResponseSizeNoReadOnly},
		{"request header", &RequestHeader{}, RequestHeaderSize},
		{"reply header", &ReplyHeader{}, ReplyHeaderSize},
		{"multi header", &MultiHeader{}, MultiHeaderSize},
		{"stat", &Stat{}, StatSize},
	}
	for _, tt := range tests {
		if got := len(tt.r.Append(nil)); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
}

func TestConnectRequestReadOnlyDetection(t *testing.T) {
	full := (&ConnectRequest{TimeOut: 1, Passwd: make([]byte, 16), ReadOnly: true}).Append(nil)
	var r ConnectRequest
	if err := Unmarshal(full, &r); err != nil || r.OmitReadOnly || !r.ReadOnly {
		t.Fatalf("45-byte request: %+v, %v", r, err)
	}
	r = ConnectRequest{OmitReadOnly: false, ReadOnly: true}
	if err := Unmarshal(full[:44], &r); err != nil || !r.OmitReadOnly || r.ReadOnly {
		t.Fatalf("44-byte request: %+v, %v", r, err)
	}
	// A server mirrors the request's shape in its reply.
	resp := ConnectResponse{TimeOut: 1, Passwd: make([]byte, 16), OmitReadOnly: r.OmitReadOnly}
	if n := len(resp.Append(nil)); n != ConnectResponseSizeNoReadOnly {
		t.Fatalf("mirrored response is %d bytes", n)
	}
}

func TestRecordExactEncoding(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want []byte
	}{
		{"RequestHeader", &RequestHeader{Xid: 1, Op: OpGetData}, []byte{0, 0, 0, 1, 0, 0, 0, 4}},
		{"ReplyHeader", &ReplyHeader{Xid: -2, Zxid: 5, Err: ErrNoNode},
			[]byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0x9b}},
		{"GetDataRequest", &GetDataRequest{Path: "/a", Watch: true}, []byte{0, 0, 0, 2, '/', 'a', 1}},
		{"ACL", &ACL{Perms: 31, ID: ID{Scheme: "w", ID: "a"}}, []byte{0, 0, 0, 31, 0, 0, 0, 1, 'w', 0, 0, 0, 1, 'a'}},
		{"nil ACL vector", &SetACLRequest{Path: "", Version: 0}, []byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}},
		{"DeleteContainerRequest as buffer", &DeleteContainerRequest{Path: "/c"}, []byte{0, 0, 0, 2, '/', 'c'}},
		{"ErrorResponse", &ErrorResponse{Err: ErrOK}, []byte{0, 0, 0, 0}},
		{"WatcherEvent", &WatcherEvent{Type: EventNodeDeleted, State: 3, Path: "/"},
			[]byte{0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, '/'}},
	}
	for _, tt := range tests {
		if got := tt.r.Append(nil); !bytes.Equal(got, tt.want) {
			t.Errorf("%s: got % x, want % x", tt.name, got, tt.want)
		}
	}
}
