package pve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func storageSim(t *testing.T) (*pvesim.Sim, *Client) {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "lab", TaskDuration: time.Millisecond, NoSSH: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	c, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint, Retry: fastRetry, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func TestStorageClientCRUD(t *testing.T) {
	sim, c := storageSim(t)
	ctx := context.Background()
	p := Params{"monhost": "10.1.1.20 10.1.1.21", "pool": "vms", "content": "rootdir,images", "nodes": "z2g4b,z2g4a"}
	p.SetBool("krbd", true)
	if err := c.CreateStorage(ctx, "ceph-ext", "rbd", p); err != nil {
		t.Fatal(err)
	}
	sc, err := c.StorageConfig(ctx, "ceph-ext")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Type != "rbd" || !slices.Equal(sc.Content, []string{"images", "rootdir"}) || !slices.Equal(sc.Nodes, []string{"z2g4a", "z2g4b"}) ||
		!sc.Shared || sc.Options["krbd"] != "1" || sc.Options["pool"] != "vms" || sc.Digest == "" {
		t.Fatalf("storage: %+v", sc)
	}
	up := Params{"digest": sc.Digest}
	up.SetBool("disable", true)
	up.Delete("nodes", "pool")
	if err := c.UpdateStorage(ctx, "ceph-ext", up); err != nil {
		t.Fatal(err)
	}
	sc2, _ := c.StorageConfig(ctx, "ceph-ext")
	if !sc2.Disable || len(sc2.Nodes) != 0 || sc2.Options["pool"] != "" {
		t.Fatalf("after update: %+v", sc2)
	}
	// The old digest is stale now.
	err = c.UpdateStorage(ctx, "ceph-ext", Params{"digest": sc.Digest, "krbd": "0"})
	if !strings.Contains(apiMessage(err), "detected modified configuration") {
		t.Fatalf("stale digest: %v", err)
	}
	err = c.UpdateStorage(ctx, "local-lvm", Params{"content": "images", "pool": "x"})
	if !strings.Contains(apiMessage(err), "unexpected property 'pool'") {
		t.Fatalf("foreign option: %v", err)
	}
	all, err := c.StorageConfigs(ctx, "")
	if err != nil || len(all) != 3 || all[0].Storage != "ceph-ext" || all[1].Storage != "local" {
		t.Fatalf("list: %+v %v", all, err)
	}
	if err := c.DeleteStorage(ctx, "ceph-ext"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StorageConfig(ctx, "ceph-ext"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted storage: %v", err)
	}
	if err := c.DeleteStorage(ctx, "ceph-ext"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if err := c.CreateStorage(ctx, "linstor", "drbd", Params{"resourcegroup": "rg"}); !strings.Contains(apiMessage(err), "Parameter verification failed") {
		t.Fatalf("drbd without plugin: %v", err)
	}
	if err := sim.InstallStoragePlugin("z2g4a", "drbd"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateStorage(ctx, "linstor", "drbd", Params{"resourcegroup": "rg", "controller": "10.0.0.5"}); err != nil {
		t.Fatal(err)
	}
}

func TestStorageClientNodeSide(t *testing.T) {
	_, c := storageSim(t)
	ctx := context.Background()
	st, err := c.NodeStorage(ctx, "z2g4a", NodeStorageQuery{Content: "images"})
	if err != nil || len(st) != 1 || st[0].Storage != "local-lvm" || !st[0].Active || st[0].Total == 0 || st[0].UsedFraction <= 0 {
		t.Fatalf("images storages: %+v %v", st, err)
	}
	one, err := c.NodeStorageStatus(ctx, "z2g4a", "local")
	if err != nil || one.Storage != "local" || one.Type != "dir" || !one.Enabled {
		t.Fatalf("local status: %+v %v", one, err)
	}
	vols, err := c.StorageContent(ctx, "z2g4a", "local-lvm", 0)
	if err != nil || len(vols) != 0 {
		t.Fatalf("content: %+v %v", vols, err)
	}

	awaitOK(t, c)(c.CreateThinPool(ctx, "z2g4a", "fast", "/dev/sdb", false))
	pools, err := c.ThinPools(ctx, "z2g4a")
	if err != nil || len(pools) != 2 || pools[0].VG != "fast" || pools[0].Size < 400e9 {
		t.Fatalf("thin pools: %+v %v", pools, err)
	}
	_, err = c.CreateZFSPool(ctx, "z2g4a", ZFSPoolRequest{Name: "tank", Devices: []string{"/dev/sdb"}, RaidLevel: "single"})
	if !strings.Contains(apiMessage(err), "device '/dev/sdb' is already in use") {
		t.Fatalf("zfs on the thin pool's disk: %v", err)
	}
	awaitOK(t, c)(c.CreateZFSPool(ctx, "z2g4a", ZFSPoolRequest{Name: "tank", Devices: []string{"/dev/sdc", "/dev/nvme0n1"}, RaidLevel: "mirror", Compression: "lz4"}))
	zp, err := c.ZFSPools(ctx, "z2g4a")
	if err != nil || len(zp) != 1 || zp[0].Name != "tank" || zp[0].Health != "ONLINE" {
		t.Fatalf("zpools: %+v %v", zp, err)
	}
	d, err := c.ZFSPool(ctx, "z2g4a", "tank")
	if err != nil || d.RaidLevel != "mirror" || len(d.Devices) != 2 || !strings.HasSuffix(d.Devices[0], "-part1") {
		t.Fatalf("zpool detail: %+v %v", d, err)
	}
	awaitOK(t, c)(c.DeleteZFSPool(ctx, "z2g4a", "tank", true, false))
	awaitOK(t, c)(c.DeleteThinPool(ctx, "z2g4a", "fast", "fast", true, false))
	disks, _ := c.Disks(ctx, "z2g4a", true)
	if len(disks) != 3 {
		t.Fatalf("free disks after cleanup: %+v", disks)
	}
}

// awaitOK waits for the task a call started and fails the test on error.
func awaitOK(t *testing.T, c *Client) func(string, error) {
	return func(upid string, err error) {
		t.Helper()
		if _, err := c.Await(context.Background(), upid, err); err != nil {
			t.Fatal(err)
		}
	}
}
