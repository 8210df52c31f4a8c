package qemu_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// vmsWithDisks is n stopped VMs from vmid on node, each with two SCSI
// disks as pve_vm_disk resources.
func vmsWithDisks(node string, vmid, n int) string {
	return fmt.Sprintf(`
resource "pve_vm" "v" {
  count  = %[3]d
  node   = %[1]q
  vmid   = %[2]d + count.index
  name   = "reads${count.index}"
  cores  = 1
  memory = 512
  scsihw = "virtio-scsi-single"
}

resource "pve_vm_disk" "d" {
  count   = %[3]d * 2
  vm_id   = pve_vm.v[floor(count.index / 2)].vmid
  slot    = "scsi${count.index %% 2}"
  storage = "local-lvm"
  size    = "1G"

  delete_on_destroy = true
}
`, node, vmid, n)
}

var vmPathRE = regexp.MustCompile(`^/nodes/[^/]+/qemu/(\d+)(/.*)?$`)

// A no-change plan of VMs and their disks costs one request per VM (GET
// pending, shared by the VM and its disks) and one VM list per node, not
// per resource: no per-resource status, config or cluster-index reads.
// Each provider run (terraform-plugin-testing runs several per step)
// checks its token once with GET /version, which counts the runs.
func TestAccVM_noChangePlanReadsOncePerVM(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	if e.Sim == nil {
		t.Skip("counts requests in the simulator's request log")
	}
	node := e.Node(t, 0)
	const first, n = 9300, 4
	cfg := e.Config(vmsWithDisks(node, first, n))
	count := func() error {
		runs, lists := 0, 0
		perVM := map[string]int{}
		var bad []string
		for _, r := range e.Sim.Requests() {
			switch m := vmPathRE.FindStringSubmatch(r.Path); {
			case r.Path == "/version":
				runs++
			case r.Method == "GET" && r.Path == "/nodes/"+node+"/qemu":
				lists++
			case m != nil && r.Method == "GET" && m[2] == "/pending":
				perVM[m[1]]++
			default:
				bad = append(bad, r.Method+" "+r.Path)
			}
		}
		if runs == 0 {
			return fmt.Errorf("no GET /version in the request log; the count of provider runs is unknown")
		}
		if len(bad) > 0 {
			return fmt.Errorf("a no-change plan sent requests besides one pending read per VM and one list per node: %s", strings.Join(bad, ", "))
		}
		// Some runs only plan (-refresh=false) and read nothing; each run
		// that refreshes lists the node once and reads each VM once.
		if lists == 0 || lists > runs {
			return fmt.Errorf("%d VM lists of %s in %d provider runs, want one per refreshing run", lists, node, runs)
		}
		if len(perVM) != n {
			return fmt.Errorf("pending reads of %d VMs, want %d: %v", len(perVM), n, perVM)
		}
		for vmid, k := range perVM {
			if k != lists {
				return fmt.Errorf("VM %s: %d pending reads in %d refreshing runs, want one per run (its disks share it)", vmid, k, lists)
			}
		}
		return nil
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: cfg},
		{PreConfig: e.Sim.ResetRequests, Config: cfg, PlanOnly: true},
		// A plan-only step runs no Check, so the next step's PreConfig
		// counts what the plan sent.
		{PreConfig: func() {
			if err := count(); err != nil {
				t.Error(err)
			}
		}, Config: cfg, PlanOnly: true},
	}})
}
