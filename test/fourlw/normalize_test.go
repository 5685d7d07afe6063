package fourlw_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The canonical forms below replace what legitimately differs between two
// servers in the same state by placeholders and sort what either server
// prints in hash order. A value whose format is wrong is left as it is, so
// the comparison with the other server's placeholder fails and shows it.

// sessionLabels maps the session ids of one server to labels shared by both
// servers ("s1", "s2" for the first and second client).
type sessionLabels map[int64]string

// rule is one regexp replacement.
type rule struct {
	re   *regexp.Regexp
	repl string
}

func rules(pairs ...string) []rule {
	out := make([]rule, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, rule{regexp.MustCompile(pairs[i]), pairs[i+1]})
	}
	return out
}

func apply(text string, rs []rule) string {
	for _, r := range rs {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	return text
}

// javaDoubleRe matches Java's Double.toString of a latency average rounded
// to four decimals: "0.0", "5.9286", "12.5" — never "0.0000" or "3".
const javaDoubleRe = `\d+\.(?:0|\d{0,3}[1-9])`

// common replaces session ids by their labels, the full version by
// <version> and loopback ports by <port>.
var commonRules = rules(
	`\d+\.\d+\.\d+[^\s,]*, built on [^\n]+`, `<version>`,
	`/127\.0\.0\.1:\d+`, `/127.0.0.1:<port>`,
)

func canonCommon(text string, labels sessionLabels) string {
	for id, label := range labels {
		re := regexp.MustCompile(`0x` + strconv.FormatUint(uint64(id), 16) + `\b`)
		text = re.ReplaceAllString(text, "0x<"+label+">")
	}
	return apply(text, commonRules)
}

// srvrRules normalize srvr and stat.
var srvrRules = rules(
	`(?m)^Latency min/avg/max: \d+/`+javaDoubleRe+`/\d+$`, `Latency min/avg/max: <min>/<avg>/<max>`,
	`(?m)^Received: \d+$`, `Received: <n>`,
	`(?m)^Sent: \d+$`, `Sent: <n>`,
	`(?m)^Zxid: 0x[0-9a-f]+$`, `Zxid: 0x<zxid>`,
	// stat's client lines: first the connection asking, which has received
	// its command and sent nothing yet; then the others, whose interest set
	// (0 or 1) depends on timing.
	`(?m)^ /127\.0\.0\.1:<port>\[0\]\(queued=0,recved=1,sent=0\)$`, ` /127.0.0.1:<port> <asking>`,
	`(?m)^( /127\.0\.0\.1:<port>)\[\d+\](\(queued=\d+,recved=)\d+(,sent=)\d+\)$`, `$1[<ops>]$2<n>$3<n>)`,
)

// canonSrvr normalizes srvr and stat; stat's client lines are sorted.
func canonSrvr(text string, labels sessionLabels) string {
	text = apply(canonCommon(text, labels), srvrRules)
	before, rest, ok := strings.Cut(text, "Clients:\n")
	if !ok {
		return text
	}
	clients, after, _ := strings.Cut(rest, "\n\n")
	lines := strings.Split(clients, "\n")
	slices.Sort(lines)
	return before + "Clients:\n" + strings.Join(lines, "\n") + "\n\n" + after
}

// confRules normalize conf.
var confRules = rules(
	`(?m)^clientPort=\d+$`, `clientPort=<port>`,
	`(?m)^(dataDir|dataLogDir)=/.+$`, `$1=<dir>`,
	`(?m)^(dataDirSize|dataLogSize)=\d+$`, `$1=<n>`,
	`(?m)^serverId=\d+$`, `serverId=<id>`,
)

// consLineRe splits a cons line: address, interest set, fields.
var consLineRe = regexp.MustCompile(`^ (/127\.0\.0\.1:<port>)\[(\d+)\]\((.*)\)$`)

// paddockSessionless is what Paddock adds to the line of a connection
// without a session, where ZooKeeper stops after sent=.
var paddockSessionless = regexp.MustCompile(
	`^queued=0,recved=1,sent=0,sid=0x0,lop=NA,est=\d+,to=\d+,lcxid=0x0,lzxid=0xffffffffffffffff,lresp=0,llat=0,minlat=0,avglat=0,maxlat=0$`)

// consValue is the format and placeholder of each cons field whose value
// varies; fields not listed are compared as they are.
var consValue = map[string]struct {
	re          *regexp.Regexp
	placeholder string
}{
	"recved": {regexp.MustCompile(`^\d+$`), "<n>"},
	"sent":   {regexp.MustCompile(`^\d+$`), "<n>"},
	"est":    {regexp.MustCompile(`^\d{13}$`), "<ms>"},
	"lcxid":  {regexp.MustCompile(`^0x[0-9a-f]+$`), "0x<cxid>"},
	"lzxid":  {regexp.MustCompile(`^0x[0-9a-f]{1,15}$`), "0x<zxid>"},
	// lresp=0 (no response since the connection opened or since crst)
	// stays as it is.
	"lresp":  {regexp.MustCompile(`^[1-9]\d*$`), "<ms>"},
	"llat":   {regexp.MustCompile(`^\d+$`), "<n>"},
	"minlat": {regexp.MustCompile(`^\d+$`), "<n>"},
	"avglat": {regexp.MustCompile(`^\d+$`), "<n>"},
	"maxlat": {regexp.MustCompile(`^\d+$`), "<n>"},
}

// canonCons normalizes cons and sorts its lines. For Paddock's output it
// first undoes the two documented differences: the full form of a
// connection without a session, and lcxid=0x0 on a session whose stats were
// reset (ZooKeeper omits lcxid then).
func canonCons(text string, labels sessionLabels, paddock bool) (string, error) {
	text = canonCommon(text, labels)
	body, ok := strings.CutSuffix(text, "\n\n")
	if !ok {
		return text, fmt.Errorf("cons output does not end with a blank line: %q", text)
	}
	var lines []string
	for _, line := range strings.Split(body, "\n") {
		m := consLineRe.FindStringSubmatch(line)
		if m == nil {
			return text, fmt.Errorf("malformed cons line %q", line)
		}
		addr, ops, fields := m[1], m[2], m[3]
		if paddock && strings.Contains(fields, ",sid=0x0,") {
			if !paddockSessionless.MatchString(fields) {
				return text, fmt.Errorf("connection without session: unexpected fields %q", fields)
			}
			fields, _, _ = strings.Cut(fields, ",sid=")
		}
		if paddock && strings.Contains(fields, ",lop=NA,") {
			fields = strings.Replace(fields, ",lcxid=0x0,", ",", 1)
		}
		parts := strings.Split(fields, ",")
		for i, p := range parts {
			k, v, _ := strings.Cut(p, "=")
			if f, ok := consValue[k]; ok && f.re.MatchString(v) {
				parts[i] = k + "=" + f.placeholder
			}
		}
		if strings.Contains(fields, ",sid=") {
			ops = "<ops>" // a session's interest set depends on timing
		}
		lines = append(lines, " "+addr+"["+ops+"]("+strings.Join(parts, ",")+")")
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n\n", nil
}

// canonBlocks sorts the tab-indented lines under each header line and then
// sorts the consecutive blocks whose headers match sortable, for the hash
// ordered listings of wchc, wchp and dump.
func canonBlocks(text string, sortable func(header string) bool) string {
	type block struct {
		header string
		items  []string
	}
	var blocks []block
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "\t") && len(blocks) > 0 {
			blocks[len(blocks)-1].items = append(blocks[len(blocks)-1].items, line)
			continue
		}
		blocks = append(blocks, block{header: line})
	}
	for i := range blocks {
		slices.Sort(blocks[i].items)
	}
	for i := 0; i < len(blocks); {
		j := i
		for j < len(blocks) && sortable(blocks[j].header) {
			j++
		}
		if j > i {
			slices.SortFunc(blocks[i:j], func(a, b block) int { return strings.Compare(a.header, b.header) })
			i = j
			continue
		}
		i++
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.header)
		for _, it := range bl.items {
			b.WriteString(it)
		}
	}
	return b.String()
}

// canonWatches normalizes wchc and wchp.
func canonWatches(text string, labels sessionLabels) string {
	return canonBlocks(canonCommon(text, labels), func(h string) bool { return h != "\n" })
}

// javaDate matches java.util.Date.toString, e.g. "Sat Nov 21 11:24:43 UTC 2026".
const javaDate = `[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d [A-Za-z0-9+:-]+ \d{4}`

var (
	expireLineRe = regexp.MustCompile(`^(\d+) expire at (` + javaDate + `):$`)
	setsLineRe   = regexp.MustCompile(`^(Session|Connections) Sets \((\d+)\)/\((\d+)\):$`)
)

// canonDump checks the structure of dump's two expiry-queue listings (each
// "N expire at <date>:" line is followed by N entries; "Sets (a)/(b)" counts
// the buckets and the entries) and then drops the bucket lines, whose
// grouping depends on timing, and sorts the entries and the ephemeral
// sessions.
func canonDump(text string, labels sessionLabels) (string, error) {
	lines := strings.Split(strings.TrimSuffix(canonCommon(text, labels), "\n"), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		m := setsLineRe.FindStringSubmatch(lines[i])
		if m == nil {
			out = append(out, lines[i])
			continue
		}
		wantSets, _ := strconv.Atoi(m[2])
		wantEntries, _ := strconv.Atoi(m[3])
		out = append(out, m[1]+" Sets (<n>)/("+m[3]+"):")
		sets, entries := 0, 0
		for i+1 < len(lines) {
			e := expireLineRe.FindStringSubmatch(lines[i+1])
			if e == nil {
				break
			}
			i++
			sets++
			n, _ := strconv.Atoi(e[1])
			for range n {
				if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "\t") {
					return text, fmt.Errorf("%s: bucket %q announces %d entries, fewer follow", m[1], lines[i], n)
				}
				i++
				entries++
				out = append(out, lines[i])
			}
		}
		if sets != wantSets || entries != wantEntries {
			return text, fmt.Errorf("%q: found %d buckets and %d entries", lines[0], sets, entries)
		}
	}
	return canonBlocks(strings.Join(out, "\n")+"\n", func(h string) bool { return strings.HasPrefix(h, "0x") }), nil
}

// keyValues parses lines "key<sep>value" in order; it reports a line
// without the separator.
func keyValues(text, sep string) (keys []string, values map[string]string, err error) {
	values = make(map[string]string)
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		k, v, ok := strings.Cut(line, sep)
		if !ok {
			return nil, nil, fmt.Errorf("line %q has no %q", line, sep)
		}
		if _, dup := values[k]; dup {
			return nil, nil, fmt.Errorf("key %q appears twice", k)
		}
		keys = append(keys, k)
		values[k] = v
	}
	return keys, values, nil
}

// sameOrder reports the first pair of keys present in both lists whose
// relative order differs, or "".
func sameOrder(ref, got []string) string {
	pos := make(map[string]int, len(ref))
	for i, k := range ref {
		pos[k] = i
	}
	last, lastKey := -1, ""
	for _, k := range got {
		p, ok := pos[k]
		if !ok {
			continue
		}
		if p < last {
			return fmt.Sprintf("%s comes after %s, ZooKeeper prints it before", k, lastKey)
		}
		last, lastKey = p, k
	}
	return ""
}

// lineDiff describes the differences between two texts line by line.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  zookeeper: %q\n  paddock:   %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
