package server

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestReadCheckedWithItsOwnIdentities pipelines a write, a read of a node
// only a digest may read, and the auth packet that adds that digest: the
// read, which waits for the write, must be checked against the identities
// the connection had when it came (NOAUTH), as ZooKeeper checks each
// request against the identities it copied when the request arrived.
func TestReadCheckedWithItsOwnIdentities(t *testing.T) {
	s := startServer(t, nil)
	owner := dial(t, s.Addr().String())
	owner.write(proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth, &proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}))
	if f := owner.next(); f.hdr.Err != proto.ErrOK {
		t.Fatalf("auth: %v", f.hdr.Err)
	}
	if h, _ := owner.call(proto.OpCreate, &proto.CreateRequest{Path: "/secret", Data: []byte("s"),
		ACL: []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "auth"}}}}, nil); h.Err != proto.ErrOK {
		t.Fatalf("create: %v", h.Err)
	}
	owner.mustCreate("/w", "", 0)

	var c *rawClient
	for round := 0; round < 20; round++ {
		c = dial(t, s.Addr().String())
		var b []byte
		b = proto.AppendRequestFrame(b, 1, proto.OpSetData, &proto.SetDataRequest{Path: "/w", Version: -1})
		b = proto.AppendRequestFrame(b, 2, proto.OpGetData, &proto.GetDataRequest{Path: "/secret"})
		b = proto.AppendRequestFrame(b, proto.XidAuth, proto.OpAuth, &proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})
		c.write(b)
		for _, want := range []struct {
			xid int32
			err proto.ErrCode
		}{{1, proto.ErrOK}, {2, proto.ErrNoAuth}, {proto.XidAuth, proto.ErrOK}} {
			f := c.next()
			if f.hdr.Xid != want.xid || f.hdr.Err != want.err {
				t.Fatalf("round %d: reply xid %d err %v, want xid %d err %v", round, f.hdr.Xid, f.hdr.Err, want.xid, want.err)
			}
		}
	}
	// Afterwards the digest reads it.
	if h, _ := c.call(proto.OpGetData, &proto.GetDataRequest{Path: "/secret"}, nil); h.Err != proto.ErrOK {
		t.Fatalf("getData after auth: %v", h.Err)
	}
}

// TestMalformedAuthClosesWithoutReply sends an auth packet whose body
// cannot be read: ZooKeeperServer.processPacket fails reading it and the
// connection closes with no reply.
func TestMalformedAuthClosesWithoutReply(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	frame := proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth, &proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})
	// Cut the body short and fix the frame's length.
	frame = frame[:len(frame)-5]
	n := len(frame) - 4
	frame[0], frame[1], frame[2], frame[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	c.write(frame)
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := proto.ReadFrame(c.br, nil, 1<<20)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("got frame %x, err %v; want the connection closed without a reply", b, err)
	}
	other := dial(t, s.Addr().String())
	other.mustCreate("/alive", "", 0)
}
