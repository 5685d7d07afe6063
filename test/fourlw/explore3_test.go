package fourlw_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

func TestExplore3(t *testing.T) {
	if os.Getenv("FOURLW_EXPLORE") == "" {
		t.Skip()
	}
	z := zktest.StartZooKeeper(t, zktest.ZKOptions{})
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	re := regexp.MustCompile(`zk_watch_count\t\d+`)
	for _, addr := range []string{z.Addr, p.Addr} {
		wc := func(step string) {
			out, _ := zktest.FourLetterWord(addr, "mntr")
			w, _ := zktest.FourLetterWord(addr, "wchs")
			t.Logf("%s %s: %s | %q", addr, step, re.FindString(out), w)
		}
		c := dialClient(t, addr, 30000)
		c.create("/a", "hello", 0)
		c.create("/a/b", "x", 0)
		wc("start")
		c.must(proto.OpGetData, &proto.GetDataRequest{Path: "/a", Watch: true})
		wc("getData /a")
		c.must(proto.OpExists, &proto.ExistsRequest{Path: "/a/b", Watch: true})
		wc("exists /a/b")
		c.do(proto.OpExists, &proto.ExistsRequest{Path: "/nope", Watch: true})
		wc("exists /nope")
		c.must(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/a", Watch: true})
		wc("children /a")
		c.must(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/", Watch: true})
		wc("children /")
		c.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/p", Mode: 0})
		wc("persistent /p")
		c.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/r", Mode: 1})
		wc("recursive /r")
		c2 := dialClient(t, addr, 10000)
		c2.create("/e2", "", 1)
		wc("create /e2")
	}
}
