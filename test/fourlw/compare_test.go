package fourlw_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

// ephemeral is the create flag of an ephemeral node.
const ephemeral = 1

// pair is Apache ZooKeeper and Paddock, started alike and driven alike.
type pair struct {
	zk, pd             *zktest.Process
	zkLabels, pdLabels sessionLabels
	// recursiveWatches is how many persistent recursive watches the
	// scenario set: ZooKeeper 3.8.0 counts each in both of its watch
	// tables for mntr's zk_watch_count, Paddock (like 3.9) in one.
	recursiveWatches int
}

func startPair(t *testing.T) *pair {
	t.Helper()
	return &pair{
		zk: zktest.StartZooKeeper(t, zktest.ZKOptions{}),
		pd: zktest.StartPaddock(t, zktest.PaddockOptions{}),
	}
}

// words sends cmd to both servers.
func (p *pair) words(t *testing.T, cmd string) (zkOut, pdOut string) {
	t.Helper()
	zkOut, err := zktest.FourLetterWord(p.zk.Addr, cmd)
	if err != nil {
		t.Fatalf("zookeeper: %v", err)
	}
	pdOut, err = zktest.FourLetterWord(p.pd.Addr, cmd)
	if err != nil {
		t.Fatalf("paddock: %v", err)
	}
	return zkOut, pdOut
}

// populate gives a server two sessions, nodes, ephemerals and one watch of
// every kind, without firing any, and a failed write and an auth packet as
// the second session's last requests, and returns the sessions' labels.
func populate(t *testing.T, addr string) sessionLabels {
	t.Helper()
	c1 := dialClient(t, addr, 30000)
	c1.create("/app", "config", 0)
	c1.create("/app/x", "1", 0)
	c1.create("/app/y", "22", 0)
	c1.create("/eph1", "", ephemeral)
	c1.must(proto.OpGetData, &proto.GetDataRequest{Path: "/app", Watch: true}) // data
	c1.must(proto.OpExists, &proto.ExistsRequest{Path: "/app/x", Watch: true}) // data
	if e := c1.do(proto.OpExists, &proto.ExistsRequest{Path: "/missing", Watch: true}); e != proto.ErrNoNode {
		t.Fatalf("%s: exists /missing: error %v, want NoNode", addr, e)
	} // exist watch on a missing node: data table
	c1.must(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/app", Watch: true}) // child
	c1.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/app/x", Mode: 0})         // persistent
	c1.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/app/y", Mode: 1})         // persistent recursive
	c2 := dialClient(t, addr, 20000)
	c2.create("/eph2", "e", ephemeral)
	c2.must(proto.OpGetData, &proto.GetDataRequest{Path: "/app", Watch: true})
	c2.must(proto.OpExists, &proto.ExistsRequest{Path: "/app/y", Watch: true})
	// A write that fails (ZooKeeper's error txn: cons shows lop=NA), then
	// an auth packet (answered outside the pipeline: lop stays).
	if e := c2.do(proto.OpDelete, &proto.DeleteRequest{Path: "/missing", Version: -1}); e != proto.ErrNoNode {
		t.Fatalf("%s: delete /missing: error %v, want NoNode", addr, e)
	}
	c2.auth("digest", "user:password")
	return sessionLabels{c1.sessionID: "s1", c2.sessionID: "s2"}
}

// canonFunc normalizes one command's output; paddock tells which server
// wrote it, for the documented differences.
type canonFunc func(text string, labels sessionLabels, paddock bool) (string, error)

func byRules(rs []rule) canonFunc {
	return func(text string, labels sessionLabels, _ bool) (string, error) {
		return apply(canonCommon(text, labels), rs), nil
	}
}

var (
	exact      canonFunc = func(text string, _ sessionLabels, _ bool) (string, error) { return text, nil }
	srvrCanon  canonFunc = func(text string, l sessionLabels, _ bool) (string, error) { return canonSrvr(text, l), nil }
	consCanon  canonFunc = canonCons
	watchCanon canonFunc = func(text string, l sessionLabels, _ bool) (string, error) { return canonWatches(text, l), nil }
	dumpCanon  canonFunc = func(text string, l sessionLabels, _ bool) (string, error) { return canonDump(text, l) }
	dirsCanon            = byRules(rules(`(?m)^(datadir_size|logdir_size): \d+$`, `$1: <n>`))
)

// textWords are the commands compared as normalized text. mntr and envi,
// compared key by key, and crst/srst, which change state, are separate.
var textWords = []struct {
	cmd   string
	canon canonFunc
}{
	{"ruok", exact},
	{"isro", exact},
	{"hash", exact},
	{"srvr", srvrCanon},
	{"stat", srvrCanon},
	{"conf", byRules(confRules)},
	{"cons", consCanon},
	{"wchs", exact},
	{"wchc", watchCanon},
	{"wchp", watchCanon},
	{"dump", dumpCanon},
	{"dirs", dirsCanon},
	{"gtmk", exact}, // 306, or the mask stmk set
}

// compareText compares one command's normalized output.
func (p *pair) compareText(t *testing.T, cmd string, canon canonFunc) {
	t.Helper()
	zkOut, pdOut := p.words(t, cmd)
	zkCanon, err := canon(zkOut, p.zkLabels, false)
	if err != nil {
		t.Errorf("%s: zookeeper's answer: %v\n%s", cmd, err, zkOut)
		return
	}
	pdCanon, err := canon(pdOut, p.pdLabels, true)
	if err != nil {
		t.Errorf("%s: paddock's answer: %v\n%s", cmd, err, pdOut)
		return
	}
	if zkCanon != pdCanon {
		t.Errorf("%s differs after normalization:\n%s\nzookeeper raw:\n%s\npaddock raw:\n%s",
			cmd, lineDiff(zkCanon, pdCanon), zkOut, pdOut)
	}
}

// TestCompareWithZooKeeper runs every four-letter word against both servers
// fresh, then after the same clients did the same things, then after crst
// and srst.
func TestCompareWithZooKeeper(t *testing.T) {
	p := startPair(t)
	compareAll := func(t *testing.T) {
		for _, w := range textWords {
			p.compareText(t, w.cmd, w.canon)
		}
		p.compareMntr(t)
		p.compareEnvi(t)
		p.compareSetTraceMask(t)
	}
	t.Run("fresh", func(t *testing.T) {
		compareAll(t)
		p.checkConfDirs(t)
	})

	p.zkLabels = populate(t, p.zk.Addr)
	p.pdLabels = populate(t, p.pd.Addr)
	p.recursiveWatches = 1
	t.Run("populated", func(t *testing.T) {
		compareAll(t)
		p.compareSessionCounts(t)
		p.checkPaddockCons(t)
	})

	t.Run("reset", func(t *testing.T) {
		for _, cmd := range []string{"crst", "srst"} {
			p.compareText(t, cmd, exact)
		}
		// After srst the counters hold only what followed it: the srst
		// answer sent and this srvr received, and no latency.
		p.compareText(t, "srvr", byRules(rules(`(?m)^Zxid: 0x[0-9a-f]+$`, `Zxid: 0x<zxid>`)))
		p.compareText(t, "cons", consCanon)
	})
}

// checkConfDirs checks the paths conf prints, which normalization hides:
// ZooKeeper prints the directories of its snapshots and transaction logs,
// <dataDir>/version-2 and <dataLogDir>/version-2; Paddock, which keeps
// no version-2 directory, prints the configured directories themselves
// (its snapshots and log are in their snap and wal subdirectories), and
// their sizes, which hold all of Paddock's data.
func (p *pair) checkConfDirs(t *testing.T) {
	t.Helper()
	zkOut, pdOut := p.words(t, "conf")
	for _, c := range []struct {
		name, out, want string
	}{
		{"zookeeper", zkOut, filepath.Join(p.zk.DataDir, "version-2")},
		{"paddock", pdOut, p.pd.DataDir},
	} {
		want, err := filepath.Abs(c.want)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"dataDir", "dataLogDir"} {
			if line := key + "=" + want + "\n"; !strings.Contains(c.out, line) {
				t.Errorf("%s conf lacks %q:\n%s", c.name, line, c.out)
			}
		}
	}
}

// checkPaddockCons checks what normalization hides in Paddock's cons: the
// interest set, the session timeouts and last operations of the scenario.
func (p *pair) checkPaddockCons(t *testing.T) {
	t.Helper()
	out, err := zktest.FourLetterWord(p.pd.Addr, "cons")
	if err != nil {
		t.Fatal(err)
	}
	text := canonCommon(out, p.pdLabels)
	for _, want := range []string{
		// The handshake counts as a packet each way, as ZooKeeper's.
		`[1](queued=0,recved=11,sent=11,sid=0x<s1>,lop=ADDW,`,
		`,to=30000,lcxid=0xa,`,
		`[1](queued=0,recved=6,sent=6,sid=0x<s2>,lop=NA,`,
		`,to=20000,lcxid=0x4,`,
		`[0](queued=0,recved=1,sent=0,sid=0x0,lop=NA,`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("paddock cons lacks %q:\n%s", want, text)
		}
	}
}

// mntrOmitted are the gauges ZooKeeper 3.8 prints that Paddock leaves out,
// having no such value. ZooKeeper's counters and summaries, printed after
// its gauges (after zk_non_mtls_local_conn_count), are all left out.
var mntrOmitted = []string{
	"zk_last_client_response_size", "zk_max_client_response_size",
	"zk_min_client_response_size", "zk_auth_failed_count",
}

// mntrKind says how each of Paddock's mntr values is compared.
var mntrKind = map[string]string{
	"zk_version":                     "version",
	"zk_server_state":                "exact",
	"zk_ephemerals_count":            "exact",
	"zk_num_alive_connections":       "exact",
	"zk_avg_latency":                 "double",
	"zk_outstanding_requests":        "exact",
	"zk_znode_count":                 "exact",
	"zk_global_sessions":             "exact",
	"zk_non_mtls_remote_conn_count":  "exact",
	"zk_packets_sent":                "int",
	"zk_packets_received":            "int",
	"zk_connection_drop_probability": "exact",
	"zk_watch_count":                 "watches",
	"zk_min_latency":                 "int",
	"zk_max_file_descriptor_count":   "exact",
	"zk_approximate_data_size":       "data",
	"zk_open_file_descriptor_count":  "int",
	"zk_local_sessions":              "exact",
	"zk_uptime":                      "int",
	"zk_max_latency":                 "int",
	"zk_outstanding_tls_handshake":   "exact",
	"zk_non_mtls_local_conn_count":   "exact",
}

// mntrEnsembleKind says how the keys of an ensemble member's mntr are
// compared. zk_observer_master_id, the id of each ensemble's leader, is
// checked by the ensemble test itself. The synced counts depend on how
// soon each leader counts its learners as synced: compared as integers.
// Proposal sizes ("size": -1 before the first) are the sizes of each
// server's own log entries.
var mntrEnsembleKind = map[string]string{
	"zk_peer_state":                  "exact",
	"zk_quorum_size":                 "exact",
	"zk_observer_master_id":          "int",
	"zk_learners":                    "int",
	"zk_synced_followers":            "int",
	"zk_synced_non_voting_followers": "exact",
	"zk_synced_observers":            "int",
	"zk_pending_syncs":               "exact",
	"zk_leader_uptime":               "int",
	"zk_last_proposal_size":          "size",
	"zk_min_proposal_size":           "size",
	"zk_max_proposal_size":           "size",
}

func init() {
	for k, v := range mntrEnsembleKind {
		mntrKind[k] = v
	}
}

var (
	intRe    = regexp.MustCompile(`^\d+$`)
	doubleRe = regexp.MustCompile(`^` + javaDoubleRe + `$`)
	sizeRe   = regexp.MustCompile(`^(?:-1|\d+)$`)
)

// compareMntr compares mntr key by key: Paddock's keys must be ZooKeeper's,
// in ZooKeeper's order, with only mntrOmitted missing among the gauges.
func (p *pair) compareMntr(t *testing.T) {
	t.Helper()
	zkOut, pdOut := p.words(t, "mntr")
	compareMntrOutputs(t, zkOut, pdOut, p.recursiveWatches, 0)
}

// compareMntrOutputs compares two mntr answers as compareMntr describes;
// recursiveWatches is how many persistent recursive watches ZooKeeper
// counts twice, and dataSizeDiff how many more bytes of data ZooKeeper's
// tree holds (zk_approximate_data_size).
func compareMntrOutputs(t *testing.T, zkOut, pdOut string, recursiveWatches int, dataSizeDiff int64) {
	t.Helper()
	zkKeys, zkVals, err := keyValues(zkOut, "\t")
	if err != nil {
		t.Fatalf("zookeeper mntr: %v", err)
	}
	pdKeys, pdVals, err := keyValues(pdOut, "\t")
	if err != nil {
		t.Fatalf("paddock mntr: %v", err)
	}
	if msg := sameOrder(zkKeys, pdKeys); msg != "" {
		t.Errorf("mntr order: %s", msg)
	}
	lastShared := -1
	for _, k := range pdKeys {
		if i := slices.Index(zkKeys, k); i < 0 {
			t.Errorf("mntr: paddock prints %s, which zookeeper does not", k)
		} else {
			lastShared = max(lastShared, i)
		}
	}
	for _, k := range zkKeys[:lastShared+1] {
		if _, ok := pdVals[k]; !ok && !slices.Contains(mntrOmitted, k) {
			t.Errorf("mntr: paddock lacks zookeeper's gauge %s (%s)", k, zkVals[k])
		}
	}
	for _, k := range mntrOmitted {
		if _, ok := pdVals[k]; ok {
			t.Errorf("mntr: %s is listed as omitted but paddock prints it", k)
		}
	}
	for _, k := range pdKeys {
		zv, pv := zkVals[k], pdVals[k]
		switch kind := mntrKind[k]; kind {
		case "exact":
			if zv != pv {
				t.Errorf("mntr %s: zookeeper %q, paddock %q", k, zv, pv)
			}
		case "data":
			z, err1 := strconv.ParseInt(zv, 10, 64)
			pz, err2 := strconv.ParseInt(pv, 10, 64)
			if err1 != nil || err2 != nil || pz != z-dataSizeDiff {
				t.Errorf("mntr %s: zookeeper %q, paddock %q; want zookeeper's minus %d bytes", k, zv, pv, dataSizeDiff)
			}
		case "watches":
			z, err1 := strconv.Atoi(zv)
			pw, err2 := strconv.Atoi(pv)
			if err1 != nil || err2 != nil || pw != z-recursiveWatches {
				t.Errorf("mntr %s: zookeeper %q, paddock %q; want zookeeper's minus %d recursive watches",
					k, zv, pv, recursiveWatches)
			}
		case "int", "double", "size":
			re := intRe
			switch kind {
			case "double":
				re = doubleRe
			case "size":
				re = sizeRe
			}
			if !re.MatchString(zv) || !re.MatchString(pv) {
				t.Errorf("mntr %s: want %s values, zookeeper %q, paddock %q", k, kind, zv, pv)
			}
		case "version":
			if canonCommon(zv, nil) != "<version>" || canonCommon(pv, nil) != "<version>" {
				t.Errorf("mntr %s: zookeeper %q, paddock %q", k, zv, pv)
			}
		default:
			t.Errorf("mntr %s: no comparison rule in mntrKind (paddock %q)", k, pv)
		}
	}
}

// enviZKOnly are the keys ZooKeeper's envi has and Paddock's may lack: the
// JVM's properties, and the heap limit when Go has no memory limit.
var enviZKOnly = []string{
	"java.version", "java.vendor", "java.home", "java.class.path", "java.library.path",
	"java.io.tmpdir", "java.compiler", "os.memory.max",
}

// compareEnvi compares envi key by key.
func (p *pair) compareEnvi(t *testing.T) {
	t.Helper()
	zkOut, pdOut := p.words(t, "envi")
	parse := func(name, out string) ([]string, map[string]string) {
		body, ok := strings.CutPrefix(out, "Environment:\n")
		if !ok {
			t.Fatalf("%s envi does not start with \"Environment:\": %q", name, out)
		}
		keys, vals, err := keyValues(body, "=")
		if err != nil {
			t.Fatalf("%s envi: %v", name, err)
		}
		return keys, vals
	}
	zkKeys, zkVals := parse("zookeeper", zkOut)
	pdKeys, pdVals := parse("paddock", pdOut)
	if msg := sameOrder(zkKeys, pdKeys); msg != "" {
		t.Errorf("envi order: %s", msg)
	}
	for _, k := range zkKeys {
		if _, ok := pdVals[k]; !ok && !slices.Contains(enviZKOnly, k) {
			t.Errorf("envi: paddock lacks %s", k)
		}
	}
	for _, k := range pdKeys {
		if _, ok := zkVals[k]; !ok && k != "go.version" {
			t.Errorf("envi: paddock prints %s, which zookeeper does not", k)
		}
	}
	if !strings.HasPrefix(pdVals["go.version"], "go") {
		t.Errorf("envi go.version = %q", pdVals["go.version"])
	}
	if canonCommon(pdVals["zookeeper.version"], nil) != "<version>" {
		t.Errorf("envi zookeeper.version = %q", pdVals["zookeeper.version"])
	}
	// Both servers run on this machine as this user, from this directory.
	for _, k := range []string{"os.name", "os.arch", "os.version", "user.name", "user.home", "user.dir"} {
		if zkVals[k] != pdVals[k] {
			t.Errorf("envi %s: zookeeper %q, paddock %q", k, zkVals[k], pdVals[k])
		}
	}
	mb := regexp.MustCompile(`^\d+MB$`)
	for _, k := range []string{"os.memory.free", "os.memory.total"} {
		if !mb.MatchString(pdVals[k]) {
			t.Errorf("envi %s = %q, want <n>MB", k, pdVals[k])
		}
	}
	if pdVals["host.name"] == "" {
		t.Errorf("envi host.name is empty")
	}
}

// compareSetTraceMask sends stmk with its 8-byte mask, which
// zktest.FourLetterWord cannot: both servers set the mask and answer with
// it in decimal, no newline.
func (p *pair) compareSetTraceMask(t *testing.T) {
	t.Helper()
	cmd := binary.BigEndian.AppendUint64([]byte("stmk"), 0x1234)
	var out [2]string
	for i, addr := range []string{p.zk.Addr, p.pd.Addr} {
		var err error
		if out[i], err = sendRaw(addr, cmd); err != nil {
			t.Fatal(err)
		}
	}
	if out[0] != out[1] || out[0] != "4660" {
		t.Errorf("stmk 0x1234: zookeeper %q, paddock %q, want both \"4660\"", out[0], out[1])
	}
}

// sendRaw writes b on a new connection and returns everything the server
// writes before closing it.
func sendRaw(addr string, b []byte) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, clientWait)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(clientWait))
	if _, err := nc.Write(b); err != nil {
		return "", fmt.Errorf("write to %s: %w", addr, err)
	}
	out, err := io.ReadAll(io.LimitReader(nc, 1<<20))
	if err != nil {
		return string(out), fmt.Errorf("read from %s: %w", addr, err)
	}
	return string(out), nil
}
