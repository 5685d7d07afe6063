package server

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/config"
)

// An ensemble member of Apache ZooKeeper (3.5 and later, reconfig disabled)
// keeps its membership in /zookeeper/config: ZKDatabase.initConfigInZKDatabase
// writes QuorumVerifier.toString() there, with DataTree.setData's version -1,
// the configuration's version (0 for a static configuration) as mzxid and the
// member's wall clock as mtime, when the member starts and again whenever a
// learner syncs with a leader (Learner.syncWithLeader). A standalone server
// leaves the node empty. Paddock's members show their configuration the same
// way, as their own view rather than replicated state (fsm.Machine.ShowConfig):
// snapshots, the log and every decision of the state machine leave it out, so
// the mtime, which is each member's own as in ZooKeeper, cannot make the
// members' states differ.

// configVersion is the version of the configuration, which ZooKeeper prints
// last in the membership and uses as the mzxid of /zookeeper/config. Without
// dynamic reconfiguration it is 0 (ZooKeeper takes another one from the name
// of a dynamicConfigFile such as zoo.cfg.dynamic.100000000; Paddock's
// configuration does not keep it).
const configVersion = 0

// showConfig makes /zookeeper/config show this member's configuration, with
// now as its mtime: ZooKeeper's initConfigInZKDatabase, which a member runs
// when it starts and when it has synced with a leader. A standalone server
// shows nothing, as ZooKeeper's. It takes the state lock.
func (s *Server) showConfig(now time.Time) {
	if s.cfg.Standalone() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.showConfigLocked(now)
}

// showConfigLocked is showConfig for a caller that holds the state lock, as
// Restore does: a restored state shows nothing until it is called.
func (s *Server) showConfigLocked(now time.Time) {
	if s.cfg.Standalone() {
		return
	}
	s.fsm.ShowConfig(membership(s.cfg, configVersion), configVersion, now.UnixMilli())
}

// membership returns the ensemble's membership as ZooKeeper's
// QuorumMaj.toString formats it: a "server.N=..." line per server, in the
// order of its HashMap of servers (see javaMapOrder), then "version=" and
// version in hexadecimal, with no newline at the end. Each line is
// QuorumServer.toString: the host:quorumPort:electionPort groups sorted by
// host and joined by '|', ":participant" or ":observer", then, when the
// server.N line gave one, ";" and the client address. Hosts are printed as
// Java's InetSocketAddress.getHostString gives them: names as written, IP
// literals in Java's form (IPv6 in full, in brackets).
func membership(cfg *config.Config, version int64) []byte {
	ids := make([]int64, len(cfg.Servers))
	byID := make(map[int64]config.Server, len(cfg.Servers))
	for i, srv := range cfg.Servers {
		ids[i] = srv.ID
		byID[srv.ID] = srv
	}
	var b strings.Builder
	for _, id := range javaMapOrder(ids) {
		srv := byID[id]
		hosts := make([]string, len(srv.Addrs))
		order := make([]int, len(srv.Addrs))
		for i, a := range srv.Addrs {
			hosts[i], order[i] = javaHostString(a.Host), i
		}
		slices.SortStableFunc(order, func(x, y int) int { return strings.Compare(hosts[x], hosts[y]) })
		fmt.Fprintf(&b, "server.%d=", srv.ID)
		for k, i := range order {
			if k > 0 {
				b.WriteByte('|')
			}
			a := srv.Addrs[i]
			fmt.Fprintf(&b, "%s:%d:%d", delimitedHost(hosts[i]), a.QuorumPort, a.ElectionPort)
		}
		b.WriteString(":" + srv.Role.String())
		if srv.ClientPort != 0 {
			fmt.Fprintf(&b, ";%s:%d", delimitedHost(javaHostString(srv.ClientHost)), srv.ClientPort)
		}
		b.WriteByte('\n')
	}
	b.WriteString("version=" + strconv.FormatInt(version, 16))
	return []byte(b.String())
}

// javaHostString returns host as Java's InetSocketAddress.getHostString
// returns it for an address made from that string: an IP literal in Java's
// form (IPv4 dotted, an IPv4-mapped IPv6 address as IPv4, other IPv6
// addresses as eight groups of hexadecimal without leading zeros), anything
// else as written.
func javaHostString(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return host
	}
	if a.Is4() || a.Is4In6() {
		return a.Unmap().String()
	}
	b := a.As16()
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = strconv.FormatUint(uint64(b[2*i])<<8|uint64(b[2*i+1]), 16)
	}
	return strings.Join(groups, ":")
}

// javaMapOrder returns ids in the order a java.util.HashMap<Long, ...> holding
// them iterates (QuorumMaj keeps its servers in one): by bucket, the key's
// hash masked by the table's size, which starts at 16 and doubles when the
// map holds more than three quarters of it, or when a bucket of a table
// smaller than 64 already holds 8 keys. Within a bucket HashMap keeps the
// order of insertion, which for ZooKeeper is the order of its Properties'
// hash table; this takes ascending ids, so ids that share a bucket (that
// differ by a multiple of the table size, as 1 and 17 do with up to 12
// servers) may be listed in another order than ZooKeeper's. Ids below the
// table size, the usual case, come out in ascending order.
func javaMapOrder(ids []int64) []int64 {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	size := 16
	inBucket := func(id int64) int { return int(javaLongHash(id)) & (size - 1) }
	for n := range sorted {
		// Insert sorted[n] into a map holding sorted[:n].
		k := 0
		for _, id := range sorted[:n] {
			if inBucket(id) == inBucket(sorted[n]) {
				k++
			}
		}
		if k >= 8 && size < 64 { // HashMap.putVal: treeifyBin resizes a small table
			size *= 2
		}
		if n+1 > size*3/4 {
			size *= 2
		}
	}
	slices.SortStableFunc(sorted, func(x, y int64) int { return inBucket(x) - inBucket(y) })
	return sorted
}

// javaLongHash is HashMap.hash of a java.lang.Long: Long.hashCode, then the
// high half folded into the low one.
func javaLongHash(v int64) int32 {
	h := int32(v ^ int64(uint64(v)>>32))
	return h ^ int32(uint32(h)>>16)
}
