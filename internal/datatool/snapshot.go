package datatool

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// BodySummary counts what an fsm snapshot body holds.
type BodySummary struct {
	FSMFormat  int32  `json:"fsmFormat"`
	LastZxid   uint64 `json:"lastZxid"`
	Sessions   int    `json:"sessions"`
	ACLLists   int    `json:"aclLists"`
	Znodes     int64  `json:"znodes"`
	Persistent int64  `json:"persistent"`
	Ephemeral  int64  `json:"ephemeral"`
	Container  int64  `json:"container"`
	TTL        int64  `json:"ttl"`
	// ExtendedTypes is InspectOptions.ExtendedTypes, under which the
	// znodes were classified.
	ExtendedTypes bool `json:"extendedTypes"`
	// EphemeralOwners counts sessions owning ephemeral znodes.
	EphemeralOwners int `json:"ephemeralOwners"`
	// DataBytes sums the znodes' data lengths; ApproxDataSize adds their
	// path lengths, as ZooKeeper's approximateDataSize (and the mntr
	// zk_approximate_data_size Paddock reports) does.
	DataBytes      int64 `json:"dataBytes"`
	ApproxDataSize int64 `json:"approxDataSize"`
}

// InspectOptions tune InspectSnapshot and SummarizeBody.
type InspectOptions struct {
	// ExtendedTypes is the server's extendedTypesEnabled, which a snapshot
	// does not record. As ZooKeeper's EphemeralType classifies, an
	// ephemeralOwner whose top byte is 0xFF marks a TTL znode only with it;
	// without it (ZooKeeper's default) the znode is an ephemeral of a
	// session of the server with myid 255.
	ExtendedTypes bool
}

// SummarizeBody reads an fsm snapshot body of size bytes from r in one
// streaming pass, checking its structure (znodes depth-first, parents
// first, known ACL references), and counts what it holds.
func SummarizeBody(r io.Reader, size int64, opts InspectOptions) (BodySummary, error) {
	sum := BodySummary{ExtendedTypes: opts.ExtendedTypes}
	sc, err := NewSnapshotScanner(r, size)
	if err != nil {
		return sum, err
	}
	h := sc.Header()
	sum.FSMFormat, sum.LastZxid, sum.Sessions, sum.ACLLists = h.Format, h.Applied, len(h.Sessions), len(h.ACLs)
	owners := make(map[int64]bool)
	var sh shape
	var z Znode
	for {
		err := sc.Next(&z)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		kind := kindOf(&z.Node, opts.ExtendedTypes)
		if _, err := sh.addZnode(&z, opts.ExtendedTypes); err != nil {
			return sum, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
		}
		sum.Znodes++
		switch kind {
		case tree.Persistent:
			sum.Persistent++
		case tree.Ephemeral:
			sum.Ephemeral++
			owners[z.Node.EphemeralOwner] = true
		case tree.Container:
			sum.Container++
		case tree.TTL:
			sum.TTL++
		}
		sum.DataBytes += int64(len(z.Node.Data))
		// ZooKeeper counts the root under "" and "/", Paddock's tree one
		// byte for it (tree.rootSize): path length 1 either way.
		sum.ApproxDataSize += int64(len(z.Node.Data) + len(z.Path))
	}
	sum.EphemeralOwners = len(owners)
	return sum, nil
}

// SnapshotSummary is what "paddock snapshot inspect" reports.
type SnapshotSummary struct {
	Path          string   `json:"path"`
	FileBytes     int64    `json:"fileBytes"`
	FormatVersion int      `json:"formatVersion"` // the snapshot file format (storage)
	Index         uint64   `json:"index"`
	Term          uint64   `json:"term"`
	Voters        []uint64 `json:"voters"`
	Learners      []uint64 `json:"learners"`
	ChecksumOK    bool     `json:"checksumOK"`
	// Vanished is set when the file disappeared while being read (a
	// running server purged it): it was not found damaged.
	Vanished bool `json:"vanished,omitempty"`
	// Error says why the file is unusable, when it is.
	Error string `json:"error,omitempty"`
	// Body is set when the checksum verified and the body decoded.
	Body *BodySummary `json:"body,omitempty"`
}

// InspectSnapshot verifies the snapshot file info and summarises it. It
// returns the summary and, when the file is damaged, an error saying where;
// the summary then holds what could be read.
func InspectSnapshot(info storage.SnapshotInfo, opts InspectOptions) (*SnapshotSummary, error) {
	s := &SnapshotSummary{Path: info.Path, Index: info.Index, Term: info.Term, FormatVersion: storage.SnapshotFormatVersion}
	if fi, err := os.Stat(info.Path); err == nil {
		s.FileBytes = fi.Size()
	}
	sr, err := storage.OpenSnapshot(info)
	if err != nil {
		if vanished(info.Path) {
			s.Vanished = true
			err = vanishedError(info.Path, err)
		}
		s.Error = err.Error()
		return s, err
	}
	defer sr.Close()
	s.ChecksumOK = true
	s.Voters, s.Learners = nonNil(sr.Meta.ConfState.Voters), nonNil(sr.Meta.ConfState.Learners)
	body := sr.Body()
	sum, err := SummarizeBody(body, body.Size(), opts)
	if err != nil && vanished(info.Path) {
		s.Vanished = true
		err = vanishedError(info.Path, err)
		s.Error = err.Error()
		return s, err
	}
	if err != nil {
		err = fmt.Errorf("snapshot %s: %w", info.Path, err)
		s.Error = err.Error()
		return s, err
	}
	if sum.LastZxid != info.Index {
		err = fmt.Errorf("snapshot %s: %w: the body was taken at index %d, the file says %d", info.Path, ErrBadSnapshot, sum.LastZxid, info.Index)
		s.Error = err.Error()
	}
	s.Body = &sum
	return s, err
}

// WriteText writes the summary for people.
func (s *SnapshotSummary) WriteText(w io.Writer) error {
	var b strings.Builder
	row := func(k, format string, args ...any) {
		fmt.Fprintf(&b, "%-16s "+format+"\n", append([]any{k + ":"}, args...)...)
	}
	row("snapshot", "%s", s.Path)
	row("file size", "%d bytes", s.FileBytes)
	row("format", "%d", s.FormatVersion)
	row("raft index", "%d", s.Index)
	row("raft term", "%d", s.Term)
	switch {
	case s.ChecksumOK:
		row("members", "voters %v, learners %v", s.Voters, s.Learners)
		row("checksum", "ok")
	case s.Vanished:
		row("checksum", "not verified: the file disappeared while being read")
	default:
		row("checksum", "FAILED")
	}
	if sum := s.Body; sum != nil {
		row("fsm format", "%d", sum.FSMFormat)
		row("last zxid", "%s", hexID(int64(sum.LastZxid)))
		row("znodes", "%d (persistent %d, ephemeral %d, container %d, ttl %d)",
			sum.Znodes, sum.Persistent, sum.Ephemeral, sum.Container, sum.TTL)
		row("extended types", "%s (given: a snapshot does not record it)", onOff(sum.ExtendedTypes))
		row("sessions", "%d (%d owning ephemerals)", sum.Sessions, sum.EphemeralOwners)
		row("acl lists", "%d", sum.ACLLists)
		row("data size", "%d bytes of data; approximate data size %d (data + path lengths)", sum.DataBytes, sum.ApproxDataSize)
	}
	if s.Error != "" {
		row("error", "%s", s.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DumpOptions choose what DumpSnapshot writes.
type DumpOptions struct {
	JSON bool // JSON Lines instead of text
	Data bool // include each znode's data
	// ExtendedTypes classifies znodes as InspectOptions.ExtendedTypes does.
	ExtendedTypes bool
}

// DumpSnapshot writes every znode of the snapshot file info with its Stat,
// type and ACL (and data with opts.Data), then every session with its
// timeout and ephemeral znodes. It streams: the body is read twice (once
// to count children, which the format does not store), keeping only four
// bytes per znode and the ephemeral paths in memory.
func DumpSnapshot(w io.Writer, info storage.SnapshotInfo, opts DumpOptions) error {
	sr, err := storage.OpenSnapshot(info)
	if err != nil {
		return explainVanished(info.Path, err)
	}
	defer sr.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := dumpBody(bw, sr, opts); err != nil {
		_ = bw.Flush()
		if vanished(info.Path) {
			return vanishedError(info.Path, err)
		}
		return fmt.Errorf("snapshot %s: %w", info.Path, err)
	}
	return bw.Flush()
}

// dumpPass1 is what the first pass over a body learns.
type dumpPass1 struct {
	children   []int32            // per znode, in order
	ephemerals map[int64][]string // session -> paths
}

func countChildren(r io.Reader, size int64, extended bool) (*dumpPass1, error) {
	sc, err := NewSnapshotScanner(r, size)
	if err != nil {
		return nil, err
	}
	p := &dumpPass1{ephemerals: make(map[int64][]string)}
	var sh shape
	var z Znode
	for {
		err := sc.Next(&z)
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		eph := kindOf(&z.Node, extended) == tree.Ephemeral
		parent, err := sh.addZnode(&z, extended)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
		}
		p.children = append(p.children, 0)
		if parent >= 0 {
			p.children[parent]++
		}
		if eph {
			p.ephemerals[z.Node.EphemeralOwner] = append(p.ephemerals[z.Node.EphemeralOwner], z.Path)
		}
	}
}

// jsonSnapshotLine opens a JSON dump.
type jsonSnapshotLine struct {
	Type      string   `json:"type"` // "snapshot"
	Path      string   `json:"path"`
	Index     uint64   `json:"index"`
	Term      uint64   `json:"term"`
	Voters    []uint64 `json:"voters"`
	Learners  []uint64 `json:"learners"`
	FSMFormat int32    `json:"fsmFormat"`
	LastZxid  uint64   `json:"lastZxid"`
	Znodes    int64    `json:"znodes"`
	Sessions  int      `json:"sessions"`
	ACLLists  int      `json:"aclLists"`
	// ExtendedTypes is DumpOptions.ExtendedTypes.
	ExtendedTypes bool `json:"extendedTypes"`
}

// jsonZnodeLine is one znode of a JSON dump.
type jsonZnodeLine struct {
	Type string    `json:"type"` // "znode"
	Path string    `json:"path"`
	Kind string    `json:"kind"`
	TTL  int64     `json:"ttl,omitempty"` // milliseconds, TTL znodes
	Stat jsonStat  `json:"stat"`
	ACL  []jsonACL `json:"acl"`
	// Data is set with DumpOptions.Data: a JSON string, or null.
	Data json.RawMessage `json:"data,omitempty"`
	Enc  string          `json:"dataEncoding,omitempty"`
}

// jsonSessionLine is one session of a JSON dump.
type jsonSessionLine struct {
	Type       string   `json:"type"` // "session"
	ID         string   `json:"id"`
	Timeout    int32    `json:"timeout"`
	Owner      uint64   `json:"owner,omitempty"` // the member the client talks to (ensembles)
	Ephemerals []string `json:"ephemerals"`
}

func dumpBody(w *bufio.Writer, sr *storage.SnapshotReader, opts DumpOptions) error {
	body := sr.Body()
	p1, err := countChildren(body, body.Size(), opts.ExtendedTypes)
	if err != nil {
		return err
	}
	body = sr.Body()
	sc, err := NewSnapshotScanner(body, body.Size())
	if err != nil {
		return err
	}
	h := sc.Header()
	acls := make(map[int32]int, len(h.ACLs))
	for i, l := range h.ACLs {
		acls[l.Ref] = i
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if opts.JSON {
		err = enc.Encode(jsonSnapshotLine{Type: "snapshot", Path: sr.Path, Index: sr.Meta.Index, Term: sr.Meta.Term,
			Voters: nonNil(sr.Meta.ConfState.Voters), Learners: nonNil(sr.Meta.ConfState.Learners),
			FSMFormat: h.Format, LastZxid: h.Applied, Znodes: h.NodeCount, Sessions: len(h.Sessions), ACLLists: len(h.ACLs),
			ExtendedTypes: opts.ExtendedTypes})
	} else {
		_, err = fmt.Fprintf(w, "snapshot %s\nindex %d, term %d, voters %v, learners %v, last zxid %s, %d znodes, %d sessions, %d ACL lists, extended types %s\n\n",
			sr.Path, sr.Meta.Index, sr.Meta.Term, sr.Meta.ConfState.Voters, sr.Meta.ConfState.Learners,
			hexID(int64(h.Applied)), h.NodeCount, len(h.Sessions), len(h.ACLs), onOff(opts.ExtendedTypes))
	}
	if err != nil {
		return err
	}
	var z Znode
	var b strings.Builder
	for i := 0; ; i++ {
		err := sc.Next(&z)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if i >= len(p1.children) {
			return fmt.Errorf("%w: the body changed between passes", ErrBadSnapshot)
		}
		n := &z.Node
		st := clientStat(n, p1.children[i], opts.ExtendedTypes)
		acl := h.ACLs[acls[z.ACLRef]].ACL
		kind := kindOf(n, opts.ExtendedTypes)
		if opts.JSON {
			line := jsonZnodeLine{Type: "znode", Path: z.Path, Kind: kindName(kind), TTL: ttlOf(n, opts.ExtendedTypes), Stat: statJSON(st), ACL: aclJSON(acl)}
			if opts.Data {
				line.Data = json.RawMessage("null")
				if d, enc := dataJSON(n.Data); d != nil {
					q, err := json.Marshal(*d)
					if err != nil {
						return err
					}
					line.Data, line.Enc = q, enc
				}
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
			continue
		}
		b.Reset()
		b.WriteString(z.Path)
		b.WriteByte('\n')
		statText(&b, "  ", st)
		fmt.Fprintf(&b, "  type = %s", kindName(kind))
		switch kind {
		case tree.TTL:
			fmt.Fprintf(&b, " (ttl %d ms)", n.TTL())
		case tree.Ephemeral:
			fmt.Fprintf(&b, " (owner %s)", hexID(n.EphemeralOwner))
		}
		fmt.Fprintf(&b, "\n  acl = %s\n", aclText(acl))
		if opts.Data {
			fmt.Fprintf(&b, "  data = %s\n", dataText(n.Data))
		}
		if _, err := w.WriteString(b.String()); err != nil {
			return err
		}
	}
	if !opts.JSON {
		if _, err := fmt.Fprintf(w, "\nsessions: %d\n", len(h.Sessions)); err != nil {
			return err
		}
	}
	for _, s := range h.Sessions {
		eph := p1.ephemerals[s.ID]
		if opts.JSON {
			if err := enc.Encode(jsonSessionLine{Type: "session", ID: hexID(s.ID), Timeout: s.Timeout, Owner: s.Owner, Ephemerals: nonNil(eph)}); err != nil {
				return err
			}
			continue
		}
		b.Reset()
		fmt.Fprintf(&b, "session %s timeout %d ms, ", hexID(s.ID), s.Timeout)
		if s.Owner != 0 {
			fmt.Fprintf(&b, "client on member %d, ", s.Owner)
		}
		fmt.Fprintf(&b, "%d ephemerals\n", len(eph))
		for _, p := range eph {
			fmt.Fprintf(&b, "  %s\n", p)
		}
		if _, err := w.WriteString(b.String()); err != nil {
			return err
		}
	}
	return nil
}

// onOff names a setting's state.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// nonNil makes JSON show [] rather than null for an empty list.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
