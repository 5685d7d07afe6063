package cli

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/javastr"
	"github.com/paddockhq/paddock/zk"
)

// command is one of zkCli's commands (a CliCommand).
type command struct {
	name  string
	usage string // zkCli's option string
	flags flagSpec
	// raw commands take their words as they are, without option parsing
	// (zkCli's whoami and close ignore everything after the name).
	raw bool
	run func(c *call) error
}

// commands are the commands run on the session, by name.
var commands = map[string]*command{}

func register(cmds ...*command) {
	for _, c := range cmds {
		commands[c.name] = c
	}
}

func init() {
	register(
		&command{name: "ls", usage: "[-s] [-w] [-R] path", flags: flagSpec{opts: "?swR"}, run: cmdLs},
		&command{name: "get", usage: "[-s] [-w] path", flags: flagSpec{opts: "sw"}, run: cmdGet},
		&command{name: "set", usage: "[-s] [-v version] path data", flags: flagSpec{opts: "sv:"}, run: cmdSet},
		&command{name: "create", usage: "[-s] [-e] [-c] [-t ttl] path [data] [acl]", flags: flagSpec{opts: "esct:"}, run: cmdCreate},
		&command{name: "delete", usage: "[-v version] path", flags: flagSpec{opts: "v:"}, run: cmdDelete},
		&command{name: "deleteall", usage: "path [-b batch size]", flags: flagSpec{opts: "b:"}, run: cmdDeleteAll},
		&command{name: "stat", usage: "[-w] path", flags: flagSpec{opts: "w"}, run: cmdStat},
		&command{name: "sync", usage: "path", run: cmdSync},
		&command{name: "getEphemerals", usage: "path", run: cmdGetEphemerals},
		&command{name: "getAllChildrenNumber", usage: "path", run: cmdGetAllChildrenNumber},
		&command{name: "config", usage: "[-c] [-w] [-s]", flags: flagSpec{opts: "swc"}, run: cmdConfig},
		&command{name: "version", usage: "", run: cmdVersion},
		&command{name: "close", usage: "", raw: true, run: cmdClose},
		&command{name: "reconfig", usage: "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]", raw: true, run: cmdReconfig},
	)
}

// reparse handles zkCli's deprecated "cmd path watch" forms: the third word
// is replaced with "-w" and the words parsed again.
func (c *call) reparse(words []string, warning string) error {
	c.stderr(warning)
	w := append([]string(nil), words...)
	w[2] = "-w"
	f, err := parseFlags(c.cmd.flags, w)
	if err != nil {
		return &CommandError{Status: 1, Code: "USAGE", Message: err.Error()}
	}
	c.f = f
	return nil
}

// watchedPath returns the valid path argument of get or stat, which zkCli
// 3.8 still accepts in the deprecated "cmd path watch" form (printing
// deprecation and reading it as -w).
func (c *call) watchedPath(deprecation string) (string, error) {
	if c.nargs() < 2 {
		return "", c.usageError()
	}
	if c.nargs() > 2 {
		if err := c.reparse(c.words, deprecation); err != nil {
			return "", err
		}
	}
	path := c.arg(1)
	if err := validatePath(path, false); err != nil {
		return "", c.fail(err, path)
	}
	return path, nil
}

// ls [-s] [-w] [-R] path
func cmdLs(c *call) error {
	if c.f.has('?') {
		c.out.WriteString("usage: ls [options] path\n -?   help\n -R   recurse\n -s   stat\n -w   watch\n")
	}
	if c.nargs() > 2 {
		if err := c.reparse(c.words, "'ls path [watch]' has been deprecated. Please use 'ls [-w] path' instead."); err != nil {
			return err
		}
	}
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	watch := c.f.has('w')
	if c.f.has('R') {
		var paths []string
		err := c.visit(path, watch, func(p string) error {
			paths = append(paths, p)
			if c.text() {
				c.out.WriteString(p + "\n")
			}
			return nil
		})
		if err != nil {
			return err
		}
		c.json(map[string]any{"path": path, "paths": nonNil(paths)})
		return nil
	}
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	var children []string
	var st *zk.Stat
	var err error
	if watch {
		children, st, err = c.conn.ChildrenW(c.ctx, path, c.watcher())
	} else {
		children, st, err = c.conn.Children(c.ctx, path)
	}
	if err != nil {
		return c.fail(err, path)
	}
	sort.Strings(children)
	if c.text() {
		c.out.WriteString("[" + strings.Join(children, ", ") + "]\n")
		if c.f.has('s') {
			writeStat(&c.out, st, c.s.loc)
		}
		return nil
	}
	res := map[string]any{"path": path, "children": nonNil(children)}
	if c.f.has('s') {
		res["stat"] = toJSONStat(st)
	}
	c.json(res)
	return nil
}

// visit walks the subtree at path as ZooKeeper's ZKUtil.visitSubTreeDFS: the
// root, then for each znode all its children (sorted), then each child's
// subtree. A znode deleted during the walk is skipped.
func (c *call) visit(path string, watch bool, fn func(p string) error) error {
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	var err error
	if watch {
		_, _, err = c.conn.GetW(c.ctx, path, c.watcher())
	} else {
		_, _, err = c.conn.Get(c.ctx, path)
	}
	if err != nil {
		return c.fail(err, path)
	}
	if err := fn(path); err != nil {
		return err
	}
	return c.visitChildren(path, watch, fn)
}

func (c *call) visitChildren(path string, watch bool, fn func(p string) error) error {
	var children []string
	var err error
	if watch {
		children, _, err = c.conn.ChildrenW(c.ctx, path, c.watcher())
	} else {
		children, _, err = c.conn.Children(c.ctx, path)
	}
	if code, ok := keeperCode(err); ok && code == -101 {
		return nil
	}
	if err != nil {
		return c.fail(err, path)
	}
	sort.Strings(children)
	for _, ch := range children {
		if err := fn(joinPath(path, ch)); err != nil {
			return err
		}
	}
	for _, ch := range children {
		if err := c.visitChildren(joinPath(path, ch), watch, fn); err != nil {
			return err
		}
	}
	return nil
}

func joinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// watcher returns the session's printer, the watcher of every watch the
// shell sets.
func (c *call) watcher() zk.Watcher { return c.s.printer }

// jsonData adds data to a JSON result: a string when it is valid UTF-8, else
// base64 with "encoding": "base64"; null for a znode without data.
func jsonData(res map[string]any, data []byte) {
	switch {
	case data == nil:
		res["data"] = nil
	case utf8.Valid(data):
		res["data"] = string(data)
	default:
		res["data"] = base64.StdEncoding.EncodeToString(data)
		res["encoding"] = "base64"
	}
}

// get [-s] [-w] path
func cmdGet(c *call) error {
	path, err := c.watchedPath("'get path [watch]' has been deprecated. Please use 'get [-s] [-w] path' instead.")
	if err != nil {
		return err
	}
	var data []byte
	var st *zk.Stat
	if c.f.has('w') {
		data, st, err = c.conn.GetW(c.ctx, path, c.watcher())
	} else {
		data, st, err = c.conn.Get(c.ctx, path)
	}
	if err != nil {
		return c.fail(err, path)
	}
	if c.text() {
		if data == nil {
			c.out.WriteString("null\n")
		} else {
			c.out.WriteString(javastr.FromUTF8(data) + "\n")
		}
		if c.f.has('s') {
			writeStat(&c.out, st, c.s.loc)
		}
		return nil
	}
	res := map[string]any{"path": path}
	jsonData(res, data)
	if c.f.has('s') {
		res["stat"] = toJSONStat(st)
	}
	c.json(res)
	return nil
}

// versionFlag reads -v, -1 when absent.
func (c *call) versionFlag() (int32, error) {
	if !c.f.has('v') {
		return -1, nil
	}
	v, ok := parseJavaInt(c.f.value('v'))
	if !ok {
		return 0, &CommandError{Status: 1, Code: "USAGE", Message: "-v argument must be an int value"}
	}
	return v, nil
}

// set [-s] [-v version] path data
func cmdSet(c *call) error {
	if c.nargs() < 3 {
		return c.usageError()
	}
	path := c.arg(1)
	version, err := c.versionFlag()
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	st, err := c.conn.Set(c.ctx, path, []byte(c.arg(2)), version)
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

// maxTTL is the largest TTL ZooKeeper accepts (EphemeralType.MAX_TTL).
const maxTTL = 0xFFFFFFFFFF

// create [-s] [-e] [-c] [-t ttl] path [data] [acl]
func cmdCreate(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	hasE, hasS, hasC, hasT := c.f.has('e'), c.f.has('s'), c.f.has('c'), c.f.has('t')
	malformed := func(msg string) error { return &CommandError{Status: 1, Code: "USAGE", Message: msg} }
	if hasC && (hasE || hasS) {
		return malformed("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	}
	var ttl int64
	if hasT {
		var ok bool
		if ttl, ok = parseJavaLong(c.f.value('t')); !ok {
			return malformed("-t argument must be a long value")
		}
	}
	if hasT && hasE {
		return malformed("TTLs cannot be used with Ephemeral znodes")
	}
	if hasT && hasC {
		return malformed("TTLs cannot be used with Container znodes")
	}
	mode := zk.ModePersistent
	switch {
	case hasE && hasS:
		mode = zk.ModeEphemeralSequential
	case hasE:
		mode = zk.ModeEphemeral
	case hasS && hasT:
		mode = zk.ModePersistentSequentialWithTTL
	case hasS:
		mode = zk.ModePersistentSequential
	case hasC:
		mode = zk.ModeContainer
	case hasT:
		mode = zk.ModePersistentWithTTL
	}
	if hasT && (ttl <= 0 || ttl > maxTTL) {
		return malformed(fmt.Sprintf("ttl must be positive and cannot be larger than: %d", int64(maxTTL)))
	}
	path := c.arg(1)
	var data []byte
	if c.nargs() > 2 {
		data = []byte(c.arg(2))
	}
	acl := zk.OpenACL
	if c.nargs() > 3 {
		var warnings []string
		acl, warnings = ParseACL(c.arg(3))
		c.warn(warnings)
	}
	if err := validatePath(path, mode.IsSequential()); err != nil {
		return c.fail(err, path)
	}
	if len(acl) == 0 {
		c.stderr(keeperMessage(-114, ""))
		return c.fail(zk.ErrInvalidACL, "")
	}
	var created string
	var err error
	if hasT {
		created, _, err = c.conn.CreateTTL(c.ctx, path, data, acl, mode, time.Duration(ttl)*time.Millisecond)
	} else {
		created, err = c.conn.Create(c.ctx, path, data, acl, mode)
	}
	if err != nil {
		switch code, _ := keeperCode(err); code {
		case -120:
			c.stderr("Unable to create ephemeral node on a local session")
		case -114:
			c.stderr(keeperMessage(code, path))
		}
		return c.fail(err, path)
	}
	if c.text() {
		c.err.WriteString("Created " + created + "\n")
	}
	c.json(map[string]any{"created": created})
	return nil
}

// stderr prints a line zkCli writes to standard error besides the
// command's error, in text mode only: in JSON mode the error object says it
// all, and only ACL-parsing warnings go to standard error.
func (c *call) stderr(line string) {
	if c.text() {
		c.err.WriteString(line + "\n")
	}
}

// warn prints zkCli's warnings (ACL parsing) on Err.
func (c *call) warn(warnings []string) {
	for _, w := range warnings {
		c.err.WriteString(w + "\n")
	}
}

// delete [-v version] path
func cmdDelete(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	if c.nargs() > 2 {
		// zkCli warns and parses the same words again: the extra word is
		// ignored.
		c.stderr("'delete path [version]' has been deprecated. Please use 'delete [-v version] path' instead.")
	}
	path := c.arg(1)
	version, err := c.versionFlag()
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	if err := c.conn.Delete(c.ctx, path, version); err != nil {
		return c.fail(err, path)
	}
	c.json(map[string]any{"deleted": path})
	return nil
}

// deleteall path [-b batch size]
func cmdDeleteAll(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	batch := int32(1000)
	if c.f.has('b') {
		var ok bool
		if batch, ok = parseJavaInt(c.f.value('b')); !ok {
			return &CommandError{Status: 1, Code: "USAGE", Message: "-b argument must be an int value"}
		}
	}
	path := c.arg(1)
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	// List the subtree breadth first, as ZKUtil.listSubTreeBFS, then delete
	// from the end (leaves first) in transactions of batch znodes; with a
	// batch size of 0 or less, one znode at a time, stopping at the first
	// failure, which fails the command (ZKUtil.deleteRecursive).
	tree := []string{path}
	for i := 0; i < len(tree); i++ {
		children, _, err := c.conn.Children(c.ctx, tree[i])
		if err != nil {
			return c.fail(err, tree[i])
		}
		for _, ch := range children {
			tree = append(tree, joinPath(tree[i], ch))
		}
	}
	if batch <= 0 {
		for i := len(tree) - 1; i >= 0; i-- {
			if err := c.conn.Delete(c.ctx, tree[i], -1); err != nil {
				return c.fail(err, tree[i])
			}
		}
		c.json(map[string]any{"deleted": path})
		return nil
	}
	ok := true
	var ops []zk.Op
	for i := len(tree) - 1; i >= 0; i-- {
		ops = append(ops, &zk.DeleteOp{Path: tree[i], Version: -1})
		if len(ops) == int(batch) || i == 0 {
			if _, err := c.conn.Multi(c.ctx, ops...); err != nil {
				ok = false
				break
			}
			ops = nil
		}
	}
	if !ok {
		msg := "Failed to delete some node(s) in the subtree!"
		if c.text() {
			c.err.WriteString(msg + "\n")
		}
		c.json(map[string]any{"path": path, "deleted": false, "warning": msg})
		return nil
	}
	c.json(map[string]any{"deleted": path})
	return nil
}

// stat [-w] path
func cmdStat(c *call) error {
	path, err := c.watchedPath("'stat path [watch]' has been deprecated. Please use 'stat [-w] path' instead.")
	if err != nil {
		return err
	}
	var ok bool
	var st *zk.Stat
	if c.f.has('w') {
		ok, st, err = c.conn.ExistsW(c.ctx, path, c.watcher())
	} else {
		ok, st, err = c.conn.Exists(c.ctx, path)
	}
	if err != nil {
		return c.fail(err, path)
	}
	if !ok {
		return c.fail(zk.ErrNoNode, path)
	}
	if c.text() {
		writeStat(&c.out, st, c.s.loc)
	}
	c.json(map[string]any{"path": path, "stat": toJSONStat(st)})
	return nil
}

// sync path
func cmdSync(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	// The result comes through the delivery goroutine, as zkCli's callback
	// does: watch events the server sent before the reply are printed
	// before "Sync is OK".
	done := make(chan error, 1)
	c.conn.SyncAsync(c.ctx, path, func(_ string, err error) { done <- err })
	var err error
	select {
	case err = <-done:
	case <-c.ctx.Done():
		return failure(c.ctx.Err(), path)
	}
	if err != nil {
		code, ok := keeperCode(err)
		if !ok {
			return c.fail(err, path)
		}
		if c.text() {
			fmt.Fprintf(&c.out, "Sync has failed. rc=%d\n", code)
		}
		c.json(map[string]any{"path": path, "ok": false, "rc": code})
		return nil
	}
	if c.text() {
		c.out.WriteString("Sync is OK\n")
	}
	c.json(map[string]any{"path": path, "ok": true})
	return nil
}

// getEphemerals [path]
func cmdGetEphemerals(c *call) error {
	prefix := "/"
	if c.nargs() >= 2 {
		prefix = c.arg(1)
		if err := validatePath(prefix, false); err != nil {
			return c.fail(err, prefix)
		}
	}
	if c.text() {
		// The Java client sends the prefix without the chroot, and the
		// server keeps the session's ephemerals whose full path starts with
		// it: under the chroot /app, /a finds /app/e and /e finds nothing.
		// So all of them are read, the chroot put back, and filtered so.
		paths, err := c.conn.GetEphemerals(c.ctx, "/")
		if err != nil {
			return c.fail(err, "")
		}
		var kept []string
		for _, p := range serverPaths(c.s.hostName(), paths) {
			if strings.HasPrefix(p, prefix) {
				kept = append(kept, p)
			}
		}
		c.out.WriteString("[" + strings.Join(kept, ", ") + "]\n")
		return nil
	}
	paths, err := c.conn.GetEphemerals(c.ctx, prefix)
	if err != nil {
		return c.fail(err, "")
	}
	c.json(map[string]any{"paths": nonNil(paths)})
	return nil
}

// serverPaths returns the paths getEphemerals returned as the server sent
// them, which zkCli prints: the Java client does not take the chroot off
// them, where the zk package does. Every znode the session created is under
// its chroot.
func serverPaths(connectString string, paths []string) []string {
	_, chroot, err := zk.ParseConnectString(connectString)
	if err != nil || chroot == "" {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = chroot + p
	}
	return out
}

// getAllChildrenNumber path
func cmdGetAllChildrenNumber(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	path := c.arg(1)
	if err := validatePath(path, false); err != nil {
		return c.fail(err, path)
	}
	n, err := c.conn.GetAllChildrenNumber(c.ctx, path)
	if err != nil {
		return c.fail(err, path)
	}
	if c.text() {
		fmt.Fprintf(&c.out, "%d\n", n)
	}
	c.json(map[string]any{"path": path, "count": n})
	return nil
}

// configPath is the znode holding the ensemble's configuration.
const configPath = "/zookeeper/config"

// config [-c] [-w] [-s]
func cmdConfig(c *call) error {
	var data []byte
	var st *zk.Stat
	var err error
	// The absolute /zookeeper/config, whatever the chroot, as zkCli's
	// getConfig reads it.
	if c.f.has('w') {
		data, st, err = c.conn.GetConfigW(c.ctx, c.watcher())
	} else {
		data, st, err = c.conn.GetConfig(c.ctx)
	}
	if err != nil {
		return c.fail(err, configPath)
	}
	text := "null"
	if data != nil {
		text = javastr.FromUTF8(data)
	}
	if c.f.has('c') {
		text = clientConfig(text)
	}
	if c.text() {
		c.out.WriteString(text + "\n")
		if c.f.has('s') {
			writeStat(&c.out, st, c.s.loc)
		}
		return nil
	}
	res := map[string]any{"config": text}
	if c.f.has('s') {
		res["stat"] = toJSONStat(st)
	}
	c.json(res)
	return nil
}

// clientConfig is ZooKeeper's ConfigUtils.getClientConfigStr: the config's
// version and the client addresses of its servers, "version host:port,...",
// the servers in the order Java's Properties (a ConcurrentHashMap) iterates
// over its keys, which is what zkCli prints.
func clientConfig(cfg string) string {
	version := ""
	var servers []string
	vals := map[string]string{}
	var props javaHashOrder
	for _, line := range strings.Split(cfg, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := vals[k]; !dup {
			props.add(k)
		}
		vals[k] = v
	}
	for _, k := range props.keys() {
		v := vals[k]
		if k == "version" {
			version = v
		}
		if !strings.HasPrefix(k, "server.") {
			continue
		}
		_, client, ok := strings.Cut(v, ";")
		if !ok {
			servers = append(servers, "")
			continue
		}
		if !strings.Contains(client, ":") {
			client = "0.0.0.0:" + client
		}
		servers = append(servers, client)
	}
	return version + " " + strings.Join(servers, ",")
}

// javaHashOrder keeps keys in the order a java.util.Properties created with
// its default capacity iterates over them: that of its ConcurrentHashMap,
// bin by bin, each bin's keys in insertion order, the table doubling (from
// 16 bins) as ConcurrentHashMap.transfer does once it holds three quarters
// of its size. (Bins that Java would turn into trees, eight keys in one bin,
// are not modelled.)
type javaHashOrder struct {
	bins  [][]javaKey
	count int
}

type javaKey struct {
	hash int32
	key  string
}

// add inserts a key that is not there yet.
func (h *javaHashOrder) add(key string) {
	if h.bins == nil {
		h.bins = make([][]javaKey, 16)
	}
	k := javaKey{javaSpread(javaHashCode(key)), key}
	i := int(k.hash) & (len(h.bins) - 1)
	h.bins[i] = append(h.bins[i], k)
	h.count++
	if n := len(h.bins); h.count >= n-n/4 {
		h.resize()
	}
}

// resize doubles the table as ConcurrentHashMap.transfer does: each bin
// splits into a low and a high bin; the longest tail of nodes going the same
// way is kept as it is, the nodes before it are prepended one by one (and so
// reversed) to the bin they go to.
func (h *javaHashOrder) resize() {
	n := len(h.bins)
	next := make([][]javaKey, 2*n)
	for i, bin := range h.bins {
		if len(bin) == 0 {
			continue
		}
		last := 0
		for j := 1; j < len(bin); j++ {
			if int(bin[j].hash)&n != int(bin[j-1].hash)&n {
				last = j
			}
		}
		var lo, hi []javaKey
		if int(bin[last].hash)&n == 0 {
			lo = bin[last:]
		} else {
			hi = bin[last:]
		}
		for j := 0; j < last; j++ {
			if int(bin[j].hash)&n == 0 {
				lo = append([]javaKey{bin[j]}, lo...)
			} else {
				hi = append([]javaKey{bin[j]}, hi...)
			}
		}
		next[i], next[i+n] = append([]javaKey(nil), lo...), append([]javaKey(nil), hi...)
	}
	h.bins = next
}

// keys returns the keys in iteration order.
func (h *javaHashOrder) keys() []string {
	var keys []string
	for _, bin := range h.bins {
		for _, k := range bin {
			keys = append(keys, k.key)
		}
	}
	return keys
}

// javaHashCode is Java's String.hashCode, over UTF-16 code units.
func javaHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaSpread is ConcurrentHashMap.spread.
func javaSpread(h int32) int32 {
	return (h ^ int32(uint32(h)>>16)) & 0x7fffffff
}

// version
func cmdVersion(c *call) error {
	if c.nargs() > 1 {
		return c.usageError()
	}
	v := c.s.opts.Version
	if v == "" {
		v = "(devel)"
	}
	if c.text() {
		c.out.WriteString("ZooKeeper CLI version: paddock " + v + "\n")
	}
	c.json(map[string]any{"version": v})
	return nil
}

// close
func cmdClose(c *call) error {
	if err := c.conn.Close(); err != nil {
		return c.fail(err, "")
	}
	c.json(map[string]any{"ok": true})
	return nil
}

// reconfig is listed for zkCli's usage text; Paddock's shell does not
// reconfigure ensembles.
func cmdReconfig(c *call) error {
	if c.nargs() < 2 {
		return c.usageError()
	}
	return &CommandError{Status: 1, Code: "UNIMPLEMENTED", Message: "reconfig is not supported by paddock cli"}
}
