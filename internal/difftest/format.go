package difftest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/proto"
)

// errNames gives each error code a stable one-word name for transcripts.
var errNames = map[proto.ErrCode]string{
	proto.ErrOK: "ok", proto.ErrSystemError: "SystemError",
	proto.ErrRuntimeInconsistency: "RuntimeInconsistency", proto.ErrDataInconsistency: "DataInconsistency",
	proto.ErrConnectionLoss: "ConnectionLoss", proto.ErrMarshallingError: "MarshallingError",
	proto.ErrUnimplemented: "Unimplemented", proto.ErrOperationTimeout: "OperationTimeout",
	proto.ErrBadArguments: "BadArguments", proto.ErrUnknownSession: "UnknownSession",
	proto.ErrNewConfigNoQuorum: "NewConfigNoQuorum", proto.ErrReconfigInProgress: "ReconfigInProgress",
	proto.ErrAPIError: "APIError", proto.ErrNoNode: "NoNode", proto.ErrNoAuth: "NoAuth",
	proto.ErrBadVersion: "BadVersion", proto.ErrNoChildrenForEphemerals: "NoChildrenForEphemerals",
	proto.ErrNodeExists: "NodeExists", proto.ErrNotEmpty: "NotEmpty", proto.ErrSessionExpired: "SessionExpired",
	proto.ErrInvalidCallback: "InvalidCallback", proto.ErrInvalidACL: "InvalidACL",
	proto.ErrAuthFailed: "AuthFailed", proto.ErrSessionMoved: "SessionMoved", proto.ErrNotReadOnly: "NotReadOnly",
	proto.ErrEphemeralOnLocalSession: "EphemeralOnLocalSession", proto.ErrNoWatcher: "NoWatcher",
	proto.ErrRequestTimeout: "RequestTimeout", proto.ErrReconfigDisabled: "ReconfigDisabled",
	proto.ErrSessionClosedRequireSASLAuth: "SessionClosedRequireSASLAuth",
	proto.ErrQuotaExceeded:                "QuotaExceeded", proto.ErrThrottledOp: "ThrottledOp",
}

// ErrName returns the transcript name of an error code.
func ErrName(e proto.ErrCode) string {
	if s, ok := errNames[e]; ok {
		return s
	}
	return "err(" + strconv.Itoa(int(e)) + ")"
}

var eventNames = map[proto.EventType]string{
	proto.EventNone: "None", proto.EventNodeCreated: "NodeCreated", proto.EventNodeDeleted: "NodeDeleted",
	proto.EventNodeDataChanged: "NodeDataChanged", proto.EventNodeChildrenChanged: "NodeChildrenChanged",
	proto.EventDataWatchRemoved: "DataWatchRemoved", proto.EventChildWatchRemoved: "ChildWatchRemoved",
	proto.EventPersistentWatchRemoved: "PersistentWatchRemoved",
}

// EventName returns the transcript name of an event type.
func EventName(e proto.EventType) string {
	if s, ok := eventNames[e]; ok {
		return s
	}
	return "event(" + strconv.Itoa(int(e)) + ")"
}

// maxShownData is the longest data printed verbatim.
const maxShownData = 64

// FormatData renders znode data: null, a Go-quoted string when short and
// printable UTF-8, else its length and a hash prefix.
func FormatData(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) <= maxShownData && utf8.Valid(b) {
		printable := true
		for _, r := range string(b) {
			if !strconv.IsPrint(r) {
				printable = false
				break
			}
		}
		if printable {
			return strconv.Quote(string(b))
		}
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("<%d bytes sha256:%s>", len(b), hex.EncodeToString(sum[:4]))
}

// sortedStrings renders a string list sorted, "null" for a null vector;
// show maps each element for printing.
func sortedStrings(ss []string, show func(string) string) string {
	if ss == nil {
		return "null"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = show(s)
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}

// Placeholders in transcript lines, replaced once the whole scenario has
// run and every zxid and time it saw is known.
const (
	markStart = '\x00'
	markEnd   = '\x01'
)

// Transcript collects the lines of one scenario run and normalizes the
// values that differ between servers and runs: zxids, times and session
// ids, and paths under the scenario root.
type Transcript struct {
	root     string
	lines    []string
	sessions map[int64]string
	zxids    map[int64]bool
	timeOf   map[int64][]int64 // zxid → times observed with it
	start    time.Time
}

// NewTranscript starts a transcript for a scenario rooted at root; start
// is the wall-clock time before the scenario's first write.
func NewTranscript(root string, start time.Time) *Transcript {
	return &Transcript{
		root: root, sessions: map[int64]string{}, zxids: map[int64]bool{},
		timeOf: map[int64][]int64{}, start: start,
	}
}

// Add appends a line (which may hold placeholders).
func (t *Transcript) Add(line string) { t.lines = append(t.lines, line) }

// Path shows a server path relative to the scenario root, Go-quoted when
// it holds unprintable characters or blanks.
func (t *Transcript) Path(p string) string { return showName(ShowPath(t.root, p)) }

// Session returns the name of a session id: 0 stays "0", the first
// session seen is s1, the next s2, and so on.
func (t *Transcript) Session(id int64) string {
	if id == 0 {
		return "0"
	}
	if s, ok := t.sessions[id]; ok {
		return s
	}
	s := "s" + strconv.Itoa(len(t.sessions)+1)
	t.sessions[id] = s
	return s
}

// knownSession names a session already seen, else shows it in hex.
func (t *Transcript) knownSession(id int64) string {
	if id == 0 {
		return "0"
	}
	if s, ok := t.sessions[id]; ok {
		return s
	}
	return fmt.Sprintf("0x%x", uint64(id))
}

// Zxid returns a placeholder for a zxid, rendered as its rank among the
// positive zxids of the scenario (z1 the smallest); 0 renders as z0 and
// negative values as themselves.
func (t *Transcript) Zxid(z int64) string {
	if z <= 0 {
		if z == 0 {
			return "z0"
		}
		return strconv.FormatInt(z, 10)
	}
	t.zxids[z] = true
	return fmt.Sprintf("%cz%d%c", markStart, z, markEnd)
}

// Time returns a placeholder for a ctime or mtime stamped by the txn
// with the given zxid. It renders as t<rank of zxid> when the times are
// sane: the same txn always shows the same time, a later txn never shows
// an earlier time, and the time lies between the scenario's start and the
// end of the run; otherwise as t!<reason>. Time 0 with zxid 0 (the
// reserved nodes) renders as t0.
func (t *Transcript) Time(ms, zxid int64) string {
	if ms == 0 && zxid == 0 {
		return "t0"
	}
	if zxid > 0 {
		t.zxids[zxid] = true
		if !slices.Contains(t.timeOf[zxid], ms) {
			t.timeOf[zxid] = append(t.timeOf[zxid], ms)
		}
	}
	return fmt.Sprintf("%ct%d,%d%c", markStart, ms, zxid, markEnd)
}

// Stat renders a Stat with placeholders.
func (t *Transcript) Stat(s *proto.Stat) string {
	return fmt.Sprintf("{cz=%s mz=%s pz=%s ct=%s mt=%s v=%d cv=%d av=%d eph=%s dl=%d nc=%d}",
		t.Zxid(s.Czxid), t.Zxid(s.Mzxid), t.Zxid(s.Pzxid), t.Time(s.Ctime, s.Czxid), t.Time(s.Mtime, s.Mzxid),
		s.Version, s.Cversion, s.Aversion, t.knownSession(s.EphemeralOwner), s.DataLength, s.NumChildren)
}

// timeSlack is how far before the scenario's start or after the
// rendering a server time may lie.
const timeSlack = 5 * time.Second

// Lines renders the transcript: every placeholder replaced by its
// normalized value.
func (t *Transcript) Lines(end time.Time) []string {
	zs := make([]int64, 0, len(t.zxids))
	for z := range t.zxids {
		zs = append(zs, z)
	}
	slices.Sort(zs)
	rank := make(map[int64]int, len(zs))
	for i, z := range zs {
		rank[z] = i + 1
	}
	// A zxid's time is out of order if it is below the latest time of
	// any smaller zxid.
	badOrder := map[int64]bool{}
	var maxSoFar int64
	for _, z := range zs {
		for _, ms := range t.timeOf[z] {
			if ms < maxSoFar {
				badOrder[z] = true
			}
		}
		for _, ms := range t.timeOf[z] {
			maxSoFar = max(maxSoFar, ms)
		}
	}
	lo, hi := t.start.Add(-timeSlack).UnixMilli(), end.Add(timeSlack).UnixMilli()
	render := func(mark string) string {
		switch mark[0] {
		case 'z':
			z, _ := strconv.ParseInt(mark[1:], 10, 64)
			return "z" + strconv.Itoa(rank[z])
		case 't':
			msStr, zStr, _ := strings.Cut(mark[1:], ",")
			ms, _ := strconv.ParseInt(msStr, 10, 64)
			z, _ := strconv.ParseInt(zStr, 10, 64)
			switch {
			case z <= 0:
				return "t!zxid" + zStr
			case ms < lo || ms > hi:
				return "t!range"
			case len(t.timeOf[z]) > 1:
				return "t!mixed"
			case badOrder[z]:
				return "t!order"
			}
			return "t" + strconv.Itoa(rank[z])
		}
		return "?" + mark
	}
	out := make([]string, len(t.lines))
	for i, l := range t.lines {
		out[i] = replaceMarks(l, render)
	}
	return out
}

// replaceMarks replaces every markStart…markEnd span of s by render of
// its content.
func replaceMarks(s string, render func(string) string) string {
	if !strings.ContainsRune(s, markStart) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexRune(s, markStart)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexRune(s[i:], markEnd)
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(render(s[i+1 : i+j]))
		s = s[i+j+1:]
	}
}
