package qemu

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const vmDiskTypeName = "pve_vm_disk"

var (
	_ resource.Resource                = (*vmDiskResource)(nil)
	_ resource.ResourceWithConfigure   = (*vmDiskResource)(nil)
	_ resource.ResourceWithImportState = (*vmDiskResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*vmDiskResource)(nil)

	_ resource.ResourceWithValidateConfig = (*vmDiskResource)(nil)
)

// NewVMDiskResource is the constructor the provider registers.
func NewVMDiskResource() resource.Resource {
	return &vmDiskResource{ResourceBase: framework.ResourceBase{TypeName: vmDiskTypeName}}
}

type vmDiskResource struct{ framework.ResourceBase }

// VMLockKey is the provider-internal lock that serialises config writes
// to one VM (pd.NodeLocks is keyed by string; VM ids are cluster-wide).
func VMLockKey(vmid int64) string { return "qemu-vm/" + strconv.FormatInt(vmid, 10) }

func (r *vmDiskResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := vmDiskPlacementAttributes()
	maps.Copy(attrs, vmDiskOptionAttributes())
	maps.Copy(attrs, vmDiskLifecycleAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "One disk of a VM (GUI: VM → Hardware → Hard Disk), keyed by VM and slot (`scsi0`, `virtio1`, `sata2`, `ide3`). " +
			"CD/DVD drives are `pve_vm`'s `cdrom`.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// vmDiskPlacementAttributes are which VM and slot the disk is, where its volume is and its size.
func vmDiskPlacementAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true, MarkdownDescription: "`<vm_id>/<slot>`, also the import id.",
		},
		"vm_id": schema.Int64Attribute{
			Required: true,
			MarkdownDescription: "The VM's id. The disk follows the VM to whichever node holds it. A disk cannot move to " +
				"another VM through this resource: a changed `vm_id` is refused at plan.",
			Validators: []validator.Int64{int64validator.Between(100, 999999999)},
		},
		"slot": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Bus and index: `scsi0`-`scsi30`, `virtio0`-`virtio15`, `sata0`-`sata5`, `ide0`-`ide3`. " +
				"Changing it re-attaches the same volume under the new slot (no data is copied or lost); on a running VM " +
				"both slots must be hot-pluggable (SCSI or VirtIO).",
			Validators: []validator.String{stringvalidator.RegexMatches(slotRE, "must be scsi0-30, virtio0-15, sata0-5 or ide0-3")},
		},
		"node": schema.StringAttribute{
			// Not kept from the state in a plan: HA may move the VM
			// while the change applies.
			Computed: true, MarkdownDescription: "The node that holds the VM (looked up on every read, so it follows migrations, " +
				"also HA's during an apply).",
		},
		"storage": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Storage of the volume (`local-lvm`, `ceph`, ...), which must allow content `images`. " +
				"Changing it moves the volume (the source is deleted only after a successful copy); no replacement.",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"size": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Size with unit `K`, `M`, `G` or `T` (binary), such as `32G`. Grows in place; a smaller " +
				"size is refused at plan (PVE cannot shrink disks).",
			Validators: []validator.String{stringvalidator.RegexMatches(sizeRE, "must be a number with K, M, G or T, such as 32G")},
		},
	}
}

func optBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, MarkdownDescription: desc}
}

// limitF is a bandwidth limit in MB/s.
func limitF(desc string) schema.Float64Attribute {
	return schema.Float64Attribute{Optional: true, MarkdownDescription: desc, Validators: []validator.Float64{float64validator.AtLeast(1)}}
}

// limitI is an operations-per-second limit.
func limitI(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{Optional: true, MarkdownDescription: desc, Validators: []validator.Int64{int64validator.AtLeast(10)}}
}

// vmDiskOptionAttributes are the drive's options and limits.
func vmDiskOptionAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"cache": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Cache mode: `none`, `writethrough`, `writeback`, `directsync`, `unsafe`; unset is PVE's " +
				"default (no cache). `unsafe` loses writes on a host crash. Waits for a restart on a running VM.",
			Validators: []validator.String{stringvalidator.OneOf("none", "writethrough", "writeback", "directsync", "unsafe")},
		},
		"iothread": optBool("Own I/O thread for the disk (with controller `virtio-scsi-single` for SCSI). Waits for a restart on a running VM."),
		"ssd":      optBool("Present the disk as an SSD to the guest (not for VirtIO). Waits for a restart on a running VM."),
		"discard": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "`on` passes the guest's discard/TRIM to the storage (thin volumes shrink), `ignore` (PVE's default) " +
				"does not. Waits for a restart on a running VM.",
			Validators: []validator.String{stringvalidator.OneOf("on", "ignore")},
		},
		"aio": schema.StringAttribute{
			Optional: true, MarkdownDescription: "AIO backend: `io_uring` (PVE's default), `native` or `threads`. Waits for a restart on a running VM.",
			Validators: []validator.String{stringvalidator.OneOf("io_uring", "native", "threads")},
		},
		"backup":    optBool("Include the disk in backups (PVE's default when unset: included)."),
		"replicate": optBool("Include the disk in storage replication jobs (PVE's default when unset: included)."),
		"ro":        optBool("Read-only disk. Waits for a restart on a running VM."),
		"serial": schema.StringAttribute{
			Optional: true, MarkdownDescription: "Serial number the guest sees, up to 20 bytes, as plain text: the provider url-encodes it, as PVE stores it.",
			Validators: []validator.String{framework.StringCheck("1 to 20 bytes", "Invalid serial", func(s string) error {
				if len(s) < 1 || len(s) > 20 {
					return fmt.Errorf("serial %q is %d bytes long; PVE takes 1 to 20 bytes (the ATA serial number field): shorten it", s, len(s))
				}
				return nil
			})},
		},
		"model": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Model name the guest sees (IDE disks only; PVE has no `model` on other buses: use `vendor` and " +
				"`product` on SCSI), up to 40 bytes. Plain text such as `Samsung SSD 870 EVO 1TB`: the provider url-encodes it, as " +
				"PVE stores it. On a running VM PVE records a change at once; the guest sees it after the next restart.",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"vendor": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Vendor name the guest sees (SCSI disks only), up to 8 letters, digits, `-`, `_` or spaces, " +
				"such as `ATA`. Waits for a restart on a running VM.",
			Validators: []validator.String{stringvalidator.RegexMatches(vendorRE, "must be 1 to 8 letters, digits, -, _ or spaces")},
		},
		"product": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Product name the guest sees (SCSI disks only), up to 16 letters, digits, `-`, `_` or spaces, " +
				"such as `ST4000NM0035`. Waits for a restart on a running VM.",
			Validators: []validator.String{stringvalidator.RegexMatches(productRE, "must be 1 to 16 letters, digits, -, _ or spaces")},
		},
		"wwn": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "World wide name the guest sees, `0x` and 16 hex digits such as `0x5000c500a1b2c3d4` (not on VirtIO).",
			Validators:          []validator.String{stringvalidator.RegexMatches(wwnRE, "must be 0x followed by 16 hex digits, such as 0x5000c500a1b2c3d4")},
		},
		"mbps_rd":     limitF("Read limit in MB/s."),
		"mbps_rd_max": limitF("Read burst limit in MB/s."),
		"mbps_wr":     limitF("Write limit in MB/s."),
		"mbps_wr_max": limitF("Write burst limit in MB/s."),
		"iops_rd":     limitI("Read limit in operations per second (at least 10)."),
		"iops_rd_max": limitI("Read burst limit in operations per second."),
		"iops_wr":     limitI("Write limit in operations per second (at least 10)."),
		"iops_wr_max": limitI("Write burst limit in operations per second."),
	}
}

// vmDiskLifecycleAttributes are the volume, destroy, boot and restart handling.
func vmDiskLifecycleAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"volume": schema.StringAttribute{
			Computed: true, MarkdownDescription: "The volume id (`ceph:vm-100-disk-0`); it changes when the disk moves to another storage.",
		},
		"delete_on_destroy": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Delete the volume when the resource is destroyed. Default false: the disk is only detached and " +
				"its volume stays as `unusedN` of the VM, named in a warning.",
		},
		"boot": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Whether the VM boots from this disk: true puts the slot first in the VM's boot order " +
				"(PVE does not add disks to it by itself, so a VM created before its disk would otherwise boot from its " +
				"network card), false takes it out; unset leaves the boot order alone (for `pve_vm.boot_order`). Do not " +
				"set both. On a running VM the new order is pending until the next start, when it matters. Import records true for a slot in the boot order, else leaves it unset.",
		},
		"reboot_if_needed": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Reboot a running VM when a change waits for a restart (see `pending`). Default false: the change " +
				"waits, `pending` lists it and the apply warns. Setting it to true later reboots the VM at the next apply if " +
				"changes are still pending.",
		},
		"pending": schema.ListAttribute{
			Computed: true, ElementType: types.StringType,
			MarkdownDescription: "What waits for a VM restart: option names (`cache`, `volume`, ...), `attach` for a disk " +
				"the running VM does not see yet, `detach` for one it will drop, `boot` when the disk enters or leaves the boot " +
				"order at the next start. Empty when the VM runs what is configured.",
		},
	}
}

// ValidateConfig refuses options the slot's bus does not have, as PVE's
// drive formats do (iothread and ro: SCSI and VirtIO; ssd: not VirtIO).
func (r *vmDiskResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m vmDiskModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.Size.IsUnknown() && !m.Size.IsNull() {
		if b, err := pve.ParseDiskSize(m.Size.ValueString()); err == nil && (b < 1<<20 || b%(1<<20) != 0) {
			resp.Diagnostics.AddAttributeError(path.Root("size"), "Size not in whole MiB",
				fmt.Sprintf("size = %q is %d bytes; PVE allocates disks in whole MiB (at least 1M). Use a size such as 512M or 32G.",
					m.Size.ValueString(), b))
		}
	}
	if m.Slot.IsUnknown() || m.Slot.IsNull() {
		return
	}
	slot := m.Slot.ValueString()
	bus := strings.TrimRight(slot, "0123456789")
	set := func(v types.Bool) bool { return !v.IsNull() }
	if bus != "scsi" && bus != "virtio" {
		for k, v := range map[string]types.Bool{"iothread": m.IOThread, "ro": m.RO} {
			if set(v) {
				resp.Diagnostics.AddAttributeError(path.Root(k), "Option not available on "+bus,
					fmt.Sprintf("PVE has %s only for SCSI and VirtIO disks; %s is %s. Remove %s or use a scsiN or virtioN slot.", k, slot, strings.ToUpper(bus), k))
			}
		}
	}
	validateDriveIdentity(&m, slot, bus, &resp.Diagnostics)
	if bus == "virtio" && set(m.SSD) {
		resp.Diagnostics.AddAttributeError(path.Root("ssd"), "Option not available on VirtIO",
			fmt.Sprintf("PVE has no ssd option for VirtIO disks (%s). Remove ssd, or use a scsiN slot (with discard = \"on\") "+
				"to present an SSD to the guest.", slot))
	}
}

// ModifyPlan refuses what would need a replacement or lose data, and
// plans the reboot that applies pending changes when asked to.
func (r *vmDiskResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.planWhole(ctx, req, resp)
	r.planRefs(ctx, req, resp) // vm_refs.go
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var state, plan vmDiskModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.VMID.IsUnknown() && plan.VMID.ValueInt64() != state.VMID.ValueInt64() {
		framework.RefuseChange(&resp.Diagnostics, "vm_id", "a VM disk",
			fmt.Sprintf("Disk %s belongs to VM %d; replacing it with a new disk of VM %d would delete or orphan its data, so the "+
				"provider refuses. Keep vm_id = %d. To give the volume to another VM, use PVE's Disk Action → Reassign Owner, "+
				"then import the disk there.", state.Slot.ValueString(), state.VMID.ValueInt64(), plan.VMID.ValueInt64(), state.VMID.ValueInt64()))
	}
	if !plan.Size.IsUnknown() && !state.Size.IsNull() {
		want, err1 := pve.ParseDiskSize(plan.Size.ValueString())
		have, err2 := pve.ParseDiskSize(state.Size.ValueString())
		if err1 == nil && err2 == nil && want < have {
			framework.RefuseChange(&resp.Diagnostics, "size", "a VM disk to a smaller size",
				fmt.Sprintf("Disk %s of VM %d has %s; PVE cannot shrink disks (\"shrinking disks is not supported\"), and replacing "+
					"the disk would lose its data. Keep size = %q or larger. To shrink, copy the data to a new, smaller disk "+
					"inside the guest.", state.Slot.ValueString(), state.VMID.ValueInt64(), state.Size.ValueString(), state.Size.ValueString()))
		}
	}
	r.warnPendingAtPlan(ctx, &state, &plan, &resp.Diagnostics)
	// Changes still pending and a reboot allowed: plan the reboot, which
	// empties pending.
	// (A stopped VM applies them when it starts; nothing to plan.)
	if !plan.RebootIfNeeded.IsUnknown() && plan.RebootIfNeeded.ValueBool() && len(state.Pending.Elements()) > 0 && r.PD != nil {
		if c, node, err := r.vmClient(ctx, state.VMID.ValueInt64(), false); err == nil {
			if st, err := c.VMStatus(ctx, node, state.VMID.ValueInt64()); err == nil && st.Running() {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending"), types.ListValueMust(types.StringType, nil))...)
			}
		}
	}
}

// vmClient finds the VM's node and the client that reaches it; to write
// (settle), once no migration (HA's) holds the VM.
func (r *vmDiskResource) vmClient(ctx context.Context, vmid int64, settle bool) (*pve.Client, string, error) {
	find := r.PD.Client.FindVM
	if settle {
		find = func(ctx context.Context, vmid int64) (string, error) { return settledNode(ctx, r.PD.Client, vmid) }
	}
	node, err := find(ctx, vmid)
	if err != nil {
		return nil, "", err
	}
	c, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return nil, "", err
	}
	return c, node, nil
}

// vmAt is vmClient for writes: where the VM is once no migration holds
// it, followed when a later step meets one. A VM this run already read
// or wrote (its create, another disk's attach) is on the node it was
// read on (vm_known.go): no search, and a step that meets a migration
// or finds the config gone follows the VM as ever.
func (r *vmDiskResource) vmAt(ctx context.Context, vmid int64) (*vmAt, error) {
	if k, ok := knownVMOf(r.PD, vmid); ok {
		if c, err := r.PD.NodeClient(ctx, k.node); err == nil {
			return &vmAt{pd: r.PD, vmid: vmid, c: c, node: k.node}, nil
		}
	}
	c, node, err := r.vmClient(ctx, vmid, true)
	if err != nil {
		return nil, err
	}
	return &vmAt{pd: r.PD, vmid: vmid, c: c, node: node}, nil
}

func diskID(vmid int64, slot string) string { return fmt.Sprintf("%d/%s", vmid, slot) }

// updateConfig writes the VM config through the qmconfig task, started
// again while PVE's config lock is busy.
func updateConfig(ctx context.Context, c *pve.Client, node string, vmid int64, u pve.VMConfigUpdate) error {
	_, err := c.AwaitVMTaskOf(ctx, node, "qmconfig", vmid, func() (string, error) { return c.UpdateVMConfigWaiting(ctx, node, vmid, u) })
	return err
}

func (r *vmDiskResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan vmDiskModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 30*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vmid, slot := plan.VMID.ValueInt64(), plan.Slot.ValueString()
	id := diskID(vmid, slot)
	defer r.PD.NodeLocks.Lock(VMLockKey(vmid))()

	at, err := r.vmAt(ctx, vmid)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "VM disk", id, fmt.Errorf("find VM %d: %w", vmid, err))
		return
	}
	size, err := pve.ParseDiskSize(plan.Size.ValueString())
	if err != nil || size <= 0 {
		resp.Diagnostics.AddAttributeError(path.Root("size"), "Invalid size", fmt.Sprintf("size %q is not a disk size such as 32G", plan.Size.ValueString()))
		return
	}
	drive := pve.AllocDrive(plan.Storage.ValueString(), size, plan.options())
	// The slot's check starts from what this run last read of the VM
	// (vm_known.go): its create's or another disk's read-back, made
	// under the VM's lock held here. A boot disk reads the config fresh:
	// the boot order it writes keeps the config's other devices.
	st, err := at.slotForWrite(ctx, slot, plan.Boot.ValueBool())
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "VM disk", id, err)
		return
	}
	if st.HasCurrent || st.HasEffective {
		detail := fmt.Sprintf("VM %d already has %s = %s. Import it instead of creating it: terraform import %s.<name> %s, or choose "+
			"another slot.", vmid, slot, st.Effective.String(), vmDiskTypeName, id)
		if st.Effective.IsCdrom() {
			detail = fmt.Sprintf("VM %d already has %s = %s.", vmid, slot, st.Effective.String()) + cdromInSlotNote(slot)
		}
		resp.Diagnostics.AddAttributeError(path.Root("slot"), "Slot already in use", detail)
		return
	}
	tflog.Info(ctx, "creating VM disk", map[string]any{"vmid": vmid, "node": at.node, "slot": slot, "drive": drive.String()})
	set := pve.Params{slot: drive.String()}
	if plan.Boot.ValueBool() {
		// In the same write: PVE accepts a boot order naming a device the
		// request adds.
		set["boot"] = bootOrderSetting(st.Boot, slot, true)
	}
	err = at.updateConfig(ctx, pve.VMConfigUpdate{Set: set})
	if err != nil {
		// The slot was empty: a failed worker that wrote the drive (its
		// volume allocated, qemu-server update_vm) made this disk.
		if !framework.FailedTask(err) || !slotOnStorage(ctx, at, slot, plan.Storage.ValueString()) {
			framework.AddUnable(&resp.Diagnostics, "Create", "VM disk", id, err)
			return
		}
		framework.WarnAdopted(&resp.Diagnostics, "VM disk", id, err)
	}
	r.finish(ctx, at, "Create", &plan, &resp.State, &resp.Diagnostics)
}

// slotOnStorage reports whether the VM's slot now holds (or has pending)
// a volume on storage.
func slotOnStorage(ctx context.Context, at *vmAt, slot, storage string) bool {
	st, err := at.readSlot(ctx, slot)
	if err != nil || (!st.HasCurrent && !st.HasEffective) {
		return false
	}
	return strings.HasPrefix(st.Effective.Volume, storage+":")
}

// finish applies pending changes by a reboot when allowed (else warns),
// then reads the disk back into st.
func (r *vmDiskResource) finish(ctx context.Context, at *vmAt, action string, plan *vmDiskModel, st stateSetter, diags *diag.Diagnostics) {
	vmid, slot := plan.VMID.ValueInt64(), plan.Slot.ValueString()
	id := diskID(vmid, slot)
	s, err := at.readSlot(ctx, slot)
	if err != nil {
		framework.AddUnable(diags, "Read", "VM disk", id, err)
		return
	}
	if p := s.Pending(); len(p) > 0 {
		running := false
		if st, err := at.c.VMStatus(ctx, at.node, vmid); err == nil {
			running = st.Running()
		}
		if !running {
			diags.AddWarning("Disk changes wait for the VM's start",
				fmt.Sprintf("VM %d is stopped and has changes of %s pending (%s); PVE applies them when the VM starts.", vmid, slot, strings.Join(p, ", ")))
		} else if plan.RebootIfNeeded.ValueBool() {
			tflog.Info(ctx, "rebooting the VM to apply pending disk changes", map[string]any{"vmid": vmid, "pending": p})
			if err := at.reboot(ctx); err != nil && action == "Create" {
				// The disk is made and attached: failing the create would
				// taint it, and the next apply would replace it. What is
				// left is the pending change, a planned update.
				diags.AddWarning("Unable to reboot VM "+strconv.FormatInt(vmid, 10)+" for disk "+id,
					fmt.Sprintf("The disk is attached; reboot VM %d to apply %s: %v\n\nThe next plan shows the pending change as an update of %s, and applying it reboots the VM again.",
						vmid, strings.Join(p, ", "), err, id))
			} else if err != nil {
				framework.AddUnable(diags, action, "VM disk", id, fmt.Errorf("reboot VM %d to apply %s: %w", vmid, strings.Join(p, ", "), err))
			} else if s, err = at.readSlot(ctx, slot); err != nil {
				framework.AddUnable(diags, "Read", "VM disk", id, err)
				return
			}
		} else {
			diags.AddWarning("Disk changes wait for a VM restart",
				fmt.Sprintf("VM %d is running and PVE keeps these changes of %s pending until the VM restarts: %s. Restart the VM "+
					"(a reboot from inside the guest is not enough: stop and start it, or use Reboot in PVE), or set "+
					"reboot_if_needed = true.", vmid, slot, strings.Join(p, ", ")))
		}
	}
	if !s.HasEffective {
		framework.AddUnable(diags, "Read", "VM disk", id, fmt.Errorf("VM %d has no %s after the write", vmid, slot))
		return
	}
	state := *plan
	diags.Append(state.fromDrive(vmid, slot, at.node, s.Effective, s.Pending())...)
	state.setBoot(s, slot)
	diags.Append(st.Set(ctx, &state)...)
}

type stateSetter interface {
	Set(context.Context, any) diag.Diagnostics
}

func (r *vmDiskResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state vmDiskModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil {
		return
	}
	vmid, slot := state.VMID.ValueInt64(), state.Slot.ValueString()
	id := diskID(vmid, slot)
	// The VM's refresh shares these reads (vm_reads.go).
	node, err := findVM(ctx, r.PD, vmid, state.Node.ValueString())
	if errors.Is(err, pve.ErrNotFound) {
		tflog.Warn(ctx, "VM gone, removing its disk from the state", map[string]any{"vmid": vmid})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM disk", id, err)
		return
	}
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	items, err := sharedPending(ctx, r.PD, c, node, vmid, false)
	var s *slotState
	if err == nil {
		s, err = slotFrom(items, slot)
	}
	if errors.Is(err, pve.ErrNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM disk", id, err)
		return
	}
	if !s.HasEffective {
		tflog.Warn(ctx, "disk slot gone, removing it from the state", map[string]any{"vmid": vmid, "slot": slot})
		resp.State.RemoveResource(ctx)
		return
	}
	if s.Effective.IsCdrom() {
		resp.Diagnostics.AddWarning("Not a disk",
			fmt.Sprintf("%s of VM %d is a CD/DVD drive (%s), which pve_vm_disk does not manage; it is dropped from the state.",
				slot, vmid, s.Effective.String()))
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(state.fromDrive(vmid, slot, node, s.Effective, s.Pending())...)
	state.setBoot(s, slot)
	if imported, _ := req.Private.GetKey(ctx, importedKey); len(imported) > 0 {
		// The first read after an import: a slot the VM boots from is
		// recorded as boot = true (as the configuration that adopts a
		// system disk says), any other leaves boot unmanaged.
		if inBootOrder(s.Boot, slot) {
			state.Boot = types.BoolValue(true)
		}
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// importedKey marks, in private state, a disk imported but not read yet.
const importedKey = "imported"

// hotpluggable reports whether a running VM plugs a disk of slot in and
// out at once (vmconfig_hotplug_pending: SCSI and VirtIO with the hotplug
// feature "disk", which PVE enables by default).
func hotpluggable(slot, hotplug string) bool {
	if !strings.HasPrefix(slot, "scsi") && !strings.HasPrefix(slot, "virtio") {
		return false
	}
	switch hotplug {
	case "", "1":
		return true
	case "0":
		return false
	}
	for _, f := range strings.Split(hotplug, ",") {
		if f == "disk" {
			return true
		}
	}
	return false
}

func (r *vmDiskResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state vmDiskModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 60*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vmid, slot := state.VMID.ValueInt64(), state.Slot.ValueString()
	id := diskID(vmid, slot)
	defer r.PD.NodeLocks.Lock(VMLockKey(vmid))()

	at, err := r.vmAt(ctx, vmid)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "VM disk", id, fmt.Errorf("find VM %d: %w", vmid, err))
		return
	}
	s, err := at.readSlot(ctx, slot)
	if err == nil && !s.HasEffective {
		err = fmt.Errorf("VM %d has no %s any more", vmid, slot)
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "VM disk", id, err)
		return
	}

	// Pending changes of the slot first: PVE's move_disk rewrites only
	// the current drive, so a pending one would keep pointing at the
	// volume the move deletes.
	if plan.Slot.ValueString() != slot || plan.Storage.ValueString() != s.Effective.Storage() {
		if s, err = r.settlePending(ctx, at, slot, s, plan.RebootIfNeeded.ValueBool()); err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "VM disk", id, err)
			return
		}
	}

	// The slot first: the same volume under the new slot, in one config
	// write. Then storage, size, options and boot order, each step from
	// the slot as the one before left it.
	if newSlot := plan.Slot.ValueString(); newSlot != slot {
		if !r.changeSlot(ctx, at, slot, newSlot, s, plan.options(), &resp.Diagnostics) {
			return
		}
		slot, id = newSlot, diskID(vmid, newSlot)
		if s, err = at.readSlot(ctx, slot); err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "VM disk", id, err)
			return
		}
	}
	if s = moveDisk(ctx, at, slot, s, plan.Storage.ValueString(), &resp.Diagnostics); s == nil {
		return
	}
	if s = growDisk(ctx, at, slot, s, plan.Size.ValueString(), &resp.Diagnostics); s == nil {
		return
	}
	if !writeDiskOptions(ctx, at, slot, s, plan.options(), &resp.Diagnostics) {
		return
	}
	if !plan.Boot.IsNull() && !plan.Boot.IsUnknown() && !writeDiskBoot(ctx, at, slot, plan.Boot.ValueBool(), &resp.Diagnostics) {
		return
	}
	r.finish(ctx, at, "Update", &plan, &resp.State, &resp.Diagnostics)
}

// moveDisk moves the slot's volume to storage (move_disk; PVE deletes
// the source only after the copy) unless it is there, and returns the
// slot read back; nil when it failed (diagnosed).
func moveDisk(ctx context.Context, at *vmAt, slot string, s *slotState, storage string, diags *diag.Diagnostics) *slotState {
	vmid, id := at.vmid, diskID(at.vmid, slot)
	if storage == s.Effective.Storage() {
		return s
	}
	tflog.Info(ctx, "moving VM disk", map[string]any{"vmid": vmid, "slot": slot, "from": s.Effective.Volume, "to": storage})
	err := at.awaitTask(ctx, "qmmove", func(c *pve.Client, node string) (string, error) {
		return c.MoveVMDisk(ctx, node, vmid, pve.MoveVMDiskRequest{Disk: slot, Storage: storage, DeleteSource: true})
	})
	if err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, fmt.Errorf("move %s to storage %s: %w", s.Effective.Volume, storage, err))
		return nil
	}
	s, err = at.readSlot(ctx, slot)
	if err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, err)
		return nil
	}
	return s
}

// growDisk grows the slot's volume to size (ModifyPlan refused
// shrinking; a volume that PVE has larger by now is refused here) and
// returns the slot read back; nil when it failed (diagnosed).
func growDisk(ctx context.Context, at *vmAt, slot string, s *slotState, size string, diags *diag.Diagnostics) *slotState {
	vmid, id := at.vmid, diskID(at.vmid, slot)
	want, err := pve.ParseDiskSize(size)
	if err != nil {
		diags.AddAttributeError(path.Root("size"), "Invalid size", err.Error())
		return nil
	}
	have, _ := s.Effective.SizeBytes()
	switch {
	case want > have:
		tflog.Info(ctx, "growing VM disk", map[string]any{"vmid": vmid, "slot": slot, "size": size})
		err := at.awaitTask(ctx, "resize", func(c *pve.Client, node string) (string, error) {
			return c.ResizeVMDisk(ctx, node, vmid, slot, pve.FormatDiskSize(want), "")
		})
		if err != nil {
			framework.AddUnable(diags, "Update", "VM disk", id, fmt.Errorf("resize %s to %s: %w", slot, size, err))
			return nil
		}
		if s, err = at.readSlot(ctx, slot); err != nil {
			framework.AddUnable(diags, "Update", "VM disk", id, err)
			return nil
		}
	case want < have:
		diags.AddAttributeError(path.Root("size"), "Disk cannot shrink",
			fmt.Sprintf("%s of VM %d has %s in PVE; PVE cannot shrink disks. Set size to at least %s.", slot, vmid,
				pve.FormatDiskSize(have), pve.FormatDiskSize(have)))
		return nil
	}
	return s
}

// writeDiskOptions writes the drive string with the managed options
// replaced when they differ; false when that failed (diagnosed).
func writeDiskOptions(ctx context.Context, at *vmAt, slot string, s *slotState, opts map[string]string, diags *diag.Diagnostics) bool {
	if !optionsDiffer(s.Effective, opts) {
		return true
	}
	drive := withOptions(s.Effective, opts)
	tflog.Info(ctx, "changing VM disk options", map[string]any{"vmid": at.vmid, "slot": slot, "drive": drive.String()})
	if err := at.updateConfig(ctx, pve.VMConfigUpdate{Set: pve.Params{slot: drive.String()}}); err != nil {
		framework.AddUnable(diags, "Update", "VM disk", diskID(at.vmid, slot), err)
		return false
	}
	return true
}

// writeDiskBoot puts the slot into the VM's boot order or takes it out
// (boot), read fresh; false when that failed (diagnosed).
func writeDiskBoot(ctx context.Context, at *vmAt, slot string, boot bool, diags *diag.Diagnostics) bool {
	id := diskID(at.vmid, slot)
	s, err := at.readSlot(ctx, slot)
	if err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, err)
		return false
	}
	if inBootOrder(s.Boot, slot) == boot {
		return true
	}
	u := pve.VMConfigUpdate{Set: pve.Params{}}
	if b := bootOrderSetting(s.Boot, slot, boot); b != "" {
		u.Set["boot"] = b
	} else {
		u.Delete = []string{"boot"}
	}
	tflog.Info(ctx, "changing the VM's boot order", map[string]any{"vmid": at.vmid, "slot": slot, "boot": boot})
	if err := at.updateConfig(ctx, u); err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, fmt.Errorf("boot order: %w", err))
		return false
	}
	return true
}

// settlePending applies the slot's pending changes before a slot change
// or a move: on a stopped VM by writing the pending drive (a config write
// to a stopped VM applies everything pending), on a running one by a
// reboot when allowed, else it refuses.
func (r *vmDiskResource) settlePending(ctx context.Context, at *vmAt, slot string, s *slotState, reboot bool) (*slotState, error) {
	vmid := at.vmid
	p := s.Pending()
	if len(p) == 0 {
		return s, nil
	}
	status, err := at.c.VMStatus(ctx, at.node, vmid)
	if err != nil {
		return nil, err
	}
	switch {
	case !status.Running():
		tflog.Info(ctx, "applying pending changes of the stopped VM's disk", map[string]any{"vmid": vmid, "slot": slot, "pending": p})
		if err := at.updateConfig(ctx, pve.VMConfigUpdate{Set: pve.Params{slot: s.Effective.String()}}); err != nil {
			return nil, fmt.Errorf("apply the pending %s of %s: %w", strings.Join(p, ", "), slot, err)
		}
	case reboot:
		tflog.Info(ctx, "rebooting the VM to apply pending disk changes before moving the disk", map[string]any{"vmid": vmid, "pending": p})
		if err := at.reboot(ctx); err != nil {
			return nil, fmt.Errorf("reboot VM %d to apply the pending %s of %s: %w", vmid, strings.Join(p, ", "), slot, err)
		}
	default:
		return nil, fmt.Errorf("%s of running VM %d has changes waiting for a restart (%s). Moving it or changing its slot now "+
			"would leave PVE's pending configuration pointing at the old volume or slot. Restart the VM first, or set "+
			"reboot_if_needed = true", slot, vmid, strings.Join(p, ", "))
	}
	s, err = at.readSlot(ctx, slot)
	if err == nil && len(s.Pending()) > 0 {
		err = fmt.Errorf("%s of VM %d still has pending changes (%s)", slot, vmid, strings.Join(s.Pending(), ", "))
	}
	return s, err
}

// changeSlot re-attaches the slot's volume under newSlot in one config
// write, with the configured options: PVE detaches the old slot (its volume would become unusedN) and
// attaches the volume to the new one, and write_config drops the unusedN
// entry of a volume a drive uses again. Nothing is allocated or freed.
func (r *vmDiskResource) changeSlot(ctx context.Context, at *vmAt, slot, newSlot string, s *slotState, opts map[string]string, diags *diag.Diagnostics) bool {
	vmid := at.vmid
	id := diskID(vmid, slot)
	target, err := at.readSlot(ctx, newSlot)
	if err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, err)
		return false
	}
	if target.HasCurrent || target.HasEffective {
		diags.AddAttributeError(path.Root("slot"), "Slot already in use",
			fmt.Sprintf("VM %d already has %s = %s; choose a free slot.", vmid, newSlot, target.Effective.String()))
		return false
	}
	if s.PendingDelete || !s.HasCurrent || s.Current.Volume != s.Effective.Volume {
		diags.AddError("Unable to Update VM disk "+id,
			fmt.Sprintf("%s of VM %d has a change of its volume or attachment pending (%s); restart the VM to apply it before "+
				"changing the slot.", slot, vmid, strings.Join(s.Pending(), ", ")))
		return false
	}
	status, err := at.c.VMStatus(ctx, at.node, vmid)
	if err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, err)
		return false
	}
	conf, err := at.c.VMConfig(ctx, at.node, vmid, false)
	if err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, err)
		return false
	}
	hp, _ := conf.Get("hotplug")
	if status.Running() && (!hotpluggable(slot, hp) || !hotpluggable(newSlot, hp)) {
		diags.AddAttributeError(path.Root("slot"), "Slot cannot change on the running VM",
			fmt.Sprintf("VM %d is running and %s -> %s cannot be hot-plugged (only SCSI and VirtIO disks with the VM's hotplug "+
				"option including disk are): PVE would keep one side pending and could present the volume twice. Stop the "+
				"VM, apply, then start it.", vmid, slot, newSlot))
		return false
	}
	// The new slot gets the configured options right away: the bus may
	// not have some of the old ones (ssd on VirtIO).
	set := pve.Params{newSlot: withOptions(s.Effective, opts).String()}
	if boot, ok := conf.Get("boot"); ok {
		if nb := bootOrderWith(boot, slot, newSlot); nb != "" {
			set["boot"] = nb
		}
	}
	tflog.Info(ctx, "re-attaching VM disk under a new slot", map[string]any{"vmid": vmid, "from": slot, "to": newSlot, "volume": s.Effective.Volume})
	if status.Running() {
		diags.AddWarning("Disk re-plugged in the running VM",
			fmt.Sprintf("VM %d is running: PVE hot-unplugs %s and hot-plugs the same volume %s as %s; the guest sees the disk "+
				"disappear and reappear under another device name.", vmid, slot, s.Effective.Volume, newSlot))
	}
	if err := at.updateConfig(ctx, pve.VMConfigUpdate{Set: set, Delete: []string{slot}}); err != nil {
		framework.AddUnable(diags, "Update", "VM disk", id, fmt.Errorf("re-attach %s as %s: %w", s.Effective.Volume, newSlot, err))
		return false
	}
	return true
}

func (r *vmDiskResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state vmDiskModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 30*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vmid, slot := state.VMID.ValueInt64(), state.Slot.ValueString()
	id := diskID(vmid, slot)
	defer r.PD.NodeLocks.Lock(VMLockKey(vmid))()

	at, err := r.vmAt(ctx, vmid)
	if errors.Is(err, pve.ErrNotFound) {
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "VM disk", id, err)
		return
	}
	s, err := at.readSlot(ctx, slot)
	if errors.Is(err, pve.ErrNotFound) {
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "VM disk", id, err)
		return
	}
	if !s.HasCurrent && !s.HasEffective {
		return
	}
	volume := s.Effective.Volume
	del := state.DeleteOnDestroy.ValueBool()
	tflog.Info(ctx, "removing VM disk", map[string]any{"vmid": vmid, "slot": slot, "volume": volume, "delete_volume": del})
	if err := at.updateConfig(ctx, pve.VMConfigUpdate{Delete: []string{slot}, Force: del}); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "VM disk", id, err)
		return
	}
	after, err := at.readSlot(ctx, slot)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM disk", id, err)
		return
	}
	if after.PendingDelete {
		if state.RebootIfNeeded.ValueBool() {
			if err := at.reboot(ctx); err != nil {
				framework.AddUnable(&resp.Diagnostics, "Delete", "VM disk", id, fmt.Errorf("reboot VM %d to detach %s: %w", vmid, slot, err))
				return
			}
		} else {
			resp.Diagnostics.AddWarning("Disk detaches at the next VM restart",
				fmt.Sprintf("VM %d is running and cannot hot-unplug %s; PVE detaches it (volume %s) when the VM restarts.", vmid, slot, volume))
		}
	}
	if del {
		return
	}
	conf, err := at.c.VMConfig(ctx, at.node, vmid, true)
	if err != nil {
		return
	}
	for k, v := range conf.Unused() {
		if v == volume {
			resp.Diagnostics.AddWarning("Disk detached, volume kept",
				fmt.Sprintf("%s of VM %d is detached; its volume %s is kept as %s of the VM (delete_on_destroy is false). "+
					"Delete it in PVE (VM → Hardware → %s → Remove) when the data is no longer needed, or attach it again.",
					slot, vmid, volume, k, k))
			return
		}
	}
	if !after.PendingDelete {
		resp.Diagnostics.AddWarning("Disk detached, volume kept",
			fmt.Sprintf("%s of VM %d is detached; its volume %s is kept (delete_on_destroy is false).", slot, vmid, volume))
	}
}

func (r *vmDiskResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vmidStr, slot, ok := strings.Cut(req.ID, "/")
	vmid, err := strconv.ParseInt(vmidStr, 10, 64)
	if !ok || err != nil || !slotRE.MatchString(slot) {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("Expected <vm_id>/<slot>, such as 100/scsi0; got %q.", req.ID))
		return
	}
	var m vmDiskModel
	m.VMID = types.Int64Value(vmid)
	m.Slot = types.StringValue(slot)
	m.Size = types.StringNull()
	resp.Diagnostics.Append(m.fromDrive(vmid, slot, "", pve.Drive{Options: map[string]string{}}, nil)...)
	m.Size = types.StringNull()
	m.Storage = types.StringNull()
	m.Volume = types.StringNull()
	m.Node = types.StringNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte(`true`))...)
}
