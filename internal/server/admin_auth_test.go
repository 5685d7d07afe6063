package server

import (
	"io"
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// adminGetAuth fetches path from s's admin server with the Authorization
// header auth ("" for none) and returns the status and body.
func adminGetAuth(t *testing.T, s *Server, path, auth string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+s.AdminAddr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// TestAdminSnapshotAuth checks the snapshot command asks for ALL on "/" as
// ZooKeeper 3.9's does: no credentials 401, an identity without ALL on the
// root 403, the owner's digest or the super user's 200 with every znode,
// ACL-protected ones included.
func TestAdminSnapshotAuth(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		withAdmin(c)
		c.AdminSnapshotEnabled = true
		c.SuperDigest = acl.DigestID("super", "s3cret")
	})
	c := dial(t, s.Addr().String())
	owner := proto.ID{Scheme: acl.Digest, ID: acl.DigestID("alice", "pw")}
	if h, _ := c.call(proto.OpCreate, &proto.CreateRequest{Path: "/secret", Data: []byte("hidden"),
		ACL: []proto.ACL{{Perms: proto.PermAll, ID: owner}}}, nil); h.Err != proto.ErrOK {
		t.Fatalf("create /secret: %v", h.Err)
	}
	// The root: ALL for alice, READ for everybody (as ZooKeeper's
	// CommandAuthTest, READ alone must not be enough).
	if h, _ := c.call(proto.OpSetACL, &proto.SetACLRequest{Path: "/", Version: -1, ACL: []proto.ACL{
		{Perms: proto.PermAll, ID: owner},
		{Perms: proto.PermRead, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}},
	}}, nil); h.Err != proto.ErrOK {
		t.Fatalf("setACL /: %v", h.Err)
	}

	for _, tt := range []struct {
		name, auth string
		want       int
	}{
		{"anonymous", "", http.StatusUnauthorized},
		{"unknown scheme", "sasl alice:pw", http.StatusUnauthorized},
		{"wrong password", "digest alice:nope", http.StatusForbidden},
		{"other user", "digest bob:pw", http.StatusForbidden},
		{"ip without an ip entry", "ip", http.StatusForbidden},
		{"owner", "digest alice:pw", http.StatusOK},
		{"super user", "digest super:s3cret", http.StatusOK},
	} {
		code, body := adminGetAuth(t, s, "/commands/snapshot", tt.auth)
		if code != tt.want {
			t.Errorf("%s: %d %.120q, want %d", tt.name, code, body, tt.want)
			continue
		}
		if code != http.StatusOK {
			continue
		}
		m := fsm.New(fsm.Options{})
		if err := m.Restore(body); err != nil {
			t.Fatalf("%s: restoring the snapshot: %v", tt.name, err)
		}
		if n := m.Tree().Get("/secret"); n == nil || string(n.Data) != "hidden" {
			t.Errorf("%s: /secret missing from the snapshot", tt.name)
		}
	}

	// Other commands need no credentials, as in ZooKeeper.
	if code, _ := adminGetAuth(t, s, "/commands/srvr", ""); code != http.StatusOK {
		t.Errorf("srvr without credentials: %d", code)
	}
}
