package datatool

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
)

// WALDumpOptions choose what DumpWAL writes.
type WALDumpOptions struct {
	JSON bool // JSON Lines instead of text
	// From skips records before the first entry with an index at or above
	// From; everything after that entry is written.
	From uint64
	// Limit stops the dump right after this many entries, before the
	// records that follow the last one; 0 means no limit.
	Limit int
}

// WALDumpResult says how a dump ended.
type WALDumpResult struct {
	Records int // records written
	Entries int // entry records written
	// Torn is set when the last segment ends in a partial record.
	Torn *storage.TornTail
}

// errLimit stops a scan once Limit entries were written.
var errLimit = errors.New("limit reached")

// DumpWAL writes every record of the WAL in dir: raft entries with their
// fsm entry decoded, hard states and snapshot markers. It only reads, so it
// may run while a server appends; a partial last record ends the dump
// quietly and is reported in the result. Corruption anywhere else fails
// with an error naming the file and offset, after the records before it.
func DumpWAL(w io.Writer, dir string, opts WALDumpOptions) (WALDumpResult, error) {
	var res WALDumpResult
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	started := opts.From == 0
	seg := ""
	var b strings.Builder
	segs, torn, err := scanWAL(dir, func(r *storage.WALRecord) error {
		if !started {
			if r.Kind != storage.RecordEntry || r.Entry.Index < opts.From {
				return nil
			}
			started = true
		}
		if r.Segment.Path != seg {
			seg = r.Segment.Path
			var err error
			if opts.JSON {
				err = enc.Encode(jsonSegmentLine{Type: "segment", Path: seg, Seq: r.Segment.Seq, FirstIndex: r.Segment.FirstIndex, Bytes: r.Segment.Size})
			} else {
				_, err = fmt.Fprintf(bw, "segment %s (seq %d, first index %d, %d bytes)\n", seg, r.Segment.Seq, r.Segment.FirstIndex, r.Segment.Size)
			}
			if err != nil {
				return err
			}
		}
		res.Records++
		if r.Kind == storage.RecordEntry {
			res.Entries++
		}
		var err error
		if opts.JSON {
			err = enc.Encode(recordJSON(r))
		} else {
			b.Reset()
			writeRecordText(&b, r)
			_, err = bw.WriteString(b.String())
		}
		if err == nil && opts.Limit > 0 && res.Entries == opts.Limit {
			// Stop right after the last entry asked for: the hard
			// states and markers that follow it are not printed.
			err = errLimit
		}
		return err
	})
	if errors.Is(err, errLimit) {
		err = nil
		torn = nil
	}
	err = explainVanished("", err)
	if err == nil && len(segs) == 0 {
		err = fmt.Errorf("datatool: no WAL segments in %s (give the server's dataLogDir, or its wal directory)", dir)
	}
	res.Torn = torn
	if err == nil && torn != nil {
		if opts.JSON {
			err = enc.Encode(jsonTornLine{Type: "tornTail", Path: torn.Path, Offset: torn.Offset, Bytes: torn.Bytes, Reason: torn.Reason.Error()})
		} else {
			_, err = fmt.Fprintf(bw, "torn tail: %s at offset %d: the last %d bytes are not a whole record (%v): a write cut short by a crash, or being written now; the server truncates it at start\n",
				torn.Path, torn.Offset, torn.Bytes, torn.Reason)
		}
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return res, err
}

// writeRecordText writes one record as text lines.
func writeRecordText(b *strings.Builder, r *storage.WALRecord) {
	fmt.Fprintf(b, "  @%d ", r.Offset)
	switch r.Kind {
	case storage.RecordHardState:
		fmt.Fprintf(b, "hardstate term=%d vote=%d commit=%d\n", r.HardState.Term, r.HardState.Vote, r.HardState.Commit)
	case storage.RecordSnapshotMarker:
		fmt.Fprintf(b, "snapshot index=%d term=%d\n", r.Marker.Index, r.Marker.Term)
	case storage.RecordEntry:
		e := &r.Entry
		fmt.Fprintf(b, "entry index=%d term=%d ", e.Index, e.Term)
		writeEntryText(b, e)
	}
}

// writeEntryText describes a raft entry's payload on the rest of the line
// (and further indented lines for multi ops).
func writeEntryText(b *strings.Builder, e *storage.WALEntry) {
	if e.Type != storage.EntryNormal {
		changes, transition, err := e.Membership()
		if err != nil {
			fmt.Fprintf(b, "%s UNDECODABLE: %v\n", e.Type, err)
			return
		}
		fmt.Fprintf(b, "%s %s", e.Type, strings.Join(changes, " "))
		if transition != "" {
			fmt.Fprintf(b, " transition=%s", transition)
		}
		b.WriteByte('\n')
		return
	}
	if len(e.Data) == 0 {
		b.WriteString("empty (a new leader's first entry)\n")
		return
	}
	fe, err := fsm.DecodeEntry(e.Data)
	if err != nil {
		fmt.Fprintf(b, "UNDECODABLE fsm entry of %d bytes: %v\n", len(e.Data), err)
		return
	}
	fmt.Fprintf(b, "zxid=%s time=%s session=%s", hexID(int64(e.Index)), msTime(fe.Time), hexID(fe.Session))
	if fe.ReqID != 0 {
		fmt.Fprintf(b, " req=%d", fe.ReqID)
	}
	if fe.Origin != 0 {
		fmt.Fprintf(b, " origin=%d", fe.Origin)
	}
	if fe.Term != 0 {
		fmt.Fprintf(b, " proposedTerm=%d", fe.Term)
		if fe.Term != e.Term {
			b.WriteString(" (dropped on apply: committed in a later term)")
		}
	}
	if fe.Flags&fsm.EntryFlagEnforceQuota != 0 {
		b.WriteString(" enforceQuota")
	}
	switch fe.Type {
	case fsm.EntryCreateSession:
		fmt.Fprintf(b, " createSession timeout=%d\n", fe.Timeout)
		return
	case fsm.EntryCloseSession:
		b.WriteString(" closeSession\n")
		return
	case fsm.EntryMoveSession:
		b.WriteString(" moveSession\n")
		return
	}
	if len(fe.Auth) > 0 {
		ids := make([]string, len(fe.Auth))
		for i, id := range fe.Auth {
			ids[i] = id.Scheme + ":" + id.ID
		}
		fmt.Fprintf(b, " auth=[%s]", strings.Join(ids, " "))
	}
	if !fe.Multi && len(fe.Ops) == 1 {
		b.WriteByte(' ')
		writeOpText(b, &fe.Ops[0])
		b.WriteByte('\n')
		return
	}
	fmt.Fprintf(b, " multi ops=%d\n", len(fe.Ops))
	for i := range fe.Ops {
		fmt.Fprintf(b, "      %d: ", i+1)
		writeOpText(b, &fe.Ops[i])
		b.WriteByte('\n')
	}
}

func writeOpText(b *strings.Builder, op *fsm.Op) {
	fmt.Fprintf(b, "%s %s", op.Op, op.Path)
	switch op.Op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		fmt.Fprintf(b, " mode=%s", createModeName(op.Flags))
		if op.Op == proto.OpCreateTTL {
			fmt.Fprintf(b, " ttl=%d", op.TTL)
		}
		fmt.Fprintf(b, " acl=%s", aclText(op.ACL))
		writeDataText(b, op.Data)
	case proto.OpSetData:
		fmt.Fprintf(b, " version=%d", op.Version)
		writeDataText(b, op.Data)
	case proto.OpSetACL:
		fmt.Fprintf(b, " version=%d acl=%s", op.Version, aclText(op.ACL))
	case proto.OpDelete, proto.OpCheck:
		fmt.Fprintf(b, " version=%d", op.Version)
	}
}

func writeDataText(b *strings.Builder, d []byte) {
	if d == nil {
		b.WriteString(" data=null")
		return
	}
	p, cut := preview(d)
	fmt.Fprintf(b, " data=%dB %s", len(d), dataText(p))
	if cut {
		b.WriteString("...")
	}
}

// JSON lines of a WAL dump.
type (
	jsonSegmentLine struct {
		Type       string `json:"type"` // "segment"
		Path       string `json:"path"`
		Seq        uint64 `json:"seq"`
		FirstIndex uint64 `json:"firstIndex"`
		Bytes      int64  `json:"bytes"`
	}
	jsonTornLine struct {
		Type   string `json:"type"` // "tornTail"
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
		Bytes  int64  `json:"bytes"`
		Reason string `json:"reason"`
	}
	jsonRecordLine struct {
		Type    string `json:"type"` // "entry", "hardstate", "snapshot"
		Segment string `json:"segment"`
		Offset  int64  `json:"offset"`
		// hardstate
		Vote   *uint64 `json:"vote,omitempty"`
		Commit *uint64 `json:"commit,omitempty"`
		// entry and snapshot marker
		Index uint64 `json:"index,omitempty"`
		Term  uint64 `json:"term"`
		// entry
		EntryType  string          `json:"entryType,omitempty"` // "normal", "confChange", "confChangeV2"
		ConfChange *jsonConfChange `json:"confChange,omitempty"`
		Empty      bool            `json:"empty,omitempty"`
		FSM        *jsonFSMEntry   `json:"fsm,omitempty"`
		Error      string          `json:"error,omitempty"`
	}
	jsonConfChange struct {
		Changes    []string `json:"changes"` // "ConfChangeAddNode:2"
		Transition string   `json:"transition,omitempty"`
	}
	jsonFSMEntry struct {
		Format       byte     `json:"format"`
		Type         string   `json:"type"`             // "createSession", "closeSession", "moveSession", "txn"
		Origin       uint64   `json:"origin,omitempty"` // the member whose client asked (ensembles)
		Zxid         uint64   `json:"zxid"`
		Time         int64    `json:"time"`
		Session      string   `json:"session"`
		ReqID        uint64   `json:"reqId,omitempty"`
		ProposedTerm uint64   `json:"proposedTerm,omitempty"`
		EnforceQuota bool     `json:"enforceQuota,omitempty"` // hard quotas checked (the proposer's enforceQuota)
		Dropped      bool     `json:"dropped,omitempty"`      // committed in a later term than proposed: applied as empty
		Timeout      int32    `json:"timeout,omitempty"`
		Auth         []string `json:"auth,omitempty"`
		Multi        bool     `json:"multi,omitempty"`
		Ops          []jsonOp `json:"ops,omitempty"`
	}
	jsonOp struct {
		Op         string    `json:"op"`
		Path       string    `json:"path"`
		Mode       string    `json:"mode,omitempty"`
		TTL        int64     `json:"ttl,omitempty"`
		Version    *int32    `json:"version,omitempty"`
		ACL        []jsonACL `json:"acl,omitempty"`
		DataLength *int      `json:"dataLength,omitempty"` // -1 for null data
		Data       *string   `json:"data,omitempty"`       // preview
		Encoding   string    `json:"dataEncoding,omitempty"`
		Truncated  bool      `json:"dataTruncated,omitempty"`
	}
)

func recordJSON(r *storage.WALRecord) jsonRecordLine {
	line := jsonRecordLine{Type: r.Kind.String(), Segment: filepath.Base(r.Segment.Path), Offset: r.Offset}
	switch r.Kind {
	case storage.RecordHardState:
		hs := r.HardState
		line.Term, line.Vote, line.Commit = hs.Term, &hs.Vote, &hs.Commit
	case storage.RecordSnapshotMarker:
		line.Index, line.Term = r.Marker.Index, r.Marker.Term
	case storage.RecordEntry:
		e := &r.Entry
		line.Index, line.Term = e.Index, e.Term
		line.EntryType = e.Type.String()
		switch e.Type {
		case storage.EntryConfChange, storage.EntryConfChangeV2:
			changes, transition, err := e.Membership()
			if err != nil {
				line.Error = err.Error()
			} else {
				line.ConfChange = &jsonConfChange{Changes: changes, Transition: transition}
			}
		default:
			if len(e.Data) == 0 {
				line.Empty = true
				break
			}
			fe, err := fsm.DecodeEntry(e.Data)
			if err != nil {
				line.Error = err.Error()
				break
			}
			line.FSM = fsmEntryJSON(e, fe)
		}
	}
	return line
}

func fsmEntryJSON(e *storage.WALEntry, fe *fsm.Entry) *jsonFSMEntry {
	j := &jsonFSMEntry{Format: e.Data[0], Zxid: e.Index, Time: fe.Time, Session: hexID(fe.Session), ReqID: fe.ReqID,
		ProposedTerm: fe.Term, Dropped: fe.Term != 0 && fe.Term != e.Term, Origin: fe.Origin,
		EnforceQuota: fe.Flags&fsm.EntryFlagEnforceQuota != 0}
	switch fe.Type {
	case fsm.EntryCreateSession:
		j.Type, j.Timeout = "createSession", fe.Timeout
		return j
	case fsm.EntryCloseSession:
		j.Type = "closeSession"
		return j
	case fsm.EntryMoveSession:
		j.Type = "moveSession"
		return j
	}
	j.Type, j.Multi = "txn", fe.Multi
	for _, id := range fe.Auth {
		j.Auth = append(j.Auth, id.Scheme+":"+id.ID)
	}
	for i := range fe.Ops {
		op := &fe.Ops[i]
		jo := jsonOp{Op: op.Op.String(), Path: op.Path}
		withData := func() {
			n := len(op.Data)
			if op.Data == nil {
				n = -1
			}
			jo.DataLength = &n
			p, cut := preview(op.Data)
			if op.Data != nil {
				jo.Data, jo.Encoding = dataJSON(p)
			}
			jo.Truncated = cut
		}
		v := op.Version
		switch op.Op {
		case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
			jo.Mode, jo.ACL = createModeName(op.Flags), aclJSON(op.ACL)
			if op.Op == proto.OpCreateTTL {
				jo.TTL = op.TTL
			}
			withData()
		case proto.OpSetData:
			jo.Version = &v
			withData()
		case proto.OpSetACL:
			jo.Version, jo.ACL = &v, aclJSON(op.ACL)
		case proto.OpDelete, proto.OpCheck:
			jo.Version = &v
		}
		j.Ops = append(j.Ops, jo)
	}
	return j
}
