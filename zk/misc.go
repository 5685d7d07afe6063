package zk

import (
	"context"

	"github.com/paddockhq/paddock/internal/proto"
)

// ---- getEphemerals ----

func (c *Conn) ephemeralsCall(prefix string) (*call, *proto.GetEphemeralsResponse, error) {
	if err := checkPath(proto.OpGetEphemerals, prefix, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.GetEphemeralsResponse{}
	return c.newCall(proto.OpGetEphemerals, prefix, &proto.GetEphemeralsRequest{PrefixPath: c.root.server(prefix)}, resp), resp, nil
}

func (c *Conn) clientPaths(ps []string) []string {
	for i, p := range ps {
		ps[i] = c.root.client(p)
	}
	return ps
}

// GetEphemerals returns the paths of this session's ephemeral znodes whose
// path starts with prefix ("/" for all of them).
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	cl, resp, err := c.ephemeralsCall(prefix)
	if err != nil {
		return nil, err
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return c.clientPaths(resp.Ephemerals), nil
}

// GetEphemeralsAsync is GetEphemerals that calls cb.
func (c *Conn) GetEphemeralsAsync(ctx context.Context, prefix string, cb func(paths []string, err error)) {
	cl, resp, err := c.ephemeralsCall(prefix)
	if err != nil {
		c.failAsync(func() { cb(nil, err) })
		return
	}
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb(nil, cl.err)
			return
		}
		cb(c.clientPaths(resp.Ephemerals), nil)
	})
}

// ---- getAllChildrenNumber ----

func (c *Conn) allChildrenCall(path string) (*call, *proto.GetAllChildrenNumberResponse, error) {
	if err := checkPath(proto.OpGetAllChildrenNumber, path, false); err != nil {
		return nil, nil, err
	}
	resp := &proto.GetAllChildrenNumberResponse{}
	return c.newCall(proto.OpGetAllChildrenNumber, path, &proto.GetAllChildrenNumberRequest{Path: c.root.server(path)}, resp), resp, nil
}

// GetAllChildrenNumber returns the number of descendants of the znode.
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int, error) {
	cl, resp, err := c.allChildrenCall(path)
	if err != nil {
		return 0, err
	}
	if err := c.do(ctx, cl); err != nil {
		return 0, err
	}
	return int(resp.TotalNumber), nil
}

// GetAllChildrenNumberAsync is GetAllChildrenNumber that calls cb.
func (c *Conn) GetAllChildrenNumberAsync(ctx context.Context, path string, cb func(n int, err error)) {
	cl, resp, err := c.allChildrenCall(path)
	if err != nil {
		c.failAsync(func() { cb(0, err) })
		return
	}
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb(0, cl.err)
			return
		}
		cb(int(resp.TotalNumber), nil)
	})
}

// ---- whoAmI ----

// ClientInfo is one identity the session is authenticated as.
type ClientInfo struct {
	AuthScheme string // "ip", "digest", "super", ...
	User       string // the id within the scheme
}

func (c *Conn) whoAmICall() (*call, *proto.WhoAmIResponse) {
	resp := &proto.WhoAmIResponse{}
	return c.newCall(proto.OpWhoAmI, "", &proto.Empty{}, resp), resp
}

func clientInfos(resp *proto.WhoAmIResponse) []ClientInfo {
	out := make([]ClientInfo, len(resp.ClientInfo))
	for i, ci := range resp.ClientInfo {
		out[i] = ClientInfo{AuthScheme: ci.AuthScheme, User: ci.User}
	}
	return out
}

// WhoAmI returns the identities the server knows this session by.
func (c *Conn) WhoAmI(ctx context.Context) ([]ClientInfo, error) {
	cl, resp := c.whoAmICall()
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return clientInfos(resp), nil
}

// WhoAmIAsync is WhoAmI that calls cb.
func (c *Conn) WhoAmIAsync(ctx context.Context, cb func(ids []ClientInfo, err error)) {
	cl, resp := c.whoAmICall()
	c.start(ctx, cl, func() {
		if cl.err != nil {
			cb(nil, cl.err)
			return
		}
		cb(clientInfos(resp), nil)
	})
}

// ---- auth ----

func (c *Conn) authCall(scheme string, auth []byte) *call {
	a := authInfo{scheme: scheme, auth: append([]byte(nil), auth...)}
	c.mu.Lock()
	c.auth = append(c.auth, a)
	c.mu.Unlock()
	return c.newCall(proto.OpAuth, "", &proto.AuthPacket{Scheme: a.scheme, Auth: a.auth}, nil)
}

// AddAuth adds credentials to the session ("digest" with "user:password" is
// ZooKeeper's built-in scheme) and waits for the server to accept them.
// The credentials are sent again on every reconnection. A refusal ends the
// session in StateAuthFailed, as in ZooKeeper.
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	// A done ctx sends nothing: the credentials are not kept for
	// reconnections either.
	if err := ctx.Err(); err != nil {
		return opError(proto.OpAuth, "", err)
	}
	return c.do(ctx, c.authCall(scheme, auth))
}

// AddAuthAsync is AddAuth that calls cb.
func (c *Conn) AddAuthAsync(ctx context.Context, scheme string, auth []byte, cb func(err error)) {
	if err := ctx.Err(); err != nil {
		err = opError(proto.OpAuth, "", err)
		c.failAsync(func() { cb(err) })
		return
	}
	cl := c.authCall(scheme, auth)
	c.start(ctx, cl, func() { cb(cl.err) })
}

// ---- getConfig ----

// configZnode is the znode holding the ensemble's configuration.
const configZnode = "/zookeeper/config"

func (c *Conn) configCall(w Watcher) (*call, *proto.GetDataResponse) {
	resp := &proto.GetDataResponse{}
	// The absolute path, not c.root.server's: the configuration is outside
	// any chroot.
	cl := c.newCall(proto.OpGetData, configZnode, &proto.GetDataRequest{Path: configZnode, Watch: w != nil}, resp)
	cl.watch, cl.watcher = watchKindIf(w, watchData), w
	return cl, resp
}

// GetConfig returns the ensemble's configuration, the data of
// /zookeeper/config, and its Stat. Like ZooKeeper's getConfig it reads that
// absolute path whatever the connect string's chroot; Get would read
// /zookeeper/config under the chroot.
func (c *Conn) GetConfig(ctx context.Context) ([]byte, *Stat, error) {
	return c.GetConfigW(ctx, nil)
}

// GetConfigW is GetConfig that also leaves a data watch for w on the
// configuration. Its events carry the path /zookeeper/config. As in
// ZooKeeper's Java client, the watch is kept under that path as if it were
// a path under the chroot, so under a chroot a reconnect sets it again on
// the chroot's /zookeeper/config.
func (c *Conn) GetConfigW(ctx context.Context, w Watcher) ([]byte, *Stat, error) {
	cl, resp := c.configCall(w)
	if err := c.do(ctx, cl); err != nil {
		return nil, nil, err
	}
	return resp.Data, statFrom(&resp.Stat), nil
}
