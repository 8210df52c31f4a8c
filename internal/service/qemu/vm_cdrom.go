package qemu

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// A VM's CD drives (pve_vm's cdrom): config entries `<slot>: <what>,media=cdrom`
// (qemu-server Drive.pm drive_is_cdrom), cloud-init drives excluded.

var (
	// cdromSlotRE are the slots a CD drive can take: PVE's parse_drive
	// refuses media=cdrom on VirtIO.
	cdromSlotRE = regexp.MustCompile(`^(?:ide[0-3]|sata[0-5]|scsi(?:[0-9]|[12][0-9]|30))$`)
	// cdromValueRE is what a CD drive holds: nothing, the host's drive,
	// or an ISO image (a pve-storage-id, then Plugin.pm's iso/ volume
	// name; no comma or '=', which would split the drive string).
	cdromValueRE = regexp.MustCompile(`^(?:none|cdrom|[a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]:iso/[^/,=]+\.(?i:iso|img))$`)
	// cloudinitVolRE is Drive.pm drive_is_cloudinit.
	cloudinitVolRE = regexp.MustCompile(`[:/](?:vm-\d+-)?cloudinit(?:\.(?:raw|qcow|qcow2|qed|vmdk|cloop))?$`)
)

// vmCdromAttribute is pve_vm's cdrom.
func vmCdromAttribute() schema.MapAttribute {
	return schema.MapAttribute{
		Optional: true, Computed: true, ElementType: types.StringType,
		MarkdownDescription: "CD/DVD drives by slot (`ide0`-`ide3`, `sata0`-`sata5`, `scsi0`-`scsi30`; VirtIO has none) and " +
			"what is in each: an ISO image's volume id (`local:iso/proxmox-ve_9.1-1.iso`), `none` (empty) or `cdrom` (the " +
			"host's drive; needs `Sys.Console` on `/`). PVE writes `<slot>: <value>,media=cdrom`. Changing the image is an in-place " +
			"update, also on a running VM; a slot removed from the map is removed from the VM (on a running VM, IDE and " +
			"SATA drives come and go at its next restart). A new CD drive on a VM with a boot order is added to the end " +
			"of it by PVE; with `boot_order` set, the provider writes that order again. A slot must not also be a " +
			"`pve_vm_disk`. Unset: the provider leaves the VM's CD drives alone (an import records them); `{}` removes them all.",
		Validators: []validator.Map{
			mapvalidator.KeysAre(stringvalidator.RegexMatches(cdromSlotRE,
				"must be a CD drive slot: ide0-ide3, sata0-sata5 or scsi0-scsi30 (PVE has no CD drives on VirtIO)")),
			mapvalidator.ValueStringsAre(stringvalidator.RegexMatches(cdromValueRE,
				"must be none (an empty drive), cdrom (the host's drive) or an ISO image's volume id <storage>:iso/<file>.iso "+
					"(or .img), such as local:iso/proxmox-ve_9.1-1.iso")),
		},
		PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
	}
}

// cdromOf is what the CD drive of config value v holds ("", false when v
// is no CD drive: a disk, or a cloud-init drive).
func cdromOf(v string) (string, bool) {
	d, err := pve.ParseDrive(v)
	if err != nil || d.Options["media"] != "cdrom" || cloudinitVolRE.MatchString(d.Volume) {
		return "", false
	}
	return d.Volume, true
}

// cdromSetting is the drive string that puts value into a CD drive,
// keeping the other options of the drive it replaces (have, "" for a new
// one); PVE writes the size of the new medium itself.
func cdromSetting(have, value string) string {
	d, err := pve.ParseDrive(have)
	if err != nil || have == "" {
		d = pve.Drive{Options: map[string]string{}}
	}
	d = d.With("size", "").With("media", "cdrom")
	d.Volume = value
	return d.String()
}

// cdromsFromConfig is the VM's CD drives; null when it has none, unless
// the prior value was a known map (an empty map stays an empty map).
func cdromsFromConfig(v map[string]string, prior *vmModel) types.Map {
	vals := map[string]attr.Value{}
	for k, val := range v {
		if !pve.IsDriveKey(k) {
			continue
		}
		if what, ok := cdromOf(val); ok {
			vals[k] = types.StringValue(what)
		}
	}
	if len(vals) == 0 && (prior == nil || prior.Cdrom.IsNull() || prior.Cdrom.IsUnknown()) {
		return types.MapNull(types.StringType)
	}
	return types.MapValueMust(types.StringType, vals)
}

// cdroms are the planned CD drives by slot (a value not known yet is
// ""); managed is false when the plan does not know them (unset at
// create), and they are left alone.
func (m *vmModel) cdroms() (map[string]string, bool) {
	if m.Cdrom.IsNull() || m.Cdrom.IsUnknown() {
		return nil, false
	}
	out := map[string]string{}
	for k, v := range m.Cdrom.Elements() {
		if sv, ok := v.(types.String); ok {
			out[k] = sv.ValueString()
		}
	}
	return out, true
}

// cdromUpdate adds to set and del what turns the VM's CD drives (have)
// into want: new and changed drives set, drives not wanted deleted. A
// slot that holds a disk is refused: PVE would put the CD drive in its
// place and keep the disk's volume as unusedN.
func cdromUpdate(vmid int64, have map[string]string, want map[string]string, set pve.Params, del *[]string) error {
	for _, slot := range slices.Sorted(maps.Keys(want)) {
		h, present := have[slot]
		if !present {
			set[slot] = cdromSetting("", want[slot])
			continue
		}
		what, isCD := cdromOf(h)
		if !isCD {
			return fmt.Errorf("%s of VM %d holds a disk (%s), not a CD drive; cdrom puts CD drives only into free slots "+
				"or CD drives. Choose another slot for the CD drive, or remove the disk (its pve_vm_disk) first", slot, vmid, h)
		}
		if what != want[slot] {
			set[slot] = cdromSetting(h, want[slot])
		}
	}
	for slot, h := range have {
		if _, ok := want[slot]; ok || !pve.IsDriveKey(slot) {
			continue
		}
		if _, isCD := cdromOf(h); isCD {
			*del = append(*del, slot)
		}
	}
	return nil
}

// cdromJoinsBoot reports whether the write set puts a CD drive into a
// slot that the VM's boot order (have's boot) lacks: PVE then appends it
// to that order (update_vm_api, "append new CD drives to bootorder").
func cdromJoinsBoot(haveBoot string, set pve.Params) bool {
	order := bootOrder(haveBoot)
	if len(order) == 0 {
		return false
	}
	for k, v := range set {
		if _, isCD := cdromOf(v); isCD && pve.IsDriveKey(k) && !slices.Contains(order, k) {
			return true
		}
	}
	return false
}

// cdromInSlotNote is what pve_vm_disk adds when the slot it wants holds a
// CD drive.
func cdromInSlotNote(slot string) string {
	return fmt.Sprintf(" %s is a CD drive, which pve_vm's cdrom manages: choose another slot for the disk, or remove %s from cdrom first.", slot, slot)
}
