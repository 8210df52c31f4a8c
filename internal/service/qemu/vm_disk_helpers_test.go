package qemu_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// diskEnv starts a simulator for disk tests. Against a real cluster the
// tests create and destroy VMs and volumes, which PVE_ACC_VM=1 allows
// (with PVE_ACC_VM_BASE naming a free range of VM ids); otherwise they skip.
func diskEnv(t *testing.T, opts pvesim.Options) *acctest.Env {
	t.Helper()
	e := acctest.NewWithOptions(t, opts)
	if e.Sim == nil && os.Getenv("PVE_ACC_VM") == "" {
		t.Skip("creates and destroys VMs and volumes; set PVE_ACC_VM=1 to allow it")
	}
	return e
}

// setupCephStorage builds the reference lab's Ceph (setupCephOSDs) and a
// pool "ceph" with its RBD storage (add_storages), as
// internal/service/ceph's tests do. Against a real cluster the storage
// "ceph" must exist.
func setupCephStorage(t *testing.T, e *acctest.Env) {
	t.Helper()
	if e.Sim == nil {
		return
	}
	root := setupCephOSDs(t, e)
	size, minSize, pgs := int64(3), int64(2), int64(32)
	upid, err := root.CreateCephPool(context.Background(), e.Nodes[0], "ceph", pve.CephPoolRequest{Size: &size, MinSize: &minSize, PGNum: &pgs, Application: "rbd", AddStorages: true})
	if _, err := root.Await(context.Background(), upid, err); err != nil {
		t.Fatalf("create pool ceph: %v", err)
	}
}

// setupCephOSDs builds the reference lab's Ceph without pools through the
// client (monitors on every node, an OSD on each node's /dev/sdb), on the
// simulator, and returns the root@pam client it used.
func setupCephOSDs(t *testing.T, e *acctest.Env) *pve.Client {
	t.Helper()
	ctx := context.Background()
	root := e.RootClient(t)
	if err := root.InitCeph(ctx, e.Nodes[0], pve.CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatalf("ceph init: %v", err)
	}
	for _, n := range e.Nodes {
		upid, err := root.CreateCephMon(ctx, n, "")
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatalf("monitor on %s: %v", n, err)
		}
	}
	for _, n := range e.Nodes {
		upid, err := root.CreateCephOSD(ctx, n, pve.CephOSDCreateRequest{Dev: "/dev/sdb"})
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatalf("OSD on %s: %v", n, err)
		}
	}
	return root
}

// addDirStorage defines a directory storage for VM images (qcow2), on the
// simulator only; against a real cluster the storage must exist.
func addDirStorage(e *acctest.Env, id string) {
	if e.Sim != nil {
		e.Sim.AddStorage(e.Nodes[0], id, "dir", map[string]string{"path": "/var/lib/" + id, "content": "images"})
	}
}

// createVM creates an empty VM (virtio-scsi-single, no disks) through the
// client, as the pve_vm resource would, and starts it when running.
func createVM(t *testing.T, e *acctest.Env, node string, vmid int64, running bool) {
	t.Helper()
	ctx := context.Background()
	c := e.RootClient(t)
	_, err := c.AwaitVMTask(ctx, func() (string, error) {
		return c.CreateVM(ctx, node, vmid, pve.Params{"name": fmt.Sprintf("disktest%d", vmid), "memory": "2048", "cores": "2",
			"scsihw": "virtio-scsi-single", "ostype": "l26", "net0": "virtio,bridge=vmbr0"})
	})
	if err != nil {
		t.Fatalf("create VM %d: %v", vmid, err)
	}
	t.Cleanup(func() {
		node := node
		if n, err := c.FindVM(ctx, vmid); err == nil {
			node = n // migrated by the test
		}
		if st, err := c.VMStatus(ctx, node, vmid); err == nil && st.Running() {
			upid, err := c.StopVM(ctx, node, vmid)
			_, _ = c.Await(ctx, upid, err)
		}
		upid, err := c.DeleteVM(ctx, node, vmid, true, true)
		_, _ = c.Await(ctx, upid, err)
	})
	if running {
		startVM(t, e, node, vmid)
	}
}

func startVM(t *testing.T, e *acctest.Env, node string, vmid int64) {
	t.Helper()
	c := e.RootClient(t)
	upid, err := c.StartVM(context.Background(), node, vmid)
	if _, err := c.Await(context.Background(), upid, err); err != nil {
		t.Fatalf("start VM %d: %v", vmid, err)
	}
}

// vmConfig reads the VM's config from PVE (current = without pending).
func vmConfig(e *acctest.Env, node string, vmid int64, current bool) (*pve.VMConfig, error) {
	return e.Client.VMConfig(context.Background(), node, vmid, current)
}

// checkDrive asserts the drive PVE has at slot (current config).
func checkDrive(e *acctest.Env, node string, vmid int64, slot string, check func(pve.Drive) error) func(*terraform.State) error {
	return func(*terraform.State) error {
		conf, err := vmConfig(e, node, vmid, true)
		if err != nil {
			return err
		}
		v, ok := conf.Get(slot)
		if !ok {
			return fmt.Errorf("VM %d has no %s: %v", vmid, slot, conf.Values)
		}
		d, err := pve.ParseDrive(v)
		if err != nil {
			return err
		}
		return check(d)
	}
}

// checkVolumes asserts the VM's volumes per storage as the simulator keeps
// them (on Ceph: the pool's RBD images), with their sizes: "volid=size".
func checkVolumes(e *acctest.Env, node string, vmid int64, want map[string][]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if e.Sim == nil {
			return nil
		}
		for store, vols := range want {
			var got []string
			for _, v := range e.Sim.VMVolumes(node, store, int(vmid)) {
				size, _ := e.Sim.VolumeSize(node, v)
				got = append(got, v+"="+pve.FormatDiskSize(size))
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(vols, " ") {
				return fmt.Errorf("volumes of VM %d on %s: %v, want %v", vmid, store, got, vols)
			}
		}
		return nil
	}
}

// diskHCL renders one pve_vm_disk; attrs are HCL lines inside the block.
func diskHCL(name string, vmid int64, slot string, attrs ...string) string {
	return fmt.Sprintf("resource \"pve_vm_disk\" %q {\n  vm_id = %d\n  slot  = %q\n  %s\n}\n", name, vmid, slot, strings.Join(attrs, "\n  "))
}

// errorRE compiles an expected-error pattern in which every space also
// matches the line breaks Terraform wraps diagnostics with.
func errorRE(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}
