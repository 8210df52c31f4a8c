package qemu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// refusedAtPlan runs config, expecting want at plan, and then asserts from
// the simulator's request log that nothing but reads reached PVE.
func refusedAtPlan(t *testing.T, e *acctest.Env, config, want string) {
	t.Helper()
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig:   func() { e.Sim.ResetRequests() },
		Config:      e.Config(config),
		ExpectError: errorRE(want),
	}}})
	for _, r := range e.Sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
		}
	}
}

func refsEnv(t *testing.T) *acctest.Env {
	t.Helper()
	e := diskEnv(t, pvesim.Options{})
	if e.Sim == nil {
		t.Skip("asserts the simulator's request log")
	}
	return e
}

// A disk on a storage without content images: PVE refuses the write
// ("storage 'local' does not support vm images"); the plan says so first
// and lists the storages that take VM disks.
func TestAccVMDisk_planRefusesStorageWithoutImages(t *testing.T) {
	e := refsEnv(t)
	node := e.Node(t, 0)
	createVM(t, e, node, 9201, false)
	refusedAtPlan(t, e, diskHCL("this", 9201, "scsi0", `storage = "local"`, `size = "4G"`),
		`(?s)Unable to plan pve_vm_disk: storage local does not take VM disks.*storage = "local" has content .*without images.*VM disks \(content images\) on node `+node+`: [^.]*local-lvm`)
}

// A storage limited to other nodes than the VM's.
func TestAccVMDisk_planRefusesStorageNotOnVMNode(t *testing.T) {
	e := refsEnv(t)
	n0, n1 := e.Node(t, 0), e.Node(t, 1)
	e.Sim.AddStorage(n0, "only0", "dir", map[string]string{"path": "/var/lib/only0", "content": "images", "nodes": n0})
	createVM(t, e, n1, 9202, false)
	refusedAtPlan(t, e, diskHCL("this", 9202, "scsi0", `storage = "only0"`, `size = "4G"`),
		fmt.Sprintf(`(?s)Unable to plan pve_vm_disk: storage only0 is not available on node %s.*limited to the nodes %s.*local-lvm`, n1, n0))
}

// A disk of a VM that does not exist (and that no pve_vm of the plan
// creates).
func TestAccVMDisk_planRefusesMissingVM(t *testing.T) {
	e := refsEnv(t)
	refusedAtPlan(t, e, diskHCL("this", 9203, "scsi0", `storage = "local-lvm"`, `size = "4G"`),
		`(?s)Unable to plan pve_vm_disk: VM 9203 does not exist.*vm_id = pve_vm.<name>.vmid`)
}

// A disk of a VM the same plan creates is let through, with a known vm_id
// and the VM's node taken from the pve_vm's plan; the apply creates both.
func TestAccVMDisk_planAcceptsVMOfSamePlan(t *testing.T) {
	e := refsEnv(t)
	node := e.Node(t, 0)
	config := fmt.Sprintf(`
resource "pve_vm" "vm" {
  node   = %q
  vmid   = 9204
  name   = "refs"
  scsihw = "virtio-scsi-single"
  destroy_disks = true
}
`, node) + diskHCL("this", 0, "scsi0", `storage = "local-lvm"`, `size = "1G"`, `delete_on_destroy = true`)
	config = replaceVMID(config)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(config),
		Check:  resource.TestCheckResourceAttr(diskAddr, "node", node),
	}}})
}

// A disk on the rbd storage that pve_ceph_pool's add_storages creates in
// the same plan (storage = pve_ceph_pool.<name>.name) is let through at
// plan, as one on a pve_storage of the plan is; the apply creates the
// pool, its storage and the disk on it.
func TestAccVMDisk_planAcceptsStorageOfPoolInSamePlan(t *testing.T) {
	e := diskEnv(t, pvesim.Options{CephTimeScale: -1})
	if e.Sim == nil {
		t.Skip("builds Ceph through the simulator")
	}
	setupCephOSDs(t, e)
	node := e.Node(t, 0)
	config := fmt.Sprintf(`
resource "pve_ceph_pool" "vms" {
  name                = "vms"
  node                = %q
  size                = 3
  min_size            = 2
  add_storages        = true
  deletion_protection = false
}

resource "pve_vm" "vm" {
  node   = %q
  vmid   = 9207
  name   = "refs"
  scsihw = "virtio-scsi-single"
  destroy_disks = true
}
`, node, node) + diskHCL("this", 0, "scsi0", `storage = pve_ceph_pool.vms.name`, `size = "1G"`, `delete_on_destroy = true`)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(replaceVMID(config)),
		Check:  resource.TestCheckResourceAttr(diskAddr, "volume", "vms:vm-9207-disk-0"),
	}}})
}

func replaceVMID(s string) string {
	return strings.Replace(s, "vm_id = 0", "vm_id = pve_vm.vm.vmid", 1)
}

// A NIC on a bridge the node does not have: PVE writes the config and
// fails the start ("bridge 'vmbr9' does not exist"); the plan refuses,
// naming the NIC and listing the node's bridges. The hand-built lab's
// nodes have bridge0.
func TestAccVM_planRefusesMissingBridge(t *testing.T) {
	e := acctest.HandBuiltLab(t, "reference")
	node := e.Node(t, 0)
	refusedAtPlan(t, e, fmt.Sprintf(`
resource "pve_vm" "vm" {
  node    = %q
  vmid    = 9205
  name    = "refs"
  started = true
  network = {
    net0 = { bridge = "bridge0" }
    net1 = { bridge = "vmbr9" }
  }
}
`, node), fmt.Sprintf(`(?s)Unable to plan pve_vm: bridge vmbr9 does not exist on node %s.*network\["net1"\].bridge = "vmbr9".*lists the bridges [^)]*bridge0`, node))
}

// An unknown node, refused by the shared framework.PlanCheckNode.
func TestAccVM_planRefusesUnknownNode(t *testing.T) {
	e := refsEnv(t)
	refusedAtPlan(t, e, vm100("nosuch", ""),
		fmt.Sprintf(`(?s)Unable to plan pve_vm: unknown node nosuch.*node = "nosuch" is not a node of .*GET /nodes lists [^)]*%s`, e.Node(t, 0)))
}

// A disabled storage cannot allocate the disk.
func TestAccVMDisk_planRefusesDisabledStorage(t *testing.T) {
	e := refsEnv(t)
	node := e.Node(t, 0)
	e.Sim.AddStorage(node, "off", "dir", map[string]string{"path": "/var/lib/off", "content": "images", "disable": "1"})
	createVM(t, e, node, 9206, false)
	refusedAtPlan(t, e, diskHCL("this", 9206, "scsi0", `storage = "off"`, `size = "4G"`),
		`(?s)Unable to plan pve_vm_disk: storage off is disabled.*Enable it, or use another storage.*on node `+node+`: [^.]*local-lvm`)
}
