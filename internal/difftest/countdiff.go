package difftest

import (
	"errors"
	"fmt"

	"github.com/paddockhq/paddock/internal/proto"
)

// countDiffTries bounds how often countDiff asks again when the tree
// changed between its requests (another scenario's session expiring).
const countDiffTries = 5

// countDiff runs "allchildrendiff <a> <b>": getAllChildrenNumber of a, of
// b and of a again, one after the other on c's connection, and prints b's
// count minus a's (signed, "+1"). It is for paths whose counts take in the
// whole tree, which other scenarios change: only the difference is printed,
// and only once a's two counts agree (else it asks again). A failed request
// prints its error name instead.
func (r *runner) countDiff(c *client, st Step) error {
	if len(st.Args) != 2 {
		return errors.New("want: allchildrendiff <path> <path>")
	}
	a, err := ResolvePath(r.opts.Root, st.Args[0])
	if err != nil {
		return err
	}
	b, err := ResolvePath(r.opts.Root, st.Args[1])
	if err != nil {
		return err
	}
	r.awaitAll(c)
	if !r.live(c, st.Text) {
		return nil
	}
	for range countDiffTries {
		var n [3]int32
		for i, p := range []string{a, b, a} {
			v, res, ok := r.countOf(c, p, st.Text)
			if !ok {
				return nil
			}
			if res != "" {
				r.tr.Add(st.Text + " -> " + res)
				return nil
			}
			n[i] = v
		}
		if n[0] == n[2] {
			r.tr.Add(fmt.Sprintf("%s -> %+d", st.Text, n[1]-n[0]))
			return nil
		}
	}
	r.tr.Add(st.Text + " -> unstable")
	return nil
}

// countOf sends getAllChildrenNumber of path and waits for the reply,
// printing notifications that come first. It returns the count, or the
// reply's error name in res; ok is false when the connection is gone
// (already printed for label).
func (r *runner) countOf(c *client, path, label string) (n int32, res string, ok bool) {
	xid := c.allocXid()
	if err := c.conn.Send(xid, proto.OpGetAllChildrenNumber, &proto.GetAllChildrenNumberRequest{Path: path}); err != nil {
		r.markClosed(c, label)
		return 0, "", false
	}
	for range 100000 {
		f, err := c.conn.Next(r.opts.ReplyTimeout)
		if err != nil {
			r.tr.Add(label + " -> timeout")
			r.drop(c)
			return 0, "", false
		}
		if f.Err != nil {
			r.markClosed(c, label)
			return 0, "", false
		}
		r.noteZxid(c, f.Header)
		switch {
		case f.Header.Xid == proto.XidNotification:
			r.event(c, f)
			continue
		case f.Header.Xid != xid:
			return 0, fmt.Sprintf("reply xid %d, want %d", f.Header.Xid, xid), true
		case f.Header.Err != proto.ErrOK:
			return 0, ErrName(f.Header.Err), true
		}
		var resp proto.GetAllChildrenNumberResponse
		if err := proto.Unmarshal(f.Body, &resp); err != nil {
			return 0, "undecodable reply: " + err.Error(), true
		}
		return resp.TotalNumber, "", true
	}
	return 0, "no reply", true
}
