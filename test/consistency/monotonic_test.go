package consistency_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/paddockhq/paddock/zk"
)

// The session-order workload: monoKeys znodes that clients read without
// Sync and overwrite.
const monoKeys = 3

func monoPath(key int) string { return "/mono/k" + strconv.Itoa(key) }

// monoClient reads without Sync (so from whatever member it is on,
// however far behind) and writes, and checks what ZooKeeper promises a
// session: it never sees a key's version go down, never reads a version
// below one of its own acknowledged writes, and a write of its own gets a
// version above every version it saw before. A new session (after expiry)
// starts afresh: the promise is per session.
type monoClient struct {
	e      *env
	id     int
	prefer int
	rng    *rand.Rand
	clock  clock

	reads, writes, sessions int
	violations              []string
}

func (c *monoClient) run(ctx context.Context) {
	var conn *zk.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	var order sessionOrder
	for ctx.Err() == nil {
		if conn == nil {
			dctx, cancel := context.WithTimeout(ctx, callTimeout)
			var err error
			conn, err = c.e.dial(dctx, c.prefer)
			cancel()
			if err != nil {
				conn = nil
				continue
			}
			c.sessions++
			order = sessionOrder{}
		}
		key := c.rng.IntN(monoKeys)
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		var err error
		if c.rng.IntN(10) < 3 {
			var st *zk.Stat
			st, err = conn.Set(cctx, monoPath(key), []byte(fmt.Sprintf("c%d", c.id)), -1)
			if err == nil {
				c.writes++
				if v := order.wrote(key, st.Version); v != "" {
					c.violate("%s (server %s)", v, conn.Server())
				}
			}
		} else {
			var st *zk.Stat
			_, st, err = conn.Get(cctx, monoPath(key))
			if err == nil {
				c.reads++
				if v := order.read(key, st.Version); v != "" {
					c.violate("%s (server %s)", v, conn.Server())
				}
			}
		}
		cancel()
		if sessionLost(err) {
			conn.Close()
			conn = nil
		}
	}
}

func (c *monoClient) violate(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf("%s client %d: ", fmtNs(c.clock.now()), c.id)+fmt.Sprintf(format, args...))
}

// sessionOrder is what one session has seen: the highest version of each
// key it read or wrote. Its methods record an observation and describe the
// violation it is, if any.
type sessionOrder struct {
	seen [monoKeys]int32
}

// read records that the session read version of key without Sync: never
// below a version it saw or wrote before.
func (o *sessionOrder) read(key int, version int32) string {
	prev := o.seen[key]
	o.seen[key] = max(prev, version)
	if version < prev {
		return fmt.Sprintf("%s: read version %d after the session had seen or written version %d", monoPath(key), version, prev)
	}
	return ""
}

// wrote records that a write of the session made version of key: above
// every version it saw before.
func (o *sessionOrder) wrote(key int, version int32) string {
	prev := o.seen[key]
	o.seen[key] = max(prev, version)
	if version <= prev {
		return fmt.Sprintf("%s: own write got version %d, but the session had already seen version %d", monoPath(key), version, prev)
	}
	return ""
}
