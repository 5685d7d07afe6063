package proto

import "testing"

// BenchmarkDecodeGetDataRequest measures decoding the most common request.
func BenchmarkDecodeGetDataRequest(b *testing.B) {
	frame := AppendRequestFrame(nil, 7, OpGetData, &GetDataRequest{Path: "/app/config/node-000123", Watch: true})
	body := frame[4+RequestHeaderSize:]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(OpGetData, body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeGetDataReply measures encoding a getData reply with 100
// bytes of data.
func BenchmarkEncodeGetDataReply(b *testing.B) {
	resp := &GetDataResponse{Data: make([]byte, 100), Stat: Stat{Czxid: 1, Mzxid: 2, Version: 3}}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendReplyFrame(buf[:0], ReplyHeader{Xid: 7, Zxid: 99}, resp)
	}
}

// BenchmarkDecodeMultiRequest measures decoding a five-op multi.
func BenchmarkDecodeMultiRequest(b *testing.B) {
	acl := []ACL{{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyone"}}}
	m := &MultiRequest{Ops: []MultiOp{
		{Op: OpCheck, Path: "/a", Version: 1},
		{Op: OpCreate, Path: "/a/b", Data: make([]byte, 100), ACL: acl},
		{Op: OpSetData, Path: "/a", Data: make([]byte, 100), Version: -1},
		{Op: OpDelete, Path: "/a/c", Version: -1},
		{Op: OpCreate2, Path: "/a/d", ACL: acl, Flags: FlagEphemeral},
	}}
	body := m.Append(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(OpMulti, body); err != nil {
			b.Fatal(err)
		}
	}
}
