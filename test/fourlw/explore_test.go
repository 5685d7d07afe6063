package fourlw_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

var allWords = []string{"ruok", "srvr", "stat", "conf", "cons", "envi", "mntr", "wchs", "wchc", "wchp", "dump", "isro", "dirs", "gtmk", "hash", "crst", "srst"}

func TestExplore(t *testing.T) {
	if os.Getenv("FOURLW_EXPLORE") == "" {
		t.Skip()
	}
	zk := zktest.StartZooKeeper(t, zktest.ZKOptions{})
	pd := zktest.StartPaddock(t, zktest.PaddockOptions{})
	dumpAll := func(stage string) {
		for _, s := range []struct{ name, addr string }{{"zk", zk.Addr}, {"pd", pd.Addr}} {
			for _, w := range allWords {
				out, err := zktest.FourLetterWord(s.addr, w)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join("/tmp/fourlw-explore", stage+"."+w+"."+s.name), []byte(out), 0o644)
			}
		}
	}
	dumpAll("0fresh")
	for _, addr := range []string{zk.Addr, pd.Addr} {
		c := dialClient(t, addr, 30000)
		c.create("/a", "hello", 0)
		c.create("/a/b", "x", 0)
		c.create("/e", "eph", 1)
		c.must(proto.OpGetData, &proto.GetDataRequest{Path: "/a", Watch: true})
		c.must(proto.OpExists, &proto.ExistsRequest{Path: "/a/b", Watch: true})
		c.do(proto.OpExists, &proto.ExistsRequest{Path: "/nope", Watch: true})
		c.must(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/a", Watch: true})
		c.must(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/", Watch: true})
		c.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/p", Mode: 0})
		c.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/r", Mode: 1})
		c2 := dialClient(t, addr, 10000)
		c2.create("/e2", "", 1)
		c2.must(proto.OpGetData, &proto.GetDataRequest{Path: "/a", Watch: true})
	}
	dumpAll("1busy")
}
