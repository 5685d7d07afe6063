package fourlw_test

import (
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

func TestExplore2(t *testing.T) {
	if os.Getenv("FOURLW_EXPLORE") == "" {
		t.Skip()
	}
	z := zktest.StartZooKeeper(t, zktest.ZKOptions{})
	c := dialClient(t, z.Addr, 30000)
	c.create("/a", "hello", 0)
	ss, ok := zk.FLWSrvr([]string{z.Addr}, time.Second)
	t.Logf("srvr ok=%v %+v", ok, ss[0])
	cs, ok := zk.FLWCons([]string{z.Addr}, time.Second)
	t.Logf("cons ok=%v %+v", ok, cs[0])
	for _, cl := range cs[0].Clients {
		t.Logf("  %+v", cl)
	}
	out, _ := zktest.FourLetterWord(z.Addr, "crst")
	t.Logf("crst %q", out)
	out, _ = zktest.FourLetterWord(z.Addr, "cons")
	t.Logf("cons after crst %q", out)
	out, _ = zktest.FourLetterWord(z.Addr, "srst")
	out, _ = zktest.FourLetterWord(z.Addr, "srvr")
	t.Logf("srvr after srst %q", out)
	c.must(proto.OpGetData, &proto.GetDataRequest{Path: "/a"})
	out, _ = zktest.FourLetterWord(z.Addr, "cons")
	t.Logf("cons after get %q", out)
	for _, w := range []string{"wchs", "wchc", "dump", "hash", "isro", "gtmk", "envi", "dirs"} {
		out, _ = zktest.FourLetterWord(z.Addr, w)
		t.Logf("%s: %q", w, out)
	}
}
