package fourlw_test

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

func TestZZRace(t *testing.T) {
	if os.Getenv("PD_RACE") == "" {
		t.Skip()
	}
	pd := zktest.StartPaddock(t, zktest.PaddockOptions{Binary: os.Getenv("PD_RACE")})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				c := dialClient(t, pd.Addr, 30000)
				c.must(proto.OpGetData, &proto.GetDataRequest{Path: "/", Watch: true})
				c.must(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/x", Mode: 1})
				c.create("/e"+string(rune('a'+g))+string(rune('a'+i)), "", 1)
				c.close()
			}
		})
		wg.Go(func() {
			for range 30 {
				for _, w := range allWordsRace {
					zktest.FourLetterWord(pd.Addr, w)
				}
			}
		})
	}
	wg.Wait()
	pd.Stop()
	if strings.Contains(pd.LogTail(), "DATA RACE") {
		b, _ := os.ReadFile(pd.LogPath)
		t.Fatalf("race:\n%s", b)
	}
}

var allWordsRace = []string{"srvr", "stat", "cons", "mntr", "wchs", "wchc", "wchp", "dump", "envi", "conf", "crst"}
