package zk_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/zk"
)

func init() {
	addServerTests(serverTest{"ChrootRoot", testChrootRoot})
}

// testChrootRoot checks the client's two special cases of "/" under a
// chroot, as ZooKeeper's Java client has them: deleting "/" sends "/" and
// fails with BadArguments (it must not delete the chroot's node), and a
// sequential node created at "/" comes back with the chroot cut off as a
// string prefix (the chroot "/r" and the node "/r0000000000" give
// "0000000000"; the chroot's own znode gives "").
func testChrootRoot(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	chrooted := connect(t, s.proc.Addr+root)
	if err := chrooted.Delete(ctx, "/", -1); !errors.Is(err, zk.ErrBadArguments) {
		t.Errorf("Delete(/) under the chroot %s: %v, want %v", root, err, zk.ErrBadArguments)
	}
	if ok, _, err := c.Exists(ctx, root); err != nil || !ok {
		t.Errorf("the chroot's node %s after Delete(/): exists %v, %v", root, ok, err)
	}
	name, err := chrooted.Create(ctx, "/", nil, zk.OpenACL, zk.ModePersistentSequential)
	if err != nil {
		t.Fatalf("Create(/, sequential) under the chroot %s: %v", root, err)
	}
	if len(name) != 10 || strings.Trim(name, "0123456789") != "" {
		t.Errorf("Create(/, sequential) under the chroot %s returned %q, want the 10 digits after the chroot", root, name)
	}
	if err := c.Delete(ctx, root+name, -1); err != nil {
		t.Errorf("delete %s%s: %v", root, name, err)
	}
	// The chroot's own znode, created at "/", comes back as "", the
	// Java client's substring after the chroot.
	if err := c.Delete(ctx, root, -1); err != nil {
		t.Fatalf("delete %s: %v", root, err)
	}
	if name, err := chrooted.Create(ctx, "/", nil, zk.OpenACL, zk.ModePersistent); err != nil || name != "" {
		t.Errorf("Create(/) under the deleted chroot %s: %q, %v; want \"\"", root, name, err)
	}
}
