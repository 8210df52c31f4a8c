package adopt

import (
	"strings"
	"testing"
)

// An attribute with an expression (Group.Exprs) is written as that
// expression in a for_each block and left out of the locals map; a
// locals map is not written when nothing else differs.
func TestGenerateExprs(t *testing.T) {
	specs := map[string]*attrSpec{"vm_id": {configurable: true}, "slot": {configurable: true}, "size": {configurable: true}}
	r := testRun()
	addGroup(r, Group{File: "vms.tf", Type: "pve_vm_disk", Name: "lab", Local: "vm_disks",
		Exprs: map[string]string{"vm_id": `pve_vm.lab[split("/", each.key)[0]].vmid`}}, specs,
		&instance{key: "100/scsi0", id: "100/scsi0", state: State{"vm_id": num(100), "slot": str("scsi0"), "size": str("8G")}},
		&instance{key: "101/scsi0", id: "101/scsi0", state: State{"vm_id": num(101), "slot": str("scsi0"), "size": str("8G")}},
	)
	out := render(t, r, "vms.tf")
	if !strings.Contains(out, `  vm_id = pve_vm.lab[split("/", each.key)[0]].vmid`+"\n") {
		t.Errorf("vm_id is not the expression:\n%s", out)
	}
	if strings.Contains(out, "locals") || !strings.Contains(out, `for_each = toset(["100/scsi0", "101/scsi0"])`) {
		t.Errorf("want for_each over the keys and no locals (vm_id comes from the expression):\n%s", out)
	}
}
