package zk

import (
	"fmt"
	"net"
	"strings"

	"github.com/paddockhq/paddock/internal/zpath"
)

// DefaultPort is the client port used for hosts given without one.
const DefaultPort = "2181"

// ParseConnectString splits a ZooKeeper connect string,
// "host1:port1,host2:port2,.../optional/chroot", into host:port addresses
// and the chroot ("" when there is none). A host without a port gets
// DefaultPort; IPv6 addresses are written in brackets ("[::1]:2181").
// As in ZooKeeper, the chroot starts at the first '/' and "/" alone means no
// chroot.
func ParseConnectString(s string) (hosts []string, chroot string, err error) {
	hostPart := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hostPart, chroot = s[:i], s[i:]
		if chroot == "/" {
			chroot = ""
		} else if err := zpath.Validate(chroot); err != nil {
			return nil, "", fmt.Errorf("%w %q: chroot: %v", ErrBadConnectString, s, err)
		}
	}
	for _, h := range strings.Split(hostPart, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			// No port: "host" or "[v6]" or a bare IPv6 address.
			host, port = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), DefaultPort
			if strings.ContainsAny(host, "[]") || strings.HasPrefix(h, "[") != strings.HasSuffix(h, "]") {
				return nil, "", fmt.Errorf("%w %q: host %q", ErrBadConnectString, s, h)
			}
		}
		if host == "" || port == "" {
			return nil, "", fmt.Errorf("%w %q: host %q", ErrBadConnectString, s, h)
		}
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	if len(hosts) == 0 {
		return nil, "", fmt.Errorf("%w %q: no hosts", ErrBadConnectString, s)
	}
	return hosts, chroot, nil
}

// chroot maps paths between the caller's view and the server's.
type chroot string

// server returns the server-side path of a client path.
func (c chroot) server(p string) string {
	if c == "" {
		return p
	}
	if p == "/" {
		return string(c)
	}
	return string(c) + p
}

// client returns the client-side path of a server path: "/" for the
// chroot itself, else the chroot is cut off as a string prefix, as
// ZooKeeper's Java client does (ClientCnxn's stripChroot), so that a
// sequential node created at "/" under the chroot "/app" is "0000000001",
// the part after "/app". Paths that do not start with the chroot are
// returned unchanged.
func (c chroot) client(p string) string {
	if c == "" {
		return p
	}
	if p == string(c) {
		return "/"
	}
	if rest, ok := strings.CutPrefix(p, string(c)); ok {
		return rest
	}
	return p
}

// created returns the client-side path of a created znode's server path:
// the chroot cut off as a string prefix, as the Java client's create does
// (the path's substring after the chroot), so that the chroot's own znode,
// created at "/", is "" (client makes it "/").
func (c chroot) created(p string) string {
	if rest, ok := strings.CutPrefix(p, string(c)); ok && c != "" {
		return rest
	}
	return p
}
