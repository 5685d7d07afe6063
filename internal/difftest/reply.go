package difftest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/proto"
)

// reply renders a reply to a request of type op: the error name, or "ok"
// and the decoded response. Bytes left after the record are shown as
// "+N trailing". An error reply whose header carries a negative zxid
// (ZooKeeper's answer to an opcode it does not know) shows it as zxid=N.
func (r *runner) reply(op proto.OpCode, f Frame) string {
	if f.Header.Err != proto.ErrOK {
		s := ErrName(f.Header.Err)
		if f.Header.Zxid < 0 {
			s += " zxid=" + strconv.FormatInt(f.Header.Zxid, 10)
		}
		if len(f.Body) > 0 {
			s += fmt.Sprintf(" body=%s", hexOrLen(f.Body))
		}
		return s
	}
	resp, err := proto.NewResponse(op)
	if err != nil {
		if len(f.Body) == 0 {
			return "ok"
		}
		return "ok body=" + hexOrLen(f.Body)
	}
	d := proto.NewDecoder(f.Body)
	resp.Decode(d)
	if d.Err() != nil {
		return fmt.Sprintf("ok undecodable %d-byte body: %v", len(f.Body), d.Err())
	}
	s := "ok"
	switch body := r.response(resp); {
	case strings.HasPrefix(body, "\n"):
		s += body
	case body != "":
		s += " " + body
	}
	if n := d.Remaining(); n > 0 {
		s += fmt.Sprintf(" +%d trailing", n)
	}
	return s
}

// response renders a decoded response record ("" for none).
func (r *runner) response(resp proto.Response) string {
	tr := r.tr
	switch v := resp.(type) {
	case *proto.CreateResponse:
		return tr.Path(v.Path)
	case *proto.Create2Response:
		return tr.Path(v.Path) + " " + tr.Stat(&v.Stat)
	case *proto.StatResponse:
		return tr.Stat(&v.Stat)
	case *proto.GetDataResponse:
		return FormatData(v.Data) + " " + tr.Stat(&v.Stat)
	case *proto.GetACLResponse:
		return FormatACLs(v.ACL) + " " + tr.Stat(&v.Stat)
	case *proto.GetChildrenResponse:
		return sortedStrings(v.Children, showName)
	case *proto.GetChildren2Response:
		return sortedStrings(v.Children, showName) + " " + tr.Stat(&v.Stat)
	case *proto.SyncResponse:
		return tr.Path(v.Path)
	case *proto.GetEphemeralsResponse:
		return sortedStrings(v.Ephemerals, tr.Path)
	case *proto.GetAllChildrenNumberResponse:
		return strconv.Itoa(int(v.TotalNumber))
	case *proto.ErrorResponse:
		return "err=" + ErrName(v.Err)
	case *proto.WhoAmIResponse:
		if v.ClientInfo == nil {
			return "null"
		}
		// ZooKeeper keeps a connection's identities in a hash set, so
		// their order is unspecified: sort them.
		parts := make([]string, len(v.ClientInfo))
		for i, ci := range v.ClientInfo {
			parts[i] = ci.AuthScheme + ":" + ci.User
		}
		return sortedStrings(parts, showName)
	case *proto.MultiResponse:
		return r.multiResults(v)
	case *proto.Empty:
		return ""
	}
	return fmt.Sprintf("%T", resp)
}

// showName prints a child name, quoted when it is not printable.
func showName(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) || r == ' ' || r == '[' || r == ']' || r == '"' {
			return strconv.Quote(s)
		}
	}
	return s
}

// multiResults renders the results of a multi, one per indented line.
func (r *runner) multiResults(m *proto.MultiResponse) string {
	if len(m.Results) == 0 {
		return "[]"
	}
	var b strings.Builder
	for i, res := range m.Results {
		fmt.Fprintf(&b, "\n  #%d ", i)
		switch res.Op {
		case proto.OpError:
			b.WriteString("error " + ErrName(res.Err))
		case proto.OpCreate:
			b.WriteString("create " + r.tr.Path(res.Path))
		case proto.OpCreate2:
			b.WriteString("create2 " + r.tr.Path(res.Path) + " " + r.tr.Stat(res.Stat))
		case proto.OpDelete:
			b.WriteString("delete")
		case proto.OpCheck:
			b.WriteString("check")
		case proto.OpSetData:
			b.WriteString("set " + r.tr.Stat(res.Stat))
		case proto.OpGetData:
			b.WriteString("get " + FormatData(res.Data) + " " + r.tr.Stat(res.Stat))
		case proto.OpGetChildren:
			b.WriteString("ls " + sortedStrings(res.Children, showName))
		default:
			b.WriteString(res.Op.String())
		}
	}
	return b.String()
}
