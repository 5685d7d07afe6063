package datatool

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// hex formats a zxid or session id as ZooKeeper's tools do ("0x1f").
func hexID(v int64) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

// msTime formats milliseconds since the epoch in UTC, to the millisecond.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// permString renders ACL permission bits in zkCli's order, "cdrwa".
func permString(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit int32
		c   byte
	}{{proto.PermCreate, 'c'}, {proto.PermDelete, 'd'}, {proto.PermRead, 'r'}, {proto.PermWrite, 'w'}, {proto.PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.c)
		}
	}
	if rest := perms &^ proto.PermAll; rest != 0 {
		fmt.Fprintf(&b, "+%#x", rest)
	}
	return b.String()
}

// aclText renders an ACL list as "[scheme:id:perms ...]".
func aclText(acl []proto.ACL) string {
	parts := make([]string, len(acl))
	for i, a := range acl {
		parts[i] = a.ID.Scheme + ":" + a.ID.ID + ":" + permString(a.Perms)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// jsonACL is one ACL in JSON output.
type jsonACL struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

func aclJSON(acl []proto.ACL) []jsonACL {
	out := make([]jsonACL, len(acl))
	for i, a := range acl {
		out[i] = jsonACL{Scheme: a.ID.Scheme, ID: a.ID.ID, Perms: permString(a.Perms)}
	}
	return out
}

// dataText renders znode data for text output: null, a quoted string when
// it is UTF-8, else base64.
func dataText(d []byte) string {
	switch {
	case d == nil:
		return "null"
	case utf8.Valid(d):
		return strconv.Quote(string(d))
	default:
		return "base64:" + base64.StdEncoding.EncodeToString(d)
	}
}

// dataJSON returns data as a JSON string value and its encoding ("utf8"
// or "base64"); null data gives nil.
func dataJSON(d []byte) (*string, string) {
	if d == nil {
		return nil, ""
	}
	if utf8.Valid(d) {
		s := string(d)
		return &s, "utf8"
	}
	s := base64.StdEncoding.EncodeToString(d)
	return &s, "base64"
}

// previewBytes is how much of a payload a WAL dump shows.
const previewBytes = 64

// preview returns the first previewBytes of d (cut at a rune boundary when
// d is UTF-8) and whether it was cut.
func preview(d []byte) ([]byte, bool) {
	if len(d) <= previewBytes {
		return d, false
	}
	p := d[:previewBytes]
	if utf8.Valid(d) {
		for len(p) > 0 && !utf8.Valid(p) {
			p = p[:len(p)-1]
		}
	}
	return p, true
}

// kindName names a znode kind.
func kindName(k tree.Kind) string {
	switch k {
	case tree.Persistent:
		return "persistent"
	case tree.Ephemeral:
		return "ephemeral"
	case tree.Container:
		return "container"
	case tree.TTL:
		return "ttl"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// createModeName names a create op's flags as ZooKeeper's CreateMode does.
func createModeName(flags int32) string {
	switch flags {
	case proto.FlagPersistent:
		return "PERSISTENT"
	case proto.FlagEphemeral:
		return "EPHEMERAL"
	case proto.FlagPersistentSequential:
		return "PERSISTENT_SEQUENTIAL"
	case proto.FlagEphemeralSequential:
		return "EPHEMERAL_SEQUENTIAL"
	case proto.FlagContainer:
		return "CONTAINER"
	case proto.FlagPersistentWithTTL:
		return "PERSISTENT_WITH_TTL"
	case proto.FlagPersistentSequentialWithTTL:
		return "PERSISTENT_SEQUENTIAL_WITH_TTL"
	}
	return fmt.Sprintf("flags(%d)", flags)
}

// kindOf classifies a stored znode as ZooKeeper's EphemeralType.get does
// with extendedTypesEnabled set to extended. tree.Node.Kind classifies as
// with extended types on; without them an ephemeralOwner whose top byte is
// 0xFF is no TTL node but the session of an ephemeral (a server with myid
// 255 makes such session ids).
func kindOf(n *tree.Node, extended bool) tree.Kind {
	if k := n.Kind(); k != tree.TTL || extended {
		return k
	}
	return tree.Ephemeral
}

// ttlOf returns the TTL in milliseconds of a znode kindOf classifies as a
// TTL node, else 0.
func ttlOf(n *tree.Node, extended bool) int64 {
	if kindOf(n, extended) != tree.TTL {
		return 0
	}
	return n.TTL()
}

// clientStat returns the Stat clients see for a stored znode with nc
// children, classified by kindOf: tree.Node.Stat, with the child count the
// snapshot does not store filled in.
func clientStat(n *tree.Node, nc int32, extended bool) proto.Stat {
	st := n.Stat() // computed with no children, extended types on
	if kindOf(n, extended) == tree.Ephemeral {
		st.EphemeralOwner = n.EphemeralOwner
	}
	st.NumChildren = nc
	st.Cversion = n.Cversion*2 - nc
	return st
}

// jsonStat is a Stat with ZooKeeper's field names (as zkCli's stat prints
// them). Session ids do not fit a JSON number exactly, so ephemeralOwner is
// a hex string.
type jsonStat struct {
	Czxid          int64  `json:"cZxid"`
	Ctime          int64  `json:"ctime"`
	Mzxid          int64  `json:"mZxid"`
	Mtime          int64  `json:"mtime"`
	Pzxid          int64  `json:"pZxid"`
	Cversion       int32  `json:"cversion"`
	Version        int32  `json:"dataVersion"`
	Aversion       int32  `json:"aclVersion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	DataLength     int32  `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
}

func statJSON(st proto.Stat) jsonStat {
	return jsonStat{
		Czxid: st.Czxid, Ctime: st.Ctime, Mzxid: st.Mzxid, Mtime: st.Mtime, Pzxid: st.Pzxid,
		Cversion: st.Cversion, Version: st.Version, Aversion: st.Aversion,
		EphemeralOwner: hexID(st.EphemeralOwner), DataLength: st.DataLength, NumChildren: st.NumChildren,
	}
}

// statText writes a Stat as zkCli's stat command prints it (times in UTC).
func statText(b *strings.Builder, indent string, st proto.Stat) {
	fmt.Fprintf(b, "%scZxid = %s\n", indent, hexID(st.Czxid))
	fmt.Fprintf(b, "%sctime = %s\n", indent, msTime(st.Ctime))
	fmt.Fprintf(b, "%smZxid = %s\n", indent, hexID(st.Mzxid))
	fmt.Fprintf(b, "%smtime = %s\n", indent, msTime(st.Mtime))
	fmt.Fprintf(b, "%spZxid = %s\n", indent, hexID(st.Pzxid))
	fmt.Fprintf(b, "%scversion = %d\n", indent, st.Cversion)
	fmt.Fprintf(b, "%sdataVersion = %d\n", indent, st.Version)
	fmt.Fprintf(b, "%saclVersion = %d\n", indent, st.Aversion)
	fmt.Fprintf(b, "%sephemeralOwner = %s\n", indent, hexID(st.EphemeralOwner))
	fmt.Fprintf(b, "%sdataLength = %d\n", indent, st.DataLength)
	fmt.Fprintf(b, "%snumChildren = %d\n", indent, st.NumChildren)
}
