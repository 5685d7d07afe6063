package cli

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// ephemeralPrefixScript runs under the chroot /app. The Java client sends
// getEphemerals' prefix to the server as it is, without the chroot, and the
// server keeps the session's ephemerals whose full path starts with it: /a
// finds /app/e, /e finds nothing.
const ephemeralPrefixScript = `create -e /e
create -e /ee
getEphemerals /a
getEphemerals /app
getEphemerals /app/e
getEphemerals /e
getEphemerals /ee
getEphemerals /nope
delete /e
delete /ee
`

// TestEphemeralPrefixUnderChrootSameAsZkCli compares getEphemerals with a
// prefix under a chroot between zkCli.sh and paddock cli, against Apache
// ZooKeeper and Paddock.
func TestEphemeralPrefixUnderChrootSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			p := srv.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, err := zk.Connect(ctx, p.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Create(ctx, "/app", nil, zk.OpenACL, zk.ModePersistent); err != nil {
				t.Fatal(err)
			}
			want := run(t, ephemeralPrefixScript, zkCli, "-server", p.Addr+"/app")
			got := run(t, ephemeralPrefixScript, paddock, "cli", "-server", p.Addr+"/app")
			compare(t, "getEphemerals under /app", want, got)
		})
	}
}
