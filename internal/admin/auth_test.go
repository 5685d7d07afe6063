package admin

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/proto"
)

// TestSnapshotAuth checks the snapshot command's credentials as ZooKeeper
// 3.9's Commands.runCommand and CommandAuthTest have them: 401 without the
// header or with one that authenticates nothing, 403 for identities
// without ALL on "/" (READ alone is not enough), the snapshot for the
// root's owner, the super user, or an ip entry matching the client.
func TestSnapshotAuth(t *testing.T) {
	owner := proto.ID{Scheme: acl.Digest, ID: acl.DigestID("root", "root_passwd")}
	src := newFake()
	src.rootACL = []proto.ACL{
		{Perms: proto.PermAll, ID: owner},
		{Perms: proto.PermRead, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}},
		{Perms: proto.PermAll &^ proto.PermAdmin, ID: proto.ID{Scheme: acl.Digest, ID: acl.DigestID("almost", "pw")}},
	}
	ts := newTestServer(t, src, Options{SnapshotEnabled: true, SuperDigest: acl.DigestID("super", "s3cret")})
	for _, tt := range []struct {
		name, auth string
		status     int
		errMsg     string
	}{
		{"no header", "", http.StatusUnauthorized, errAuthMissing},
		{"unknown scheme", "sasl root:root_passwd", http.StatusUnauthorized, errNotAuthenticated},
		{"scheme and password run together", "digestroot:root_passwd", http.StatusUnauthorized, errNotAuthenticated},
		{"colon for a space", "digest:root:root_passwd", http.StatusUnauthorized, errNotAuthenticated},
		{"digest without data", "digest", http.StatusUnauthorized, errNotAuthenticated},
		{"three parts", "digest root:root_passwd extra", http.StatusUnauthorized, errNotAuthenticated},
		{"wrong password", "digest root:wrong", http.StatusForbidden, errNotAuthorized},
		{"read only", "digest reader:pw", http.StatusForbidden, errNotAuthorized},
		{"all but admin", "digest almost:pw", http.StatusForbidden, errNotAuthorized},
		{"ip, no ip entry", "ip", http.StatusForbidden, errNotAuthorized},
		{"owner", "digest root:root_passwd", http.StatusOK, ""},
		{"super user", "digest super:s3cret", http.StatusOK, ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/commands/snapshot", nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d %q, want %d", tt.name, resp.StatusCode, body, tt.status)
			continue
		}
		if tt.status == http.StatusOK {
			if string(body) != "state bytes" {
				t.Errorf("%s: body %q", tt.name, body)
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || len(m) != 2 || m["command"] != "snapshot" || m["error"] != tt.errMsg {
			t.Errorf("%s: body %s, want command snapshot and error %q", tt.name, body, tt.errMsg)
		}
	}

	// An ip entry for the client's address admits "ip".
	src.rootACL = append(src.rootACL, proto.ACL{Perms: proto.PermAll, ID: proto.ID{Scheme: acl.IP, ID: "127.0.0.1"}})
	if code, _, m := getAuth(t, ts.URL+"/commands/snapshot?streaming=false", "ip"); code != http.StatusOK || m["error"] != nil {
		t.Errorf("ip with an ip entry for 127.0.0.1: %d %v", code, m)
	}
}

// TestSnapshotAuthOrder checks where the credentials are checked, as in
// ZooKeeper: after the serving gate (a server not serving says so, 200,
// whoever asks) and before the snapshot's own checks (a disabled snapshot
// answers 401 to a caller without credentials, 503 only to one with
// them). Commands without an AuthRequest ask for nothing.
func TestSnapshotAuthOrder(t *testing.T) {
	src := newFake()
	src.serving.Store(false)
	ts := newTestServer(t, src, Options{SnapshotEnabled: true})
	if code, _, m := get(t, ts.URL+"/commands/snapshot"); code != http.StatusOK || m["error"] != errNotServing {
		t.Errorf("not serving, no credentials: %d %v", code, m)
	}

	ts = newTestServer(t, newFake(), Options{})
	if code, _, m := get(t, ts.URL+"/commands/snapshot"); code != http.StatusUnauthorized || m["error"] != errAuthMissing {
		t.Errorf("disabled, no credentials: %d %v", code, m)
	}
	if code, _, _ := getAuth(t, ts.URL+"/commands/snapshot", anyDigest); code != http.StatusServiceUnavailable {
		t.Errorf("disabled, credentials: %d, want 503", code)
	}
	for _, c := range commands {
		if c.auth != nil && c.names[0] != snapshotCommand {
			t.Errorf("%s asks for credentials; ZooKeeper's does not", c.names[0])
		}
	}
}
