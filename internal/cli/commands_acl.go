package cli

import (
	"strings"

	"github.com/paddockhq/paddock/zk"
)

func init() {
	register(
		&command{name: "getAcl", usage: "[-s] path", flags: flagSpec{opts: "s"}, run: cmdGetACL},
		&command{name: "setAcl", usage: "[-s] [-v version] [-R] path acl", flags: flagSpec{opts: "sv:R"}, run: cmdSetACL},
		&command{name: "addauth", usage: "scheme auth", run: cmdAddAuth},
		&command{name: "whoami", usage: "", raw: true, run: cmdWhoAmI},
		&command{name: "addWatch", usage: "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE", flags: flagSpec{opts: "m:"}, run: cmdAddWatch},
		&command{name: "removewatches", usage: "path [-c|-d|-a] [-l]", flags: flagSpec{opts: "cdal"}, run: cmdRemoveWatches},
	)
}

// jsonACL is an ACL entry in --json output.
type jsonACL struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

// getAcl [-s] path
func cmdGetACL(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	acl, st, err := c.conn.GetACL(c.ctx, path)
	if err != nil {
		return c.fail(err, path)
	}
	if c.text() {
		for _, a := range acl {
			c.out.WriteString(javaID(a.ID) + ": " + PermString(a.Perms) + "\n")
		}
		if c.f.has('s') {
			writeStat(&c.out, st, c.s.loc)
		}
		return nil
	}
	list := make([]jsonACL, len(acl))
	for i, a := range acl {
		list[i] = jsonACL{a.ID.Scheme, a.ID.ID, PermString(a.Perms)}
	}
	res := map[string]any{"path": path, "acl": list}
	if c.f.has('s') {
		res["stat"] = toJSONStat(st)
	}
	c.json(res)
	return nil
}

// setAcl [-s] [-v version] [-R] path acl
func cmdSetACL(c *call) error {
	if c.nargs() < 3 {
		return c.usageError()
	}
	path := c.arg(1)
	acl, warnings := ParseACL(c.arg(2))
	c.warn(warnings)
	version, err := c.versionFlag()
	if err != nil {
		return err
	}
	if c.f.has('R') {
		// Like zkCli, a znode that refuses is reported (without a newline,
		// as zkCli prints it) and the walk goes on.
		var failures []string
		err := c.visit(path, false, func(p string) error {
			var msg string
			if len(acl) == 0 {
				msg = keeperMessage(-114, "")
			} else if _, err := c.conn.SetACL(c.ctx, p, acl, version); err != nil {
				code, ok := keeperCode(err)
				if !ok {
					return c.fail(err, p)
				}
				msg = keeperMessage(code, p)
			}
			if msg != "" {
				failures = append(failures, msg)
				if c.text() {
					c.out.WriteString(msg)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		c.json(map[string]any{"path": path, "failures": nonNil(failures)})
		return nil
	}
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	if len(acl) == 0 {
		return c.fail(zk.ErrInvalidACL, "")
	}
	st, err := c.conn.SetACL(c.ctx, path, acl, version)
	if err != nil {
		return c.fail(err, path)
	}
	if c.text() {
		if c.f.has('s') {
			writeStat(&c.out, st, c.s.loc)
		}
		return nil
	}
	c.json(map[string]any{"path": path, "stat": toJSONStat(st)})
	return nil
}

// addauth scheme auth
func cmdAddAuth(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	var auth []byte
	if c.nargs() >= 3 {
		auth = []byte(c.arg(2))
	}
	if err := c.conn.AddAuth(c.ctx, c.arg(1), auth); err != nil {
		return c.fail(err, "")
	}
	c.json(map[string]any{"ok": true})
	return nil
}

// whoami
func cmdWhoAmI(c *call) error {
	ids, err := c.conn.WhoAmI(c.ctx)
	if err != nil {
		return c.fail(err, "")
	}
	if c.text() {
		c.out.WriteString("Auth scheme: User\n")
		for _, id := range ids {
			c.out.WriteString(id.AuthScheme + ": " + id.User + "\n")
		}
		return nil
	}
	list := make([]map[string]string, len(ids))
	for i, id := range ids {
		list[i] = map[string]string{"scheme": id.AuthScheme, "user": id.User}
	}
	c.json(map[string]any{"ids": list})
	return nil
}

// addWatch [-m mode] path
func cmdAddWatch(c *call) error {
	if c.nargs() != 2 {
		return c.usageError()
	}
	mode := zk.AddWatchPersistentRecursive
	if c.f.has('m') {
		switch strings.ToUpper(c.f.value('m')) {
		case "PERSISTENT":
			mode = zk.AddWatchPersistent
		case "PERSISTENT_RECURSIVE":
			mode = zk.AddWatchPersistentRecursive
		default:
			return c.usageError()
		}
	}
	path := c.arg(1)
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	if err := c.conn.AddWatch(c.ctx, path, c.watcher(), mode); err != nil {
		return c.fail(err, path)
	}
	c.json(map[string]any{"ok": true, "path": path})
	return nil
}

// removewatches path [-c|-d|-a] [-l]
func cmdRemoveWatches(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	wtype := zk.WatcherAny
	switch {
	case c.f.has('c'):
		wtype = zk.WatcherChildren
	case c.f.has('d'):
		wtype = zk.WatcherData
	}
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	if err := c.conn.RemoveWatches(c.ctx, path, nil, wtype, c.f.has('l')); err != nil {
		code, ok := keeperCode(err)
		if ok && code == -121 {
			// CliWrapperException has no text of its own for NoWatcher.
			return &CommandError{Status: 1, Code: codeNames[code], Message: keeperMessage(code, path)}
		}
		return c.fail(err, path)
	}
	c.json(map[string]any{"ok": true, "path": path})
	return nil
}
