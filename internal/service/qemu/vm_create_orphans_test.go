package qemu

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// simClient starts pvesim with spec's faults and returns a root client of
// its first node and that node's name.
func simClient(t *testing.T, spec string) (*pve.Client, string) {
	t.Helper()
	fs, err := pvesim.ParseFaultSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pvesim.Start(pvesim.Options{NoSSH: true, TaskDuration: time.Millisecond, Faults: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	n := s.Info().Nodes[0]
	c, err := pve.NewClient(pve.Config{Endpoint: n.Endpoint, Username: "root@pam", Password: n.RootPassword, TLSFingerprint: n.TLSFingerprint, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Authenticate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, n.Name
}

func vm100Volumes(t *testing.T, c *pve.Client, node string) []string {
	t.Helper()
	vols, err := c.StorageContent(context.Background(), node, "local-lvm", 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vols {
		out = append(out, v.VolID)
	}
	return out
}

// A qmcreate that dies after write_config leaves its disks and no config
// (qemu-server frees disks only on errors up to write_config): the
// provider frees the volumes its task log names, unless a later create of
// the id may have taken them; then it names them and the command.
func TestFreeOrphanedDisks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, other string
		want        string
		left        int
	}{
		{"freed", "", "the provider freed them", 0},
		{"later-create", "UPID:other", "pvesm free local-lvm:vm-100-disk-0", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, node := simClient(t, "task qmcreate=fail-late:1x")
			_, err := c.AwaitVMTask(ctx, func() (string, error) {
				return c.CreateVM(ctx, node, 100, pve.Params{"scsi0": "local-lvm:1"})
			})
			if err == nil {
				t.Fatal("the create did not fail")
			}
			if got := vm100Volumes(t, c, node); len(got) != 1 {
				t.Fatalf("volumes the late failure left: %v", got)
			}
			msg := freeOrphanedDisks(ctx, c, node, 100, err, tc.other, nil)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q lacks %q", msg, tc.want)
			}
			if got := vm100Volumes(t, c, node); len(got) != tc.left {
				t.Errorf("volumes of VM 100 after: %v, want %d", got, tc.left)
			}
		})
	}
}
