package cli

import (
	"fmt"
	"strings"

	"github.com/paddockhq/paddock/zk"
)

// Quotas live in znodes, as zkCli keeps them: for a path /a/b, the limits in
// /zookeeper/quota/a/b/zookeeper_limits and the usage (which the server keeps
// up to date) in /zookeeper/quota/a/b/zookeeper_stats, both in StatsTrack's
// text format.
const (
	procZookeeper  = "/zookeeper"
	quotaZookeeper = "/zookeeper/quota"
	limitNode      = "zookeeper_limits"
	statNode       = "zookeeper_stats"
)

func quotaPath(path string) string { return quotaZookeeper + path }
func limitPath(path string) string { return quotaZookeeper + path + "/" + limitNode }
func statPath(path string) string  { return quotaZookeeper + path + "/" + statNode }

var quotaGroup = []groupOpt{{'n', "num soft quota"}, {'b', "bytes soft quota"}, {'N', "num hard quota"}, {'B', "bytes hard quota"}}

func init() {
	register(
		&command{name: "setquota", usage: "-n|-b|-N|-B val path",
			flags: flagSpec{opts: "n:b:N:B:", group: quotaGroup, groupRequired: true}, run: cmdSetQuota},
		&command{name: "listquota", usage: "path", run: cmdListQuota},
		&command{name: "delquota", usage: "[-n|-b|-N|-B] path",
			flags: flagSpec{opts: "nbNB", group: quotaGroup}, run: cmdDelQuota},
	)
}

// soft reports a failure zkCli prints on Err without failing the command.
func (c *call) soft(msg, code string) error {
	if c.text() {
		c.err.WriteString(msg + "\n")
	} else {
		c.json(map[string]any{"error": msg, "code": code})
	}
	return nil
}

// setquota -n|-b|-N|-B val path
func cmdSetQuota(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	if strings.HasPrefix(path, quotaZookeeper) {
		return c.soft("cannot set a quota under the path: "+quotaZookeeper, "BADARGUMENTS")
	}
	quota := newStatsTrack()
	quota.set("count", -1)
	quota.set("bytes", -1)
	quota.set("countHardLimit", -1)
	quota.set("byteHardLimit", -1)
	for _, o := range []struct {
		flag  byte
		key   string
		count bool
	}{{'n', "count", true}, {'b', "bytes", false}, {'N', "countHardLimit", true}, {'B', "byteHardLimit", false}} {
		if !c.f.has(o.flag) {
			continue
		}
		var v int64
		var ok bool
		if o.count {
			var n int32
			n, ok = parseJavaInt(c.f.value(o.flag))
			v = int64(n)
		} else {
			v, ok = parseJavaLong(c.f.value(o.flag))
		}
		if !ok {
			return c.soft("NumberFormatException happens when parsing the option value", "BADARGUMENTS")
		}
		if o.count && v <= 0 {
			return c.soft("the num quota must be greater than zero", "BADARGUMENTS")
		}
		if !o.count && v < 0 {
			return c.soft("the bytes quota must be greater than or equal to zero", "BADARGUMENTS")
		}
		quota.set(o.key, v)
	}
	warnings, err := c.createQuota(path, quota)
	if err != nil {
		return err
	}
	if c.text() {
		for _, w := range warnings {
			c.out.WriteString(w + "\n")
		}
	}
	c.json(map[string]any{"ok": true, "path": path, "warnings": nonNil(warnings)})
	return nil
}

// illegal is zkCli's MalformedPathException for a quota it refuses.
func illegal(msg string) error {
	return &CommandError{Status: 1, Code: "BADARGUMENTS", Message: msg}
}

// createQuota writes quota for path as SetQuotaCommand.createQuota does,
// returning its warnings.
func (c *call) createQuota(path string, quota *statsTrack) ([]string, error) {
	if err := validatePath(path, false); err != nil {
		return nil, c.fail(err, path)
	}
	ok, _, err := c.conn.Exists(c.ctx, path)
	if err != nil {
		return nil, c.fail(err, path)
	}
	if !ok {
		return nil, illegal(path + " does not exist.")
	}
	if err := c.checkChildQuota(path); err != nil {
		return nil, err
	}
	if err := c.checkParentQuota(path); err != nil {
		return nil, err
	}
	create := func(p string, data []byte) error {
		_, err := c.conn.Create(c.ctx, p, data, zk.OpenACL, zk.ModePersistent)
		if err != nil && !isCode(err, -110) {
			return c.fail(err, p)
		}
		return nil
	}
	qp := quotaZookeeper
	if ok, _, err := c.conn.Exists(c.ctx, qp); err != nil {
		return nil, c.fail(err, qp)
	} else if !ok {
		// As zkCli: when /zookeeper exists (under a chroot, say),
		// /zookeeper/quota is not created either, and creating the
		// path's quota znodes below fails.
		_, err := c.conn.Create(c.ctx, procZookeeper, nil, zk.OpenACL, zk.ModePersistent)
		switch {
		case err == nil:
			if err := create(quotaZookeeper, nil); err != nil {
				return nil, err
			}
		case !isCode(err, -110):
			return nil, c.fail(err, procZookeeper)
		}
	}
	for _, part := range strings.Split(path, "/")[1:] {
		qp += "/" + part
		if err := create(qp, nil); err != nil {
			return nil, err
		}
	}
	sp := qp + "/" + statNode
	lp := qp + "/" + limitNode
	exists, _, err := c.conn.Exists(c.ctx, lp)
	if err != nil {
		return nil, c.fail(err, lp)
	}
	if !exists {
		if _, err := c.conn.Create(c.ctx, lp, []byte(quota.String()), zk.OpenACL, zk.ModePersistent); err != nil {
			return nil, c.fail(err, lp)
		}
		stats := newStatsTrack()
		stats.set("count", 0)
		stats.set("bytes", 0)
		if _, err := c.conn.Create(c.ctx, sp, []byte(stats.String()), zk.OpenACL, zk.ModePersistent); err != nil {
			return nil, c.fail(err, sp)
		}
		limits, err := c.readTrack(lp)
		if err != nil {
			return nil, err
		}
		usage, err := c.readTrack(sp)
		if err != nil {
			return nil, err
		}
		return quotaWarnings(limits, usage), nil
	}
	limits, err := c.readTrack(lp)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"count", "bytes", "countHardLimit", "byteHardLimit"} {
		if v := quota.get(k); v > -1 {
			limits.set(k, v)
		}
	}
	usage, err := c.readTrack(sp)
	if err != nil {
		return nil, err
	}
	warnings := quotaWarnings(limits, usage)
	if _, err := c.conn.Set(c.ctx, lp, []byte(limits.String()), -1); err != nil {
		return nil, c.fail(err, lp)
	}
	return warnings, nil
}

// quotaWarnings are SetQuotaCommand.checkQuota's warnings for limits below
// the current usage.
func quotaWarnings(limits, usage *statsTrack) []string {
	var w []string
	count, bytes := usage.get("count"), usage.get("bytes")
	if n := limits.get("count"); n > -1 && n < count || limits.get("countHardLimit") > -1 && limits.get("countHardLimit") < count {
		w = append(w, fmt.Sprintf("[Warning]: the count quota you create is less than the existing count:%d", count))
	}
	if n := limits.get("bytes"); n > -1 && n < bytes || limits.get("byteHardLimit") > -1 && limits.get("byteHardLimit") < bytes {
		w = append(w, fmt.Sprintf("[Warning]: the bytes quota you create is less than the existing bytes:%d", bytes))
	}
	return w
}

func isCode(err error, code int32) bool {
	c, ok := keeperCode(err)
	return ok && c == code
}

// readTrack reads a StatsTrack znode.
func (c *call) readTrack(p string) (*statsTrack, error) {
	data, _, err := c.conn.Get(c.ctx, p)
	if err != nil {
		return nil, c.fail(err, p)
	}
	st, err := parseStatsTrack(string(data))
	if err != nil {
		return nil, &CommandError{Status: 1, Code: "ERROR", Message: err.Error()}
	}
	return st, nil
}

// checkChildQuota refuses a quota on path when a znode below it has one.
func (c *call) checkChildQuota(path string) error {
	root := quotaPath(path)
	err := c.visit(root, false, func(p string) error {
		children, _, err := c.conn.Children(c.ctx, p)
		if err != nil {
			return nil
		}
		for _, ch := range children {
			if p != root && ch == limitNode {
				return illegal(path + " has a child " + strings.TrimPrefix(p, quotaZookeeper) + " which has a quota")
			}
		}
		return nil
	})
	if ce, ok := err.(*CommandError); ok && ce.Code == "NONODE" {
		return nil
	}
	return err
}

// checkParentQuota refuses a quota on path when a znode above it has one.
func (c *call) checkParentQuota(path string) error {
	parts := strings.Split(path, "/")
	qp := quotaZookeeper
	for i := 1; i < len(parts)-1; i++ {
		qp += "/" + parts[i]
		children, _, err := c.conn.Children(c.ctx, qp)
		if isCode(err, -101) {
			return nil
		}
		if err != nil {
			return c.fail(err, qp)
		}
		if len(children) == 0 {
			return nil
		}
		for _, ch := range children {
			if qp != quotaPath(path) && ch == limitNode {
				return illegal(path + " has a parent " + strings.TrimPrefix(qp, quotaZookeeper) + " which has a quota")
			}
		}
	}
	return nil
}

// listquota path
func cmdListQuota(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	if c.text() {
		c.err.WriteString("absolute path is " + limitPath(path) + "\n")
	}
	// The client refuses an invalid quota path ("listquota /" reads
	// /zookeeper/quota//zookeeper_limits) with its IllegalArgumentException,
	// which zkCli prints.
	if err := validatePath(limitPath(path), false); err != nil {
		return c.fail(err, path)
	}
	limits, err := c.readTrack(limitPath(path))
	if err == nil {
		var usage *statsTrack
		if usage, err = c.readTrack(statPath(path)); err == nil {
			if c.text() {
				c.out.WriteString("Output quota for " + path + " " + limits.String() + "\n")
				c.out.WriteString("Output stat for " + path + " " + usage.String() + "\n")
			}
			c.json(map[string]any{"path": path, "quota": limits.json(), "stats": usage.json()})
			return nil
		}
	}
	if ce, ok := err.(*CommandError); ok && ce.Code == "NONODE" {
		return c.soft("quota for "+path+" does not exist.", "NONODE")
	}
	return err
}

// delquota [-n|-b|-N|-B] path
func cmdDelQuota(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	lp := limitPath(path)
	if err := validatePath(lp, false); err != nil {
		return c.fail(err, lp)
	}
	ok, _, err := c.conn.Exists(c.ctx, lp)
	if err != nil {
		return c.fail(err, lp)
	}
	if !ok {
		if c.text() {
			c.out.WriteString("Quota does not exist for " + path + "\n")
		}
		c.json(map[string]any{"path": path, "exists": false})
		return nil
	}
	limits, err := c.readTrack(lp)
	if err != nil {
		if ce, ok := err.(*CommandError); ok && ce.Code == "NONODE" {
			return c.soft("quota for "+path+" does not exist.", "NONODE")
		}
		return err
	}
	flagged := false
	for _, o := range []struct {
		flag byte
		key  string
	}{{'n', "count"}, {'b', "bytes"}, {'N', "countHardLimit"}, {'B', "byteHardLimit"}} {
		if c.f.has(o.flag) {
			flagged = true
			limits.set(o.key, -1)
		}
	}
	if flagged {
		if _, err := c.conn.Set(c.ctx, lp, []byte(limits.String()), -1); err != nil {
			return c.fail(err, lp)
		}
		c.json(map[string]any{"ok": true, "path": path})
		return nil
	}
	parent := quotaPath(path)
	children, _, err := c.conn.Children(c.ctx, parent)
	if err != nil {
		return c.deleteFailure(err, path, parent)
	}
	for _, ch := range children {
		if err := c.conn.Delete(c.ctx, parent+"/"+ch, -1); err != nil {
			return c.deleteFailure(err, path, parent+"/"+ch)
		}
	}
	// Remove the quota znodes left empty, up to /zookeeper/quota.
	for p := parent; p != quotaZookeeper && strings.HasPrefix(p, quotaZookeeper+"/"); p = p[:strings.LastIndexByte(p, '/')] {
		children, _, err := c.conn.Children(c.ctx, p)
		if err != nil {
			return c.deleteFailure(err, path, p)
		}
		if len(children) > 0 {
			break
		}
		if err := c.conn.Delete(c.ctx, p, -1); err != nil {
			return c.deleteFailure(err, path, p)
		}
	}
	c.json(map[string]any{"ok": true, "path": path})
	return nil
}

func (c *call) deleteFailure(err error, path, p string) error {
	if isCode(err, -101) {
		return c.soft("quota for "+path+" does not exist.", "NONODE")
	}
	return c.fail(err, p)
}
