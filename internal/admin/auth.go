package admin

import (
	"net"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/proto"
)

// Messages of the auth failures, as ZooKeeper words them.
const (
	errAuthMissing      = "Auth info is missing for the command"
	errNotAuthenticated = "Not authenticated"
	errNotAuthorized    = "Not authorized"
	errAuthFailed       = "Error occurred during auth"
)

// authRequest is the permission a command needs on a node (ZooKeeper's
// AuthRequest).
type authRequest struct {
	perm int32
	path string
}

// authorize checks r's credentials against need, as ZooKeeper 3.9's
// Commands.runCommand does for a command with an AuthRequest. The
// Authorization header names a scheme and its data, "<scheme> <data>":
//
//   - "digest user:password" authenticates as the digest identity
//     user:base64(sha1(user:password)), and as the super user too when that
//     identity is the configured super digest;
//   - "ip" authenticates as the client's address (the TCP peer's; Paddock
//     does not read X-Forwarded-For).
//
// The identities must then hold every bit of need.perm on the ACL of
// need.path, as a client's would (acl.Allowed). It returns 0 when the
// request may go on, else ZooKeeper's status and message: 401 without the
// header or when it names no known scheme, 403 when a permission is
// missing.
func (s *Server) authorize(r *http.Request, need *authRequest) (int, string) {
	header, ok := r.Header["Authorization"]
	if !ok || len(header) == 0 {
		return http.StatusUnauthorized, errAuthMissing
	}
	ids, ok := s.authenticate(r, header[0])
	if !ok {
		return http.StatusUnauthorized, errNotAuthenticated
	}
	list, ok := s.src.ACL(need.path)
	if !ok {
		// ZooKeeper fails the same way (NoNode is no auth failure).
		return http.StatusInternalServerError, errAuthFailed
	}
	for bit := int32(1); bit != 0 && bit <= need.perm; bit <<= 1 {
		if need.perm&bit != 0 && !acl.Allowed(list, bit, ids) {
			return http.StatusForbidden, errNotAuthorized
		}
	}
	return 0, ""
}

// authenticate turns an Authorization header into identities, false when
// it names no scheme Paddock knows or lacks what the scheme needs.
func (s *Server) authenticate(r *http.Request, header string) ([]proto.ID, bool) {
	// Java's header.split(" "): split at every space, drop the trailing
	// empty parts. A scheme alone or a scheme and its data.
	parts := strings.Split(header, " ")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) != 1 && len(parts) != 2 {
		return nil, false
	}
	switch parts[0] {
	case acl.Digest:
		if len(parts) != 2 {
			return nil, false
		}
		id := acl.DigestFromAuth([]byte(parts[1]))
		ids := []proto.ID{{Scheme: acl.Digest, ID: id}}
		if s.superDigest != "" && id == s.superDigest {
			ids = append([]proto.ID{{Scheme: acl.Super, ID: ""}}, ids...)
		}
		return ids, true
	case acl.IP:
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil || host == "" {
			return nil, false
		}
		return []proto.ID{{Scheme: acl.IP, ID: host}}, true
	}
	return nil, false
}
