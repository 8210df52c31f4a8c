package adopt_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The guests of the hand-built reference lab: VM 100 (running, HA) and VM
// 101 (stopped, no HA) with their system disks, VM 100 booting from its
// disk, VM 101 adopted stopped (nothing starts it: the plan has only
// imports, the apply writes nothing), the detached unused0 of VM 100 in the
// report with what destroying the VM would do.
func TestAccAdoptVMs(t *testing.T) {
	t.Parallel()
	a := adoptVMLab(t, "reference", nil)
	n1, n2 := a.env.Node(t, 0), a.env.Node(t, 1)
	checkImports(t, a.res, map[string]string{
		`pve_vm.lab["100"]`: "100", `pve_vm.lab["101"]`: "101",
		`pve_vm_disk.lab["100/scsi0"]`: "100/scsi0", `pve_vm_disk.lab["101/scsi0"]`: "101/scsi0",
		`pve_ha_resource.lab["vm:100"]`: "vm:100",
	})
	vms := string(a.files["vms.tf"])
	for _, want := range []string{
		"vmid = tonumber(each.key)",
		`vm_id = pve_vm.lab[split("/", each.key)[0]].vmid`,
		"boot = true",
		`slot = split("/", each.key)[1]`,
		fmt.Sprintf("node = %q", n1), fmt.Sprintf("node = %q", n2),
	} {
		if !hasHCL(vms, want) {
			t.Errorf("vms.tf lacks %q:\n%s", want, vms)
		}
	}
	// Only the running VM says started = true; the stopped one is at
	// the default (false).
	if n := strings.Count(vms, "started = true"); n != 1 {
		t.Errorf("vms.tf has started = true %d times, want once (VM 100 only):\n%s", n, vms)
	}
	checkSkipped(t, a.res, "unused0 of VM 100 (ceph:vm-100-disk-0)", "destroy_disks", 1)
	// VM 101's NIC as the GUI made it, with the MAC PVE picked: written
	// as it is, so the plan neither changes nor regenerates it.
	cfg, _ := a.env.Sim.VMConfig(101)
	mac := strings.TrimPrefix(strings.Split(cfg["net0"], ",")[0], "virtio=")
	if len(mac) != 17 || !strings.Contains(vms, mac) {
		t.Errorf("vms.tf lacks VM 101's MAC %q (net0 %q):\n%s", mac, cfg["net0"], vms)
	}
	if ha := string(a.files["ha.tf"]); !hasHCL(ha, "sid = each.key") || strings.Contains(ha, "vmid") {
		t.Errorf("ha.tf: want sid = each.key and no vmid (sid and vmid exclude each other):\n%s", ha)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// The diskless lab: VM 100 on the node without disks, on storage testpool.
func TestAccAdoptVMsDiskless(t *testing.T) {
	t.Parallel()
	a := adoptVMLab(t, "diskless", nil)
	checkImports(t, a.res, map[string]string{
		`pve_vm.lab["100"]`: "100", `pve_vm.lab["101"]`: "101",
		`pve_vm_disk.lab["100/scsi0"]`: "100/scsi0", `pve_vm_disk.lab["101/scsi0"]`: "101/scsi0",
		`pve_ha_resource.lab["vm:100"]`: "vm:100",
	})
	if vms := string(a.files["vms.tf"]); !hasHCL(vms, `storage = "testpool"`) || !strings.Contains(vms, `"jpl-proxmox6"`) {
		t.Errorf("vms.tf: want VM 100 on jpl-proxmox6 with disks on testpool:\n%s", vms)
	}
	checkSkipped(t, a.res, "unused0 of VM 100 (testpool:vm-100-disk-0)", "destroy_disks", 1)
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// More than the hand-built lab has: a template, a VM with a CD drive, an
// EFI disk, a NIC, tags, two disks and HA with placement (an HA group on
// PVE 8, a node-affinity rule on PVE 9). The template and the drives
// without a resource are in the report; the rest (the CD drive with its
// VM) plans only imports.
func TestAccAdoptVMsMore(t *testing.T) {
	t.Parallel()
	var release string
	a := adoptVMLab(t, "reference", func(t *testing.T, e *acctest.Env) {
		ctx := context.Background()
		c := e.RootClient(t)
		v, err := c.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		release = v.Release
		n3 := e.Node(t, 2)
		create := func(vmid int64, opts pve.Params) {
			t.Helper()
			if _, err := c.AwaitVMTask(ctx, func() (string, error) { return c.CreateVM(ctx, n3, vmid, opts) }); err != nil {
				t.Fatalf("create VM %d: %v", vmid, err)
			}
		}
		create(102, pve.Params{"name": "tmpl", "template": "1", "ostype": "l26", "scsi0": "ceph:2"})
		create(103, pve.Params{"name": "web", "tags": "web;prod", "bios": "ovmf", "efidisk0": "ceph:1,efitype=4m",
			"ide2": "none,media=cdrom", "net0": "virtio,bridge=bridge0,tag=60", "onboot": "1", "scsihw": "virtio-scsi-single",
			"scsi0": "ceph:4,iothread=1", "scsi1": "ceph:2,backup=0", "scsi2": "/dev/disk/by-id/ata-HOST-DISK",
			"machine": "q35", "vga": "serial0", "serial0": "socket", "memory": "4096", "balloon": "1024", "protection": "1",
			"description": "Web server.\nBuilt by hand.", "cpu": "x86-64-v3,flags=+aes"})
		if strings.HasPrefix(release, "8.") {
			if err := c.CreateHAGroup(ctx, pve.HAGroup{Group: "prefer_c", Nodes: n3 + ":2"}); err != nil {
				t.Fatal(err)
			}
			if err := c.CreateHAResource(ctx, "vm:103", pve.HAResourceRequest{State: "stopped", Group: "prefer_c"}); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := c.CreateHAResource(ctx, "vm:103", pve.HAResourceRequest{State: "stopped"}); err != nil {
				t.Fatal(err)
			}
			if err := c.CreateHARule(ctx, pve.HARule{Rule: "web_on_c", Type: "node-affinity", Resources: []string{"vm:103"}, Nodes: n3}); err != nil {
				t.Fatal(err)
			}
			if err := c.CreateHARule(ctx, pve.HARule{Rule: "apart", Type: "resource-affinity", Resources: []string{"vm:100", "vm:103"}, Affinity: "negative"}); err != nil {
				t.Fatal(err)
			}
		}
	})
	want := map[string]string{
		`pve_vm.lab["103"]`: "103", `pve_vm_disk.lab["103/scsi0"]`: "103/scsi0", `pve_vm_disk.lab["103/scsi1"]`: "103/scsi1",
		`pve_ha_resource.lab["vm:103"]`: "vm:103",
	}
	if strings.HasPrefix(release, "8.") {
		want[`pve_ha_group.lab["prefer_c"]`] = "prefer_c"
	} else {
		want[`pve_ha_rule.lab["web_on_c"]`] = "web_on_c"
		want[`pve_ha_rule.lab["apart"]`] = "apart"
	}
	checkImports(t, a.res, want)
	for _, im := range a.res.Imports {
		if strings.Contains(im.ID, "102") {
			t.Errorf("the template is imported: %v", im)
		}
	}
	checkSkipped(t, a.res, "VM 102 (tmpl)", "template", 1)
	// The CD drive is pve_vm's cdrom: adopted with the VM, not reported.
	checkSkipped(t, a.res, "ide2 of VM 103 (no media)", "", 0)
	checkSkipped(t, a.res, "scsi2 of VM 103 (/dev/disk/by-id/ata-HOST-DISK)", "passed through", 1)
	checkSkipped(t, a.res, "efidisk0 of VM 103", "no resource represents efidisk0", 1)
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// adoptVMLab is adoptLab for the vm area with a setup that runs before
// the adoption (objects the hand-built lab does not have); it logs the
// requests the adoption sent and what it generated.
func adoptVMLab(t *testing.T, lab string, setup func(*testing.T, *acctest.Env)) *adopted {
	t.Helper()
	e := acctest.HandBuiltLab(t, lab)
	if setup != nil {
		setup(t, e)
	}
	from := len(e.Sim.Requests())
	a := adoptEnv(t, e, "vm")
	var sent []string
	for _, q := range e.Sim.Requests()[from:] {
		sent = append(sent, q.Method+" "+q.Path)
	}
	t.Logf("the adoption sent %d requests:\n%s", len(sent), strings.Join(sent, "\n"))
	names := make([]string, 0, len(a.files))
	for n := range a.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasSuffix(n, ".tf") && n != "main.tf" || n == "ADOPTION.md" {
			t.Logf("--- %s\n%s", n, a.files[n])
		}
	}
	return a
}

var spaces = regexp.MustCompile(` +`)

// hasHCL reports whether text has line, spaces aside (hclwrite aligns the
// equals signs of a block).
func hasHCL(text, line string) bool {
	return strings.Contains(spaces.ReplaceAllString(text, " "), line)
}

// With the network and storage areas, a VM depends on the network config
// (its bridges), a disk on the storages, an HA resource on the disks: the
// order a rebuilt lab needs.
func TestAccAdoptVMsDependsOn(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "network", "storage", "vm")
	vms, ha := string(a.files["vms.tf"]), string(a.files["ha.tf"])
	var network, storage []string
	for _, im := range a.res.Imports {
		addr := resourceAddr.FindStringSubmatch(im.To)[1]
		switch {
		case strings.HasPrefix(addr, "pve_node_network_config."):
			network = append(network, addr)
		case strings.HasPrefix(addr, "pve_storage."):
			storage = append(storage, addr)
		}
	}
	if len(network) == 0 || len(storage) == 0 {
		t.Fatalf("want network configs and storages adopted too: %v", a.res.Imports)
	}
	if !hasHCL(vms, "depends_on = ["+network[0]+"]") {
		t.Errorf("pve_vm.lab does not depend on %s:\n%s", network[0], vms)
	}
	// The disks depend on the storages they use only: vm_id, a reference
	// to pve_vm.lab, orders them after the VMs already.
	if !hasHCL(vms, "depends_on = [pve_storage.") || hasHCL(vms, "depends_on = [pve_vm.lab, ") {
		t.Errorf("pve_vm_disk.lab does not depend on its storages only:\n%s", vms)
	}
	if !hasHCL(ha, "depends_on = [pve_vm.lab, pve_vm_disk.lab]") {
		t.Errorf("pve_ha_resource.lab does not depend on the VMs and disks:\n%s", ha)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
