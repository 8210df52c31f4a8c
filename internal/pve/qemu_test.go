package pve

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func TestDrivePropertyStrings(t *testing.T) {
	const ref = "ceph:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=32G,ssd=1"
	d, err := ParseDrive(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d.Volume != "ceph:vm-100-disk-1" || d.Storage() != "ceph" || d.Options["cache"] != "writeback" || d.String() != ref {
		t.Fatalf("parsed %+v, printed %q", d, d.String())
	}
	if n, err := d.SizeBytes(); err != nil || n != 32<<30 {
		t.Fatalf("size %d %v", n, err)
	}
	d, err = ParseDrive("file=ceph:vm-100-disk-1,ssd=on,iothread=yes,size=32G,discard=on,cache=writeback")
	if err != nil || d.String() != ref {
		t.Fatalf("file= form: %q %v", d.String(), err)
	}
	for _, bad := range []string{"cache=none", "a,b", "ceph:x,cache=none,cache=writeback"} {
		if _, err := ParseDrive(bad); err == nil {
			t.Errorf("ParseDrive(%q) accepted", bad)
		}
	}
	if got := AllocDrive("ceph", 32<<30, map[string]string{"cache": "writeback"}).String(); got != "ceph:32,cache=writeback" {
		t.Errorf("alloc: %q", got)
	}
	if got := AllocDrive("ceph", 512<<20, nil).String(); got != "ceph:0.5" {
		t.Errorf("alloc 512M: %q", got)
	}
	if FormatDiskSize(48<<30) != "48G" || FormatDiskSize(528<<10) != "528K" || FormatDiskSize(1<<40) != "1T" {
		t.Error("FormatDiskSize")
	}
	n, err := ParseNetDevice("virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=on,tag=20")
	if err != nil || n.Model != "virtio" || n.MAC != "BC:24:11:AA:BB:CC" || n.Options["firewall"] != "1" ||
		n.String() != "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=1,tag=20" {
		t.Fatalf("net %+v %q %v", n, n.String(), err)
	}
	if n, _ := ParseNetDevice("model=e1000,macaddr=BC:24:11:00:00:01"); n.String() != "e1000=BC:24:11:00:00:01" {
		t.Errorf("model= form: %q", n.String())
	}
	for k, want := range map[string]bool{"scsi0": true, "scsi30": true, "scsi31": false, "virtio15": true, "virtiofs0": false, "sata6": false, "efidisk0": true, "unused0": false, "scsi01": false} {
		if IsDriveKey(k) != want {
			t.Errorf("IsDriveKey(%s) = %v", k, !want)
		}
	}
}

func startVMSim(t *testing.T, opts pvesim.Options) (*pvesim.Sim, *Client) {
	t.Helper()
	opts.NoSSH = true
	if opts.ClusterName == "" {
		opts.ClusterName = "lab"
	}
	if opts.TaskDuration == 0 {
		opts.TaskDuration = 5 * time.Millisecond
	}
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	c, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint,
		Retry: fastRetry, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func refVMOptions() Params {
	return Params{"name": "vm100", "agent": "1", "bios": "ovmf", "cores": "4", "cpu": "host", "memory": "8192",
		"numa": "0", "ostype": "l26", "sockets": "1", "scsihw": "virtio-scsi-single",
		"scsi0": AllocDrive("local-lvm", 32<<30, map[string]string{"cache": "writeback", "discard": "on", "iothread": "1", "ssd": "1"}).String(),
		"net0":  "virtio,bridge=vmbr0"}
}

func TestVMLifecycleAgainstSimulator(t *testing.T) {
	_, c := startVMSim(t, pvesim.Options{})
	ctx := context.Background()
	id, err := c.NextVMID(ctx)
	if err != nil || id != 100 {
		t.Fatalf("nextid %d %v", id, err)
	}
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.CreateVM(ctx, "z2g4a", 100, refVMOptions()) }); err != nil {
		t.Fatal(err)
	}
	var ae *APIError
	if err := c.CheckVMIDFree(ctx, 100); !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Errors["vmid"] != "VM 100 already exists" {
		t.Fatalf("CheckVMIDFree: %v", err)
	}
	if node, err := c.FindVM(ctx, 100); err != nil || node != "z2g4a" {
		t.Fatalf("FindVM %q %v", node, err)
	}
	if _, err := c.FindVM(ctx, 555); !IsNotFound(err) {
		t.Fatalf("FindVM of a missing VM: %v", err)
	}
	if _, err := c.VMConfig(ctx, "z2g4b", 100, false); !IsNotFound(err) {
		t.Fatalf("config on the wrong node should be not found: %v", err)
	}
	cfg, err := c.VMConfig(ctx, "z2g4a", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Int("cores", 0) != 4 || cfg.Bool("numa", true) || cfg.Digest == "" || cfg.Values["meta"] == "" || cfg.Values["smbios1"] == "" {
		t.Fatalf("config %+v", cfg)
	}
	scsi0 := cfg.Drives()["scsi0"]
	if scsi0.String() != "local-lvm:vm-100-disk-0,cache=writeback,discard=on,iothread=1,size=32G,ssd=1" {
		t.Fatalf("scsi0 %q", scsi0.String())
	}
	if n := cfg.Nets()[0]; n.Model != "virtio" || !strings.HasPrefix(n.MAC, "BC:24:11:") || n.Options["bridge"] != "vmbr0" {
		t.Fatalf("net0 %+v", n)
	}

	// A write with a stale digest is refused, a fresh one goes through.
	if err := c.UpdateVMConfigSync(ctx, "z2g4a", 100, VMConfigUpdate{Set: Params{"description": "x"}, Digest: cfg.Digest}); err != nil {
		t.Fatal(err)
	}
	err = c.UpdateVMConfigSync(ctx, "z2g4a", 100, VMConfigUpdate{Set: Params{"cores": "2"}, Digest: cfg.Digest})
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "checksum mismatch") {
		t.Fatalf("stale digest: %v", err)
	}

	// Running: a cache change stays pending until a restart.
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.StartVM(ctx, "z2g4a", 100) }); err != nil {
		t.Fatal(err)
	}
	if st, err := c.VMStatus(ctx, "z2g4a", 100); err != nil || !st.Running() || st.MaxMem != 8192<<20 || st.CPUs != 4 {
		t.Fatalf("status %+v %v", st, err)
	}
	upid, err := c.UpdateVMConfig(ctx, "z2g4a", 100, VMConfigUpdate{Set: Params{"scsi0": scsi0.With("cache", "none").String()}, Delete: []string{"numa"}})
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	items, err := c.VMPending(ctx, "z2g4a", 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := PendingChanges(items); len(got) != 2 || got[0] != "numa" || got[1] != "scsi0" {
		t.Fatalf("pending %v", got)
	}
	// One pending read serves as the config read: the same values and digest.
	full, err := c.VMConfig(ctx, "z2g4a", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if eff := EffectiveConfig(items); !reflect.DeepEqual(eff, full) {
		t.Fatalf("config rebuilt from pending\n%+v\nGET config\n%+v", eff, full)
	}
	cur, _ := c.VMConfig(ctx, "z2g4a", 100, true)
	if cur.Drives()["scsi0"].Options["cache"] != "writeback" {
		t.Fatalf("current cache %v", cur.Values["scsi0"])
	}
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.RebootVM(ctx, "z2g4a", 100) }); err != nil {
		t.Fatal(err)
	}
	cur, _ = c.VMConfig(ctx, "z2g4a", 100, true)
	if cur.Drives()["scsi0"].Options["cache"] != "none" {
		t.Fatalf("reboot did not apply the pending cache: %v", cur.Values["scsi0"])
	}

	// Grow, refuse to shrink, move and keep the source as unused0.
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.ResizeVMDisk(ctx, "z2g4a", 100, "scsi0", "48G", "") }); err != nil {
		t.Fatal(err)
	}
	_, err = c.AwaitVMTask(ctx, func() (string, error) { return c.ResizeVMDisk(ctx, "z2g4a", 100, "scsi0", "40G", "") })
	var te *TaskError
	if !errors.As(err, &te) || te.ExitStatus != "shrinking disks is not supported" {
		t.Fatalf("shrink: %v", err)
	}
	if _, err := c.AwaitVMTask(ctx, func() (string, error) {
		return c.UpdateVMConfig(ctx, "z2g4a", 100, VMConfigUpdate{Set: Params{"scsi1": AllocDrive("local-lvm", 1<<30, nil).String()}})
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.UnlinkVMDisks(ctx, "z2g4a", 100, []string{"scsi1"}, false); err != nil {
		t.Fatal(err)
	}
	cfg, _ = c.VMConfig(ctx, "z2g4a", 100, true)
	if u := cfg.Unused(); u["unused0"] != "local-lvm:vm-100-disk-1" || cfg.Values["scsi1"] != "" {
		t.Fatalf("unlink without force should keep the volume as unused0: %v", cfg.Values)
	}

	// Migrate live with the local disks, then stop and delete.
	if _, err := c.AwaitVMTask(ctx, func() (string, error) {
		return c.MigrateVM(ctx, "z2g4a", 100, MigrateVMRequest{Target: "z2g4b", Online: true, WithLocalDisks: true})
	}); err != nil {
		t.Fatal(err)
	}
	if node, err := c.FindVM(ctx, 100); err != nil || node != "z2g4b" {
		t.Fatalf("after migrate: %q %v", node, err)
	}
	if vms, err := c.VMs(ctx, "z2g4b"); err != nil || len(vms) != 1 || vms[0].Status != "running" {
		t.Fatalf("list %+v %v", vms, err)
	}
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.StopVM(ctx, "z2g4b", 100) }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.DeleteVM(ctx, "z2g4b", 100, true, true) }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.VMConfig(ctx, "z2g4b", 100, false); !IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
}

// Ten disks added in parallel to one VM: PVE's config lock makes some
// workers time out; AwaitVMTask starts them again, so all succeed.
func TestAwaitVMTaskRetriesConfigLockTimeouts(t *testing.T) {
	sim, c := startVMSim(t, pvesim.Options{TaskDuration: 80 * time.Millisecond, QemuLockTimeout: 120 * time.Millisecond})
	ctx := context.Background()
	if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.CreateVM(ctx, "z2g4a", 100, refVMOptions()) }); err != nil {
		t.Fatal(err)
	}
	sim.ResetRequests()
	const n = 10
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = c.AwaitVMTask(ctx, func() (string, error) {
				return c.UpdateVMConfig(ctx, "z2g4a", 100, VMConfigUpdate{Set: Params{fmt.Sprintf("scsi%d", i+1): AllocDrive("local-lvm", 1<<30, nil).String()}})
			})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("disk %d: %v", i+1, err)
		}
	}
	posts := 0
	for _, r := range sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/config") {
			posts++
		}
	}
	if posts <= n {
		t.Errorf("%d config POSTs for %d disks: no task hit the lock timeout, so the retry is untested", posts, n)
	}
	cfg, err := c.VMConfig(ctx, "z2g4a", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Drives(); len(d) != n+1 {
		t.Errorf("drives after parallel adds: %v", cfg.Values)
	}
}
