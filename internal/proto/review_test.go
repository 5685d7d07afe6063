package proto

import (
	"reflect"
	"testing"
)

// ZooKeeper's BinaryInputArchive.startVector returns null only for a count
// of -1; any other negative count makes a BinaryIndex that is done at
// once, so the vector reads as empty. A ZooKeeper 3.8 server answers a
// setWatches whose counts are -2, -7, -3 with err 0, and a create or
// setACL whose ACL count is -2 with INVALIDACL (-114), as for an empty
// ACL list, not with MARSHALLINGERROR.
func TestNegativeVectorCountReadsAsEmpty(t *testing.T) {
	sw := AppendInt64(nil, 5)
	sw = AppendInt32(sw, -2)
	sw = AppendInt32(sw, -7)
	sw = AppendInt32(sw, -0x80000000)
	req, err := DecodeRequest(OpSetWatches, sw)
	if err != nil {
		t.Fatalf("setWatches with counts -2, -7, MinInt32: %v", err)
	}
	wantEqual(t, req, &SetWatches{RelativeZxid: 5, DataWatches: []string{}, ExistWatches: []string{}, ChildWatches: []string{}})

	cr := AppendString(nil, "/q")
	cr = AppendBuffer(cr, []byte{})
	cr = AppendInt32(cr, -2) // ACL count
	cr = AppendInt32(cr, FlagPersistent)
	req, err = DecodeRequest(OpCreate, cr)
	if err != nil {
		t.Fatalf("create with ACL count -2: %v", err)
	}
	wantEqual(t, req, &CreateRequest{Path: "/q", Data: []byte{}, ACL: []ACL{}})

	// The same inside a multi: ZooKeeper fails only that op, with
	// INVALIDACL, so the multi must decode.
	m := (&MultiHeader{Type: OpCreate, Err: -1}).Append(nil)
	m = append(m, cr...)
	m = multiEnd.Append(m)
	req, err = DecodeRequest(OpMulti, m)
	if err != nil {
		t.Fatalf("multi create with ACL count -2: %v", err)
	}
	wantEqual(t, req, &MultiRequest{Ops: []MultiOp{{Op: OpCreate, Path: "/q", Data: []byte{}, ACL: []ACL{}}}})

	// WhoAmIResponse reads its vector by hand.
	var who WhoAmIResponse
	if err := Unmarshal(AppendInt32(nil, -3), &who); err != nil || who.ClientInfo == nil || len(who.ClientInfo) != 0 {
		t.Fatalf("whoAmI with count -3: %+v, %v", who, err)
	}
	d := NewDecoder(AppendInt32(nil, -9))
	if n := d.VectorLen(1); n != 0 || d.Err() != nil {
		t.Fatalf("VectorLen of -9 = %d, %v; want 0, nil", n, d.Err())
	}
	if !reflect.DeepEqual(NewDecoder(AppendInt32(nil, -1)).Strings(), []string(nil)) {
		t.Fatal("a count of -1 no longer reads as null")
	}
}
