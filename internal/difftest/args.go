package difftest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/proto"
)

// maxScriptData bounds the size a data token may ask for ("@N").
const maxScriptData = 4 << 20

// quotaRoot is where ZooKeeper keeps quota nodes: the quota of path P
// lives under quotaRoot+P.
const quotaRoot = "/zookeeper/quota"

// ResolvePath turns a script path into a server path. A path starting
// with "/" is relative to the scenario root ("/" is the root itself, "/a"
// is root+"/a"); a path starting with "=" is used verbatim without the
// "=" ("=/zookeeper", "=a", "=" for the empty path); a path starting
// with "%/" names the quota node of the script path after the "%"
// ("%/" is /zookeeper/quota+root, "%/a/zookeeper_limits" is
// /zookeeper/quota+root+"/a/zookeeper_limits"), so that a scenario can
// put quotas on its own paths whatever its root.
func ResolvePath(root string, t Token) (string, error) {
	if t.IsList {
		return "", fmt.Errorf("path: want a word, got a group %s", t)
	}
	p := t.Text
	switch {
	case strings.HasPrefix(p, "="):
		return p[1:], nil
	case strings.HasPrefix(p, "%/"):
		in, err := ResolvePath(root, Token{Text: p[1:]})
		if err != nil {
			return "", err
		}
		return quotaRoot + in, nil
	case p == "/":
		return root, nil
	case strings.HasPrefix(p, "/"):
		return root + p, nil
	}
	return "", fmt.Errorf("path %q: start it with '/' (under the scenario root), '%%/' (its quota nodes) or '=' (verbatim)", p)
}

// ShowPath is the inverse of ResolvePath for printing: a path under root
// is shown relative to it, a path under root's quota node (quotaRoot+root)
// relative to that with a leading "%", any other path with a leading "=".
func ShowPath(root, p string) string {
	switch {
	case p == root:
		return "/"
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):]
	case p == quotaRoot+root:
		return "%/"
	case strings.HasPrefix(p, quotaRoot+root+"/"):
		return "%" + p[len(quotaRoot+root):]
	}
	return "=" + p
}

// ParseData reads a data token: null (a null buffer), @N (N bytes of
// 'x'), hex:<hex>, or any other word or quoted string as its bytes ("" is
// an empty, non-null buffer).
func ParseData(t Token) ([]byte, error) {
	if t.IsList {
		return nil, fmt.Errorf("data: want a word, got a group %s", t)
	}
	if t.Quoted {
		return []byte(t.Text), nil
	}
	s := t.Text
	switch {
	case s == "null":
		return nil, nil
	case strings.HasPrefix(s, "@"):
		n, err := strconv.Atoi(s[1:])
		if err != nil || n < 0 || n > maxScriptData {
			return nil, fmt.Errorf("data %q: want @N with 0 <= N <= %d", s, maxScriptData)
		}
		return []byte(strings.Repeat("x", n)), nil
	case strings.HasPrefix(s, "hex:"):
		b, err := hex.DecodeString(s[4:])
		if err != nil {
			return nil, fmt.Errorf("data %q: %v", s, err)
		}
		if b == nil {
			b = []byte{}
		}
		return b, nil
	}
	return []byte(s), nil
}

// createModes names the create flags.
var createModes = map[string]int32{
	"persistent":                proto.FlagPersistent,
	"ephemeral":                 proto.FlagEphemeral,
	"persistent_sequential":     proto.FlagPersistentSequential,
	"ephemeral_sequential":      proto.FlagEphemeralSequential,
	"container":                 proto.FlagContainer,
	"persistent_ttl":            proto.FlagPersistentWithTTL,
	"persistent_sequential_ttl": proto.FlagPersistentSequentialWithTTL,
	"ttl":                       proto.FlagPersistentWithTTL,
	"ttl_sequential":            proto.FlagPersistentSequentialWithTTL,
}

// ParseMode reads a create mode name or a decimal flags value.
func ParseMode(t Token) (int32, error) {
	if f, ok := createModes[t.Text]; ok && !t.Quoted {
		return f, nil
	}
	return parseInt32("mode", t)
}

// parseInt32 reads a decimal int32.
func parseInt32(what string, t Token) (int32, error) {
	if t.IsList {
		return 0, fmt.Errorf("%s: want a number, got a group %s", what, t)
	}
	v, err := strconv.ParseInt(t.Text, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a decimal int32", what, t.Text)
	}
	return int32(v), nil
}

func parseInt64(what string, t Token) (int64, error) {
	if t.IsList {
		return 0, fmt.Errorf("%s: want a number, got a group %s", what, t)
	}
	v, err := strconv.ParseInt(t.Text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a decimal int64", what, t.Text)
	}
	return v, nil
}

// permLetters lists the permission letters in ZooKeeper's usual order.
var permLetters = []struct {
	c    byte
	perm int32
}{
	{'c', proto.PermCreate}, {'d', proto.PermDelete}, {'r', proto.PermRead},
	{'w', proto.PermWrite}, {'a', proto.PermAdmin},
}

// ParsePerms reads permission letters (any of "cdrwa", "" for none) or a
// decimal number prefixed with '#'.
func ParsePerms(s string) (int32, error) {
	if strings.HasPrefix(s, "#") {
		v, err := strconv.ParseInt(s[1:], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("perms %q: want #<decimal>", s)
		}
		return int32(v), nil
	}
	var p int32
	for i := 0; i < len(s); i++ {
		found := false
		for _, l := range permLetters {
			if s[i] == l.c {
				p |= l.perm
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("perms %q: unknown letter %q (want cdrwa)", s, s[i])
		}
	}
	return p, nil
}

// FormatPerms renders perms as letters in "cdrwa" order; bits outside
// ALL are shown as "+#<n>", and no bits as "-".
func FormatPerms(p int32) string {
	var b strings.Builder
	for _, l := range permLetters {
		if p&l.perm != 0 {
			b.WriteByte(l.c)
		}
	}
	if rest := p &^ proto.PermAll; rest != 0 {
		fmt.Fprintf(&b, "+#%d", rest)
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// DigestID returns the ACL id of the digest scheme for user and password:
// user:base64(sha1("user:password")).
func DigestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// ParseACLs reads an ACL list token: "null" (a null vector), "empty" (an
// empty vector), "open" (world:anyone:cdrwa), "read" (world:anyone:r),
// "creator" (auth::cdrwa), or comma-separated entries
// "scheme:id:perms", where id may itself contain ':' and the scheme
// "digestpw" takes "user:password" and becomes a digest id.
func ParseACLs(t Token) ([]proto.ACL, error) {
	if t.IsList {
		return nil, fmt.Errorf("acl: want a word, got a group %s", t)
	}
	switch t.Text {
	case "null":
		return nil, nil
	case "empty":
		return []proto.ACL{}, nil
	case "open":
		return []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}, nil
	case "read":
		return []proto.ACL{{Perms: proto.PermRead, ID: proto.ID{Scheme: "world", ID: "anyone"}}}, nil
	case "creator":
		return []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "auth", ID: ""}}}, nil
	}
	var out []proto.ACL
	for _, entry := range strings.Split(t.Text, ",") {
		first := strings.Index(entry, ":")
		last := strings.LastIndex(entry, ":")
		if first < 0 || first == last {
			return nil, fmt.Errorf("acl entry %q: want scheme:id:perms", entry)
		}
		scheme, id, permStr := entry[:first], entry[first+1:last], entry[last+1:]
		perms, err := ParsePerms(permStr)
		if err != nil {
			return nil, fmt.Errorf("acl entry %q: %v", entry, err)
		}
		if scheme == "digestpw" {
			user, pass, ok := strings.Cut(id, ":")
			if !ok {
				return nil, fmt.Errorf("acl entry %q: digestpw wants user:password", entry)
			}
			scheme, id = "digest", DigestID(user, pass)
		}
		out = append(out, proto.ACL{Perms: perms, ID: proto.ID{Scheme: scheme, ID: id}})
	}
	return out, nil
}

// FormatACLs renders an ACL list as "[scheme:id:perms ...]", "null" for a
// null vector.
func FormatACLs(acl []proto.ACL) string {
	if acl == nil {
		return "null"
	}
	parts := make([]string, len(acl))
	for i, a := range acl {
		parts[i] = a.ID.Scheme + ":" + a.ID.ID + ":" + FormatPerms(a.Perms)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// watcherTypes names the checkWatches/removeWatches types.
var watcherTypes = map[string]proto.WatcherType{
	"children":   proto.WatcherChildren,
	"data":       proto.WatcherData,
	"any":        proto.WatcherAny,
	"persistent": proto.WatcherPersistent,
	"recursive":  proto.WatcherPersistentRecursive,
}

// ParseWatcherType reads a watcher type name or a decimal value.
func ParseWatcherType(t Token) (proto.WatcherType, error) {
	if w, ok := watcherTypes[t.Text]; ok && !t.Quoted {
		return w, nil
	}
	v, err := parseInt32("watcher type", t)
	return proto.WatcherType(v), err
}

// ParseAddWatchMode reads "persistent", "recursive" or a decimal mode.
func ParseAddWatchMode(t Token) (int32, error) {
	switch t.Text {
	case "persistent":
		return proto.AddWatchPersistent, nil
	case "recursive":
		return proto.AddWatchPersistentRecursive, nil
	}
	return parseInt32("addWatch mode", t)
}

// ParseHex reads hex digits, ignoring '_' separators.
func ParseHex(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "_", ""))
	if err != nil {
		return nil, fmt.Errorf("hex %q: %v", s, err)
	}
	return b, nil
}
