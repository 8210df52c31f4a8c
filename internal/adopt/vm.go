package adopt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// diskSlotRE are the drive slots pve_vm_disk manages (its slot
// attribute); efidisk0 and tpmstate0 have no resource.
var diskSlotRE = regexp.MustCompile(`^(scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5])|sata[0-5]|ide[0-3])$`)

// adoptVMs adopts VMs (pve_vm), their disks (pve_vm_disk) and HA: the HA
// resources (pve_ha_resource) and the placement, HA groups on PVE 8
// (pve_ha_group) or HA rules on PVE 9 (pve_ha_rule).
func adoptVMs(ctx context.Context, r *run) error {
	guests, err := r.api.ClusterResources(ctx, "vm")
	if err != nil {
		return fmt.Errorf("list the guests (GET /cluster/resources?type=vm): %w", err)
	}
	sort.Slice(guests, func(i, j int) bool { return guests[i].VMID < guests[j].VMID })
	// A VM needs its bridges, a disk its storage (when a rebuilt lab
	// creates them): depends_on the groups other areas generated.
	vmDeps, diskDeps := r.groupsOfType("pve_node_network_config"), append([]string{"pve_vm.lab"}, r.groupsOfType("pve_storage")...)
	for _, g := range guests {
		label := guestLabel(g)
		if g.Type != "qemu" {
			r.skip(label, "no resource for containers: the provider manages QEMU VMs only; the container stays as it is.")
			continue
		}
		cfg, err := r.api.VMConfig(ctx, g.Node, g.VMID, false)
		if errors.Is(err, pve.ErrNotFound) {
			// Migrated since the list (HA, another admin): read it where
			// it is now; destroyed: nothing to adopt.
			if g.Node, err = r.api.FindVM(ctx, g.VMID); errors.Is(err, pve.ErrNotFound) {
				continue
			}
			if err == nil {
				cfg, err = r.api.VMConfig(ctx, g.Node, g.VMID, false)
			}
		}
		if err != nil {
			return fmt.Errorf("read the config of VM %d (GET /nodes/%s/qemu/%d/config): %w", g.VMID, g.Node, g.VMID, err)
		}
		if cfg.Bool("template", false) {
			r.skip(label, "a template: pve_vm has no template attribute, so the configuration could not say it is one "+
				"(a VM created from it would be a plain VM), and its disks are base volumes that linked clones use. "+
				"It stays as it is; clone from it with its vmid.")
			continue
		}
		key := strconv.FormatInt(g.VMID, 10)
		st, err := r.add(ctx, Group{File: "vms.tf", Type: "pve_vm", Name: "lab", Local: "vms",
			Comment: "The VMs, by vmid (their disks are pve_vm_disk below). Destroying a VM deletes every volume it\n" +
				"owns, detached unusedN ones too: pve_vm refuses that while the VM lists any, unless destroy_disks = true.",
			Exprs:     map[string]string{"vmid": "tonumber(each.key)"},
			DependsOn: vmDeps},
			key, key)
		if err != nil {
			return err
		}
		if st == nil {
			continue // gone meanwhile
		}
		if err := adoptDisks(ctx, r, g, cfg, diskDeps); err != nil {
			return err
		}
	}
	return adoptHA(ctx, r)
}

// guestLabel names a guest in the report: "VM 100 (web) on z2g4a".
func guestLabel(g pve.ClusterResource) string {
	kind := "VM"
	if g.Type == "lxc" {
		kind = "container"
	}
	s := fmt.Sprintf("%s %d", kind, g.VMID)
	if g.Name != "" {
		s += " (" + g.Name + ")"
	}
	return s + " on " + g.Node
}

// adoptDisks adds the VM's disks as pve_vm_disk and reports the drives
// no resource represents: cloud-init drives, EFI and TPM state disks, and
// detached (unusedN) volumes. CD drives are pve_vm's cdrom.
func adoptDisks(ctx context.Context, r *run, g pve.ClusterResource, cfg *pve.VMConfig, deps []string) error {
	drives := cfg.Drives()
	for _, slot := range slices.Sorted(maps.Keys(drives)) {
		d := drives[slot]
		obj := fmt.Sprintf("%s of VM %d", slot, g.VMID)
		what := d.Volume
		if what == "none" || what == "cdrom" {
			what = "no media"
		}
		obj += " (" + what + ")"
		switch {
		case isCloudInit(d):
			r.skip(obj, "a cloud-init drive: no resource represents it (pve_vm_disk manages disks, pve_vm "+
				"has no cloud-init attributes), so it and the VM's cloud-init options stay as they are; destroying the VM "+
				"deletes it.")
		case d.IsCdrom():
			// pve_vm's cdrom holds it: the VM's import records it.
		case d.Storage() == "":
			r.skip(obj, "a host device or file passed through, not a volume on a PVE storage: pve_vm_disk manages "+
				"volumes, so it stays as it is (destroying the VM leaves it alone).")
		case !diskSlotRE.MatchString(slot):
			r.skip(obj, "no resource represents "+slot+" (pve_vm_disk manages scsi, virtio, sata and "+
				"ide disks; pve_vm leaves it alone), so it stays as it is; destroying the VM deletes it.")
		default:
			id := fmt.Sprintf("%d/%s", g.VMID, slot)
			if _, err := r.add(ctx, Group{File: "vms.tf", Type: "pve_vm_disk", Name: "lab", Local: "vm_disks",
				Comment: "The VMs' disks, by <vmid>/<slot>. Destroying one only detaches it (delete_on_destroy = false):\n" +
					"its volume stays as unusedN of the VM.",
				// The VM's vmid, so that the disk depends on the VM.
				Exprs:     map[string]string{"vm_id": `pve_vm.lab[split("/", each.key)[0]].vmid`, "slot": `split("/", each.key)[1]`},
				DependsOn: deps},
				id, id); err != nil {
				return err
			}
		}
	}
	unused := cfg.Unused()
	for _, k := range slices.Sorted(maps.Keys(unused)) {
		r.skip(fmt.Sprintf("%s of VM %d (%s)", k, g.VMID, unused[k]),
			"a detached disk: no resource represents it, so it stays as it is. Destroying the VM would delete it (PVE "+
				"deletes every volume a VM owns, unused ones too); pve_vm refuses that destroy while the VM lists any "+
				"volume, unless destroy_disks = true. Attach it again (as a pve_vm_disk) or remove it in PVE if the data is "+
				"not needed.")
	}
	return nil
}

// isCloudInit reports a cloud-init drive: PVE names its volume
// vm-<vmid>-cloudinit (PVE::QemuServer::Cloudinit).
func isCloudInit(d pve.Drive) bool {
	_, name, _ := strings.Cut(d.Volume, ":")
	return strings.HasSuffix(name, "-cloudinit") || strings.HasSuffix(name, "-cloudinit.qcow2") ||
		strings.HasSuffix(name, "-cloudinit.raw")
}

// adoptHA adds the HA resources and their placement: groups on PVE 8,
// rules on PVE 9 (where PVE migrated groups to rules).
func adoptHA(ctx context.Context, r *run) error {
	res, err := r.api.HAResources(ctx, "")
	if err != nil {
		return fmt.Errorf("list the HA resources (GET /cluster/ha/resources): %w", err)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].SID < res[j].SID })
	major, _ := strconv.Atoi(strings.SplitN(r.release, ".", 2)[0])
	rules := major >= 9
	if !rules {
		groups, err := r.api.HAGroups(ctx)
		if err != nil {
			return fmt.Errorf("list the HA groups (GET /cluster/ha/groups): %w", err)
		}
		sort.Slice(groups, func(i, j int) bool { return groups[i].Group < groups[j].Group })
		for _, g := range groups {
			if _, err := r.add(ctx, Group{File: "ha.tf", Type: "pve_ha_group", Name: "lab", Local: "ha_groups",
				Comment: "HA groups (PVE 8): where the HA manager may run the guests of each group.",
				Exprs:   map[string]string{"group": "each.key"}}, g.Group, g.Group); err != nil {
				return err
			}
		}
	}
	for _, h := range res {
		if _, err := r.add(ctx, Group{File: "ha.tf", Type: "pve_ha_resource", Name: "lab", Local: "ha_resources",
			Comment: "Guests the HA manager manages, by sid. A guest HA manages is started and stopped through HA.",
			// sid and vmid name the same guest; a configuration sets one.
			Omit:  []string{"vmid"},
			Exprs: map[string]string{"sid": "each.key"},
			// HA starts a guest once it and its disks exist.
			DependsOn: []string{"pve_vm.lab", "pve_vm_disk.lab", "pve_ha_group.lab"}}, h.SID, h.SID); err != nil {
			return err
		}
	}
	if rules {
		list, err := r.api.HARules(ctx, "", "")
		if err != nil {
			return fmt.Errorf("list the HA rules (GET /cluster/ha/rules): %w", err)
		}
		for _, ru := range list {
			if _, err := r.add(ctx, Group{File: "ha.tf", Type: "pve_ha_rule", Name: "lab", Local: "ha_rules",
				Comment:   "HA rules (PVE 9): node affinity (where guests run) and resource affinity (which run together or apart).",
				Exprs:     map[string]string{"rule": "each.key"},
				DependsOn: []string{"pve_ha_resource.lab"}}, ru.Rule, ru.Rule); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupsOfType are the addresses of the groups of resource type typ
// generated so far (by the areas before this one).
func (r *run) groupsOfType(typ string) []string {
	var out []string
	for _, g := range r.groups {
		if g.Type == typ {
			out = append(out, g.address())
		}
	}
	return out
}
