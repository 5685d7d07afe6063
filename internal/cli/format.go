package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/javatime"
	"github.com/paddockhq/paddock/zk"
)

// javaDate formats milliseconds since the epoch as java.util.Date.toString
// does, in loc (javatime.Date).
func javaDate(ms int64, loc *time.Location) string {
	return javatime.Date(time.UnixMilli(ms).In(loc))
}

// javaHex formats n as Java's Long.toHexString: lower case, the two's
// complement of a negative number.
func javaHex(n int64) string {
	return strconv.FormatUint(uint64(n), 16)
}

// writeStat prints st as zkCli's StatPrinter does.
func writeStat(w io.Writer, st *zk.Stat, loc *time.Location) {
	if st == nil {
		st = &zk.Stat{}
	}
	fmt.Fprintf(w, "cZxid = 0x%s\n", javaHex(st.Czxid))
	fmt.Fprintf(w, "ctime = %s\n", javaDate(st.Ctime, loc))
	fmt.Fprintf(w, "mZxid = 0x%s\n", javaHex(st.Mzxid))
	fmt.Fprintf(w, "mtime = %s\n", javaDate(st.Mtime, loc))
	fmt.Fprintf(w, "pZxid = 0x%s\n", javaHex(st.Pzxid))
	fmt.Fprintf(w, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(w, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(w, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(w, "ephemeralOwner = 0x%s\n", javaHex(st.EphemeralOwner))
	fmt.Fprintf(w, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(w, "numChildren = %d\n", st.NumChildren)
}

// jsonStat is a Stat in --json output, with ZooKeeper's field names.
type jsonStat struct {
	Czxid          int64 `json:"czxid"`
	Mzxid          int64 `json:"mzxid"`
	Ctime          int64 `json:"ctime"`
	Mtime          int64 `json:"mtime"`
	Version        int32 `json:"version"`
	Cversion       int32 `json:"cversion"`
	Aversion       int32 `json:"aversion"`
	EphemeralOwner int64 `json:"ephemeralOwner"`
	DataLength     int32 `json:"dataLength"`
	NumChildren    int32 `json:"numChildren"`
	Pzxid          int64 `json:"pzxid"`
}

func toJSONStat(st *zk.Stat) *jsonStat {
	if st == nil {
		return nil
	}
	return &jsonStat{st.Czxid, st.Mzxid, st.Ctime, st.Mtime, st.Version, st.Cversion,
		st.Aversion, st.EphemeralOwner, st.DataLength, st.NumChildren, st.Pzxid}
}

// ParseACL parses zkCli's ACL syntax: comma-separated scheme:id:perms
// entries ("world:anyone:cdrwa", "digest:user:hash:rw", "auth::cdrwa",
// "ip:10.0.0.0/8:r"). The id is everything between the first and the last
// colon. As zkCli does, an entry without two colons is left out and an unknown
// permission letter ignored; each is reported in warnings, with zkCli's text.
// Empty entries at the end ("world:anyone:r,") are dropped without a
// warning, as Java's String.split drops them.
func ParseACL(s string) (acl []zk.ACL, warnings []string) {
	acl = []zk.ACL{}
	for _, a := range splitJava(s, ",") {
		first := strings.IndexByte(a, ':')
		last := strings.LastIndexByte(a, ':')
		if first < 0 || first == last {
			warnings = append(warnings, a+" does not have the form scheme:id:perm")
			continue
		}
		perms, w := parsePerms(a[last+1:])
		warnings = append(warnings, w...)
		acl = append(acl, zk.ACL{Perms: perms, ID: zk.ID{Scheme: a[:first], ID: a[first+1 : last]}})
	}
	return acl, warnings
}

// splitJava splits s around sep as Java's String.split does for a plain
// separator: trailing empty strings are dropped, but a string without sep
// ("" included) is returned whole.
func splitJava(s, sep string) []string {
	parts := strings.Split(s, sep)
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// parsePerms parses permission letters (r, w, c, d, a).
func parsePerms(s string) (perms int32, warnings []string) {
	for _, c := range s {
		switch c {
		case 'r':
			perms |= zk.PermRead
		case 'w':
			perms |= zk.PermWrite
		case 'c':
			perms |= zk.PermCreate
		case 'd':
			perms |= zk.PermDelete
		case 'a':
			perms |= zk.PermAdmin
		default:
			warnings = append(warnings, "Unknown perm type: "+string(c))
		}
	}
	return perms, warnings
}

// PermString returns the permission letters in ZooKeeper's order, "cdrwa".
func PermString(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit int32
		c   byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.c)
		}
	}
	return b.String()
}

// javaID formats an ACL id as the Java record's toString does (getAcl prints
// it so): each field quoted with a leading "'" and escaped, comma-separated,
// and a newline.
func javaID(id zk.ID) string {
	return javaRecordString(id.Scheme) + "," + javaRecordString(id.ID) + "\n"
}

func javaRecordString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, c := range s {
		switch c {
		case 0:
			b.WriteString("%00")
		case '\n':
			b.WriteString("%0A")
		case '\r':
			b.WriteString("%0D")
		case ',':
			b.WriteString("%2C")
		case '}':
			b.WriteString("%7D")
		case '%':
			b.WriteString("%25")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// codeNames are Java's KeeperException.Code names, for --json.
var codeNames = map[int32]string{
	0: "OK", -1: "SYSTEMERROR", -2: "RUNTIMEINCONSISTENCY", -3: "DATAINCONSISTENCY",
	-4: "CONNECTIONLOSS", -5: "MARSHALLINGERROR", -6: "UNIMPLEMENTED", -7: "OPERATIONTIMEOUT",
	-8: "BADARGUMENTS", -12: "UNKNOWNSESSION", -13: "NEWCONFIGNOQUORUM", -14: "RECONFIGINPROGRESS",
	-100: "APIERROR", -101: "NONODE", -102: "NOAUTH", -103: "BADVERSION",
	-108: "NOCHILDRENFOREPHEMERALS", -110: "NODEEXISTS", -111: "NOTEMPTY", -112: "SESSIONEXPIRED",
	-113: "INVALIDCALLBACK", -114: "INVALIDACL", -115: "AUTHFAILED", -118: "SESSIONMOVED",
	-119: "NOTREADONLY", -120: "EPHEMERALONLOCALSESSION", -121: "NOWATCHER", -122: "REQUESTTIMEOUT",
	-123: "RECONFIGDISABLED", -124: "SESSIONCLOSEDREQUIRESASLAUTH", -125: "QUOTAEXCEEDED",
	-127: "THROTTLEDOP",
}

// codeMessages are KeeperException.getCodeMessage's texts.
var codeMessages = map[int32]string{
	0: "ok", -1: "SystemError", -2: "RuntimeInconsistency", -3: "DataInconsistency",
	-4: "ConnectionLoss", -5: "MarshallingError", -6: "Unimplemented", -7: "OperationTimeout",
	-8: "BadArguments", -12: "Unknown error UNKNOWNSESSION", -13: "NewConfigNoQuorum",
	-14: "ReconfigInProgress", -100: "APIError", -101: "NoNode", -102: "NoAuth", -103: "BadVersion",
	-108: "NoChildrenForEphemerals", -110: "NodeExists", -111: "Directory not empty",
	-112: "Session expired", -113: "Invalid callback", -114: "InvalidACL", -115: "AuthFailed",
	-118: "Session moved", -119: "Not a read-only call", -120: "Ephemeral node on local session",
	-121: "No such watcher", -122: "Unknown error REQUESTTIMEOUT", -123: "Reconfig is disabled",
	-124: "Session closed because client failed to authenticate", -125: "Quota has exceeded",
	-127: "Op throttled due to high load",
}

// keeperCode returns the ZooKeeper code err carries, and whether it carries
// one.
func keeperCode(err error) (int32, bool) {
	var ze *zk.Error
	if errors.As(err, &ze) {
		return ze.Code(), true
	}
	return 0, false
}

// keeperMessage is KeeperException.getMessage: "KeeperErrorCode = NoNode
// for /a".
func keeperMessage(code int32, path string) string {
	msg, ok := codeMessages[code]
	if !ok {
		msg = fmt.Sprintf("Unknown error %d", code)
	}
	if path == "" {
		return "KeeperErrorCode = " + msg
	}
	return "KeeperErrorCode = " + msg + " for " + path
}

// wrapperMessage is the message zkCli's CliWrapperException gives a failed
// call on path ("" when the Java client would have no path: "null").
func wrapperMessage(code int32, path string) string {
	p := path
	if p == "" {
		p = "null"
	}
	switch code {
	case -101:
		return "Node does not exist: " + p
	case -108:
		return "Ephemerals cannot have children: " + p
	case -110:
		return "Node already exists: " + p
	case -111:
		return "Node not empty: " + p
	case -119:
		return "Not a read-only call: " + p
	case -114:
		return "Acl is not valid : " + p
	case -102:
		return "Insufficient permission : " + p
	case -8:
		return "Arguments are not valid : " + p
	case -103:
		return "version No is not valid : " + p
	case -14:
		return "Another reconfiguration is in progress -- concurrent reconfigs not supported (yet)"
	case -13:
		return "No quorum of new config is connected and up-to-date with the leader of last commmitted config - try invoking reconfiguration after new servers are connected and synced"
	case -125:
		return "Quota has exceeded : " + p
	}
	return keeperMessage(code, path)
}

// statsTrack is a quota or its usage as zkCli stores it in the
// zookeeper_limits and zookeeper_stats znodes (ZooKeeper's StatsTrack):
// "count=N,bytes=M" and, when hard limits are known,
// "=;byteHardLimit=B;countHardLimit=C" after it (the stray '=' is ZooKeeper
// 3.8's, and readers skip it).
type statsTrack struct {
	keys []string // in the order first set
	vals map[string]int64
}

func newStatsTrack() *statsTrack { return &statsTrack{vals: map[string]int64{}} }

// parseStatsTrack parses StatsTrack's text; a key with an empty value
// reads as -1.
func parseStatsTrack(s string) (*statsTrack, error) {
	st := newStatsTrack()
	if s == "" {
		return st, nil
	}
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		parts := strings.Split(pair, "=")
		for len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1] // Java's split drops trailing empty strings
		}
		if len(parts) < 2 {
			return nil, fmt.Errorf("quota %q: %q has no value", s, pair)
		}
		v, ok := parseJavaLong(parts[1])
		if !ok {
			return nil, fmt.Errorf("quota %q: %q is not a number", s, parts[1])
		}
		st.set(parts[0], v)
	}
	return st, nil
}

func (st *statsTrack) get(key string) int64 {
	if v, ok := st.vals[key]; ok {
		return v
	}
	return -1
}

func (st *statsTrack) set(key string, v int64) {
	if _, ok := st.vals[key]; !ok {
		st.keys = append(st.keys, key)
	}
	st.vals[key] = v
}

// String formats the track as StatsTrack.toString.
func (st *statsTrack) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "count=%d,bytes=%d", st.get("count"), st.get("bytes"))
	var rest []string
	for _, k := range st.keys {
		if k != "count" && k != "bytes" {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		b.WriteByte('=')
		slices.Sort(rest)
		for _, k := range rest {
			fmt.Fprintf(&b, ";%s=%d", k, st.vals[k])
		}
	}
	return b.String()
}

// jsonQuota is a statsTrack in --json output.
func (st *statsTrack) json() map[string]int64 {
	m := map[string]int64{}
	for k, v := range st.vals {
		m[k] = v
	}
	if _, ok := m["count"]; !ok {
		m["count"] = -1
	}
	if _, ok := m["bytes"]; !ok {
		m["bytes"] = -1
	}
	return m
}
