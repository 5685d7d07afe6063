package acl

import (
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

func id(scheme, v string) proto.ID { return proto.ID{Scheme: scheme, ID: v} }

func entry(perms int32, scheme, v string) proto.ACL {
	return proto.ACL{Perms: perms, ID: id(scheme, v)}
}

const (
	r = proto.PermRead
	w = proto.PermWrite
	c = proto.PermCreate
	d = proto.PermDelete
	a = proto.PermAdmin
)

func TestAllowed(t *testing.T) {
	alice := DigestID("alice", "secret")
	bob := DigestID("bob", "secret")
	cases := []struct {
		name string
		list []proto.ACL
		perm int32
		ids  []proto.ID
		want bool
	}{
		{"empty ACL allows all", nil, proto.PermAdmin, nil, true},
		{"empty non-nil ACL allows all", []proto.ACL{}, proto.PermDelete, nil, true},
		{"world anyone", []proto.ACL{entry(proto.PermAll, World, Anyone)}, w, nil, true},
		{"world read only", []proto.ACL{entry(r, World, Anyone)}, w, nil, false},
		{"world read", []proto.ACL{entry(r, World, Anyone)}, r, nil, true},
		{"world other id never matches", []proto.ACL{entry(proto.PermAll, World, "someone")}, r, nil, false},
		{"super beats everything", []proto.ACL{entry(r, Digest, alice)}, a, []proto.ID{id(Super, "")}, true},
		{"super beats a zero-perm ACL", []proto.ACL{entry(0, World, Anyone)}, r, []proto.ID{id(Digest, bob), id(Super, "")}, true},
		{"digest exact", []proto.ACL{entry(proto.PermAll, Digest, alice)}, d, []proto.ID{id(Digest, alice)}, true},
		{"digest other user", []proto.ACL{entry(proto.PermAll, Digest, alice)}, d, []proto.ID{id(Digest, bob)}, false},
		{"digest second identity", []proto.ACL{entry(proto.PermAll, Digest, alice)}, d, []proto.ID{id(Digest, bob), id(Digest, alice)}, true},
		{"digest id under another scheme", []proto.ACL{entry(proto.PermAll, Digest, alice)}, d, []proto.ID{id(IP, alice)}, false},
		{"digest no identities", []proto.ACL{entry(proto.PermAll, Digest, alice)}, r, nil, false},
		{"digest lacks perm", []proto.ACL{entry(r|w, Digest, alice)}, c, []proto.ID{id(Digest, alice)}, false},
		{"second entry grants", []proto.ACL{entry(r, Digest, alice), entry(c, World, Anyone)}, c, []proto.ID{id(Digest, bob)}, true},
		{"perm bits each", []proto.ACL{entry(w|d, Digest, alice)}, d, []proto.ID{id(Digest, alice)}, true},
		{"zero perms", []proto.ACL{entry(0, World, Anyone)}, r, nil, false},
		{"ip exact", []proto.ACL{entry(proto.PermAll, IP, "10.1.2.3")}, r, []proto.ID{id(IP, "10.1.2.3")}, true},
		{"ip other", []proto.ACL{entry(proto.PermAll, IP, "10.1.2.3")}, r, []proto.ID{id(IP, "10.1.2.4")}, false},
		{"ip /24", []proto.ACL{entry(proto.PermAll, IP, "10.1.2.0/24")}, r, []proto.ID{id(IP, "10.1.2.200")}, true},
		{"ip /24 outside", []proto.ACL{entry(proto.PermAll, IP, "10.1.2.0/24")}, r, []proto.ID{id(IP, "10.1.3.1")}, false},
		{"ip /8 with host bits", []proto.ACL{entry(proto.PermAll, IP, "10.9.9.9/8")}, r, []proto.ID{id(IP, "10.200.0.1")}, true},
		{"ip /0", []proto.ACL{entry(proto.PermAll, IP, "1.2.3.4/0")}, r, []proto.ID{id(IP, "200.1.1.1")}, true},
		{"ip /0 is still v4 only", []proto.ACL{entry(proto.PermAll, IP, "1.2.3.4/0")}, r, []proto.ID{id(IP, "::1")}, false},
		{"ip v6 exact", []proto.ACL{entry(proto.PermAll, IP, "::1")}, r, []proto.ID{id(IP, "0:0:0:0:0:0:0:1")}, true},
		{"ip v6 /64", []proto.ACL{entry(proto.PermAll, IP, "2001:db8::/64")}, r, []proto.ID{id(IP, "2001:db8::abcd:1")}, true},
		{"ip v6 /64 outside", []proto.ACL{entry(proto.PermAll, IP, "2001:db8::/64")}, r, []proto.ID{id(IP, "2001:db8:0:1::1")}, false},
		{"ip v4 ACL, v6 client", []proto.ACL{entry(proto.PermAll, IP, "127.0.0.1")}, r, []proto.ID{id(IP, "::1")}, false},
		{"ip v4-mapped v6 client", []proto.ACL{entry(proto.PermAll, IP, "127.0.0.1")}, r, []proto.ID{id(IP, "::ffff:127.0.0.1")}, false},
		{"ip leading zeros", []proto.ACL{entry(proto.PermAll, IP, "010.001.002.003")}, r, []proto.ID{id(IP, "10.1.2.3")}, true},
		{"ip bad ACL id", []proto.ACL{entry(proto.PermAll, IP, "nonsense")}, r, []proto.ID{id(IP, "nonsense")}, false},
		{"ip id under digest", []proto.ACL{entry(proto.PermAll, IP, "10.1.2.3")}, r, []proto.ID{id(Digest, "10.1.2.3")}, false},
		{"auth scheme never matches", []proto.ACL{entry(proto.PermAll, Auth, "")}, r, []proto.ID{id(Auth, "")}, false},
		{"unknown scheme never matches", []proto.ACL{entry(proto.PermAll, "x509", "CN=a")}, r, []proto.ID{id("x509", "CN=a")}, false},
	}
	for _, tc := range cases {
		if got := Allowed(tc.list, tc.perm, tc.ids); got != tc.want {
			t.Errorf("%s: Allowed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFixup(t *testing.T) {
	alice := DigestID("alice", "pw")
	bob := DigestID("bob", "pw")
	open := entry(proto.PermAll, World, Anyone)
	cases := []struct {
		name string
		list []proto.ACL
		ids  []proto.ID
		want []proto.ACL // nil: INVALIDACL
	}{
		{"nil list", nil, nil, nil},
		{"empty list", []proto.ACL{}, nil, nil},
		{"world anyone", []proto.ACL{open}, nil, []proto.ACL{open}},
		{"world other id", []proto.ACL{entry(r, World, "everyone")}, nil, nil},
		{"world empty id", []proto.ACL{entry(r, World, "")}, nil, nil},
		{"auth without identity", []proto.ACL{entry(proto.PermAll, Auth, "")}, nil, nil},
		{"auth with ip only", []proto.ACL{entry(proto.PermAll, Auth, "")}, []proto.ID{id(IP, "127.0.0.1")}, nil},
		{"auth with super only", []proto.ACL{entry(proto.PermAll, Auth, "")}, []proto.ID{id(Super, "")}, nil},
		{"auth expands to digest", []proto.ACL{entry(r|w, Auth, "ignored")},
			[]proto.ID{id(IP, "127.0.0.1"), id(Digest, alice)},
			[]proto.ACL{entry(r|w, Digest, alice)}},
		{"auth expands to every digest", []proto.ACL{entry(proto.PermAll, Auth, "")},
			[]proto.ID{id(Super, ""), id(Digest, alice), id(Digest, bob)},
			[]proto.ACL{entry(proto.PermAll, Digest, alice), entry(proto.PermAll, Digest, bob)}},
		{"digest valid", []proto.ACL{entry(r, Digest, alice)}, nil, []proto.ACL{entry(r, Digest, alice)}},
		{"digest any two parts", []proto.ACL{entry(r, Digest, "u:p")}, nil, []proto.ACL{entry(r, Digest, "u:p")}},
		{"digest trailing colon", []proto.ACL{entry(r, Digest, "u:p:")}, nil, []proto.ACL{entry(r, Digest, "u:p:")}},
		{"digest leading colon", []proto.ACL{entry(r, Digest, ":p")}, nil, []proto.ACL{entry(r, Digest, ":p")}},
		{"digest no colon", []proto.ACL{entry(r, Digest, "up")}, nil, nil},
		{"digest three parts", []proto.ACL{entry(r, Digest, "u:p:q")}, nil, nil},
		{"digest empty middle", []proto.ACL{entry(r, Digest, "u::p")}, nil, nil},
		{"digest only colon", []proto.ACL{entry(r, Digest, ":")}, nil, nil},
		{"digest empty", []proto.ACL{entry(r, Digest, "")}, nil, nil},
		{"ip v4", []proto.ACL{entry(r, IP, "10.0.0.1")}, nil, []proto.ACL{entry(r, IP, "10.0.0.1")}},
		{"ip v4 prefix", []proto.ACL{entry(r, IP, "10.0.0.0/8")}, nil, []proto.ACL{entry(r, IP, "10.0.0.0/8")}},
		{"ip v6 prefix", []proto.ACL{entry(r, IP, "fe80::/10")}, nil, []proto.ACL{entry(r, IP, "fe80::/10")}},
		{"ip bad prefix", []proto.ACL{entry(r, IP, "10.0.0.0/33")}, nil, nil},
		{"ip hostname", []proto.ACL{entry(r, IP, "localhost")}, nil, nil},
		{"super scheme", []proto.ACL{entry(r, Super, "")}, []proto.ID{id(Super, "")}, nil},
		{"unknown scheme", []proto.ACL{entry(r, "x509", "CN=x")}, nil, nil},
		{"empty scheme", []proto.ACL{entry(r, "", "")}, nil, nil},
		{"one bad entry spoils the list", []proto.ACL{open, entry(r, Digest, "bad")}, nil, nil},
		{"duplicates dropped", []proto.ACL{open, entry(r, Digest, alice), open, entry(r, Digest, alice)}, nil,
			[]proto.ACL{open, entry(r, Digest, alice)}},
		{"same id other perms kept", []proto.ACL{entry(r, Digest, alice), entry(w, Digest, alice)}, nil,
			[]proto.ACL{entry(r, Digest, alice), entry(w, Digest, alice)}},
		{"duplicate auth entries expand once", []proto.ACL{entry(r, Auth, ""), entry(r, Auth, "")},
			[]proto.ID{id(Digest, alice)}, []proto.ACL{entry(r, Digest, alice)}},
		// ZooKeeper removes duplicates before expanding "auth", so an
		// expansion equal to an explicit entry stays twice (checked against
		// a real server).
		{"expansion may repeat an entry", []proto.ACL{entry(proto.PermAll, Auth, ""), entry(proto.PermAll, Digest, alice)},
			[]proto.ID{id(Digest, alice)},
			[]proto.ACL{entry(proto.PermAll, Digest, alice), entry(proto.PermAll, Digest, alice)}},
	}
	for _, tc := range cases {
		got, ok := Fixup(tc.list, tc.ids)
		if tc.want == nil {
			if ok {
				t.Errorf("%s: Fixup = %v, true; want INVALIDACL", tc.name, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Fixup = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}

func TestFixupDoesNotAlias(t *testing.T) {
	in := []proto.ACL{entry(r, World, Anyone)}
	out, ok := Fixup(in, nil)
	if !ok {
		t.Fatal("Fixup refused world:anyone")
	}
	out[0].Perms = 0
	if in[0].Perms != r {
		t.Fatal("Fixup's result shares the caller's slice")
	}
}
