package qemu

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const vmTypeName = "pve_vm"

var (
	_ resource.Resource                = (*vmResource)(nil)
	_ resource.ResourceWithConfigure   = (*vmResource)(nil)
	_ resource.ResourceWithImportState = (*vmResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*vmResource)(nil)
)

// NewVMResource is the constructor the provider registers.
func NewVMResource() resource.Resource {
	return &vmResource{ResourceBase: framework.ResourceBase{TypeName: vmTypeName}}
}

type vmResource struct{ framework.ResourceBase }

type vmResourceModel struct {
	vmModel
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

var (
	dnsNameRE = regexp.MustCompile(`^(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)$`)
	tagRE     = regexp.MustCompile(`^(?i:[a-z0-9_][a-z0-9_\-+.]*)$`)
	macRE     = regexp.MustCompile(`^[0-9A-F][02468ACE](?::[0-9A-F]{2}){5}$`)
	netKeyRE  = regexp.MustCompile(`^net([0-9]|[12][0-9]|3[01])$`)
	serialRE  = regexp.MustCompile(`^serial[0-3]$`)
	bootDevRE = regexp.MustCompile(`^(?:(?:ide[0-3]|sata[0-5]|scsi(?:[0-9]|[12][0-9]|30)|virtio(?:[0-9]|1[0-5])|net(?:[0-9]|[12][0-9]|3[01])|efidisk0|tpmstate0|hostpci[0-9]+|usb[0-9]+))$`)
)

const credsNote = "Credentials: an API token with `VM.Allocate` on `/vms/<vmid>` (or the pool) to create and destroy, " +
	"`VM.Config.*` to change options, `VM.PowerMgmt` for `started`, `VM.Migrate` for a node change, and `VM.Audit` to read; " +
	"`Sys.Audit` on `/` helps it find the VM in the cluster's resource list."

func (r *vmResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := vmIdentityAttributes()
	maps.Copy(attrs, vmHardwareAttributes())
	maps.Copy(attrs, vmDeviceAttributes())
	maps.Copy(attrs, vmLifecycleAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "A QEMU virtual machine **without its disks** (GUI: Create VM; `qm create`/`qm set`). Disks are " +
			"separate `pve_vm_disk` resources keyed by slot, so adding, growing or moving a disk never touches the VM; CD/DVD " +
			"drives (an installer ISO) are the VM's `cdrom`.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// vmIdentityAttributes are where the VM is and what it is called.
func vmIdentityAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": framework.IDAttribute("The VM id, as a string."),
		"node": framework.NodeAttribute("Node the VM lives on. Changing it migrates the VM (`qm migrate`): online when it runs, "+
			"copying disks on node-local storage too; storages the VM uses must exist on the target. A VM moved "+
			"outside Terraform is migrated back, except when the HA manager manages it (`pve_ha_resource`): then HA "+
			"owns its placement (maintenance, fencing, rebalancing, `ha-manager migrate`), `node` stays where Terraform "+
			"created or last migrated it, `current_node` shows where it runs, and plans warn instead of migrating it "+
			"back. Changing `node` of such a VM migrates it through HA. A VM that leaves HA (its `pve_ha_resource` removed) "+
			"stays where it runs in that apply, as planned; the next plan migrates it back to `node`.", framework.NodeInPlace),
		"current_node": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "Node the VM is on now, from the cluster. Equal to `node` unless the HA manager moved " +
				"the VM. Operations that meet a migration wait for it and continue on the new node.",
		},
		"vmid": schema.Int64Attribute{
			Optional: true, Computed: true,
			MarkdownDescription: "VM id, 100 to 999999999, unique in the cluster. Unset, the provider takes the lowest free " +
				"id from PVE (`/cluster/nextid`). PVE cannot renumber a VM, so a change is refused at plan.",
			Validators:    []validator.Int64{int64validator.Between(100, 999999999)},
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
		},
		"name": schema.StringAttribute{
			Optional: true, MarkdownDescription: "VM name, a DNS name (letters, digits, `-`, dots between labels).",
			Validators: []validator.String{stringvalidator.RegexMatches(dnsNameRE, "must be a valid DNS name, such as web-1 or web-1.example.org")},
		},
		"description": schema.StringAttribute{
			Optional: true, MarkdownDescription: "Notes shown in the GUI's summary, up to 8192 characters.",
			Validators: []validator.String{stringvalidator.LengthBetween(1, 8192)},
		},
		"tags": schema.SetAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "Tags (letters, digits, `_`, `-`, `+`, `.`; not starting with `-`, `+` or `.`). PVE stores them sorted.",
			Validators: []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(stringvalidator.RegexMatches(tagRE,
				"must consist of letters, digits, _, -, + and . and start with a letter, digit or _"))},
		},
	}
}

// vmHardwareAttributes are the VM's CPU, memory, firmware and controller.
func vmHardwareAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"cores": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultCores),
			MarkdownDescription: "CPU cores per socket (default 1). Pending until a restart on a running VM.",
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
		"sockets": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultSockets),
			MarkdownDescription: "CPU sockets (default 1). Pending until a restart on a running VM.",
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
		"memory": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultMemory),
			MarkdownDescription: "Memory in MiB (default 512, at least 16). Pending until a restart on a running VM " +
				"unless memory hotplug is enabled.",
			Validators: []validator.Int64{int64validator.AtLeast(16)},
		},
		"balloon": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: "Minimum memory in MiB for the balloon device; 0 disables ballooning. Unset: PVE's default " +
				"(ballooning on, minimum = memory). Must not exceed `memory`.",
			Validators: []validator.Int64{int64validator.AtLeast(0)},
		},
		"cpu": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "CPU type and flags as PVE's `cpu` option, such as `host` or `x86-64-v3,flags=+aes`. " +
				"Unset: PVE's default (`x86-64-v2-AES` on PVE 8 and 9).",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"numa": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Enable NUMA (default false).",
		},
		"bios": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(defaultBIOS),
			MarkdownDescription: "Firmware: `seabios` (default) or `ovmf` (UEFI; wants an EFI disk, `efidisk0`, for persistent " +
				"UEFI variables). Pending until a restart on a running VM.",
			Validators: []validator.String{stringvalidator.OneOf("seabios", "ovmf")},
		},
		"machine": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "QEMU machine type, such as `q35` or `pc-q35-9.2+pve1`, with PVE's options " +
				"(`q35,viommu=virtio`). Unset: `pc` (i440fx), except that PVE pins Windows guests' machine version at create.",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"ostype": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(defaultOSType),
			MarkdownDescription: "Guest OS type, which tunes PVE's defaults: `l26` (Linux 2.6+), `win11`, `win10`, ..., " +
				"`other` (default).",
			Validators: []validator.String{stringvalidator.OneOf("other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris")},
		},
		"agent": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Enable the QEMU guest agent device (default false); install qemu-guest-agent in the guest. " +
				"Turning it on for a running VM is pending until a restart.",
		},
		"scsihw": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(defaultSCSIHW),
			MarkdownDescription: "SCSI controller: `lsi` (PVE's default), `lsi53c810`, `virtio-scsi-pci`, `virtio-scsi-single` " +
				"(one controller per disk; needed for `iothread` on SCSI disks, the reference lab's choice), `megasas`, `pvscsi`.",
			Validators: []validator.String{stringvalidator.OneOf("lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi")},
		},
	}
}

// vmDeviceAttributes are the VM's boot order and devices other than disks.
func vmDeviceAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"boot_order": schema.ListAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "Boot devices in order, such as `[\"scsi0\", \"net0\"]`, or `[\"ide2\", \"scsi0\"]` to boot an " +
				"installer from the CD drive `ide2` (see `cdrom`) before the disk. Unset: the provider leaves PVE's " +
				"boot order alone (at create PVE picks the first disk, the first CD drive and the first NIC the VM has then). Devices the VM " +
				"does not have yet, such as a `pve_vm_disk` created after the VM, are written once they exist: the apply " +
				"after the disk's creation completes the order. To boot from such a disk in one apply, leave this unset " +
				"and set `boot = true` on the `pve_vm_disk`.",
			Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
				listvalidator.ValueStringsAre(stringvalidator.RegexMatches(bootDevRE, "must be a disk or CD drive slot (scsi0, virtio0, sata0, ide2, ...) or a NIC (net0, ...)"))},
		},
		"network": vmNetworkAttribute(),
		"cdrom":   vmCdromAttribute(),
		"serial": schema.MapAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "Serial ports by slot (`serial0` to `serial3`): `socket`, or a host device such as " +
				"`/dev/ttyS0` (host devices need root@pam). Pending until a restart on a running VM.",
			Validators: []validator.Map{
				mapvalidator.KeysAre(stringvalidator.RegexMatches(serialRE, "must be serial0 to serial3")),
				mapvalidator.ValueStringsAre(stringvalidator.RegexMatches(regexp.MustCompile(`^(?:/dev/.+|socket)$`), "must be socket or a /dev path")),
			},
		},
		"vga": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Display as PVE's `vga` option, such as `std`, `serial0`, `qxl` or `virtio,memory=32`. " +
				"Unset: PVE's default (`std`).",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
	}
}

// vmNetworkAttribute is the VM's NICs by slot.
func vmNetworkAttribute() schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		Optional: true,
		MarkdownDescription: "Network devices by slot (`net0` to `net31`). Bridge, VLAN tag, trunks, firewall, link state " +
			"and rate change live; model, MAC, MTU and queues replug the device on a running VM.",
		Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(netKeyRE, "must be net0 to net31"))},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"model": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("virtio"),
				MarkdownDescription: "NIC model: `virtio` (default), `e1000`, `e1000e`, `rtl8139`, `vmxnet3`, ...",
				Validators: []validator.String{stringvalidator.OneOf("e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e",
					"i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3")},
			},
			"bridge": schema.StringAttribute{
				Required: true, MarkdownDescription: "Bridge to attach to, such as `vmbr0` or `bridge0`.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"mac_address": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "MAC address in upper case (`BC:24:11:12:34:56`). Unset, PVE generates one with the " +
					"datacenter's prefix and the provider keeps it.",
				Validators:    []validator.String{stringvalidator.RegexMatches(macRE, "must be an upper-case unicast MAC address such as BC:24:11:12:34:56")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"tag": schema.Int64Attribute{
				Optional: true, MarkdownDescription: "VLAN tag, 1 to 4094.",
				Validators: []validator.Int64{int64validator.Between(1, 4094)},
			},
			"trunks": schema.StringAttribute{
				Optional: true, MarkdownDescription: "VLANs to pass through, such as `10;20-30`.",
				Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^\d+(?:-\d+)?(?:;\d+(?:-\d+)?)*$`), "must be VLAN ids or ranges separated by ;")},
			},
			"firewall": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Apply PVE's firewall to the device (default false).",
			},
			"link_down": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Disconnect the link (default false).",
			},
			"mtu": schema.Int64Attribute{
				Optional: true, MarkdownDescription: "MTU of a virtio device, 1 to 65520 (1 = the bridge's MTU).",
				Validators: []validator.Int64{int64validator.Between(1, 65520)},
			},
			"queues": schema.Int64Attribute{
				Optional: true, MarkdownDescription: "Packet queues of a virtio device, 0 to 64.",
				Validators: []validator.Int64{int64validator.Between(0, 64)},
			},
		}},
	}
}

// vmLifecycleAttributes are power, protection and what PVE reports.
func vmLifecycleAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"onboot": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Start the VM when its node boots (default false).",
		},
		"started": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Whether the VM runs (default false): true starts it, false shuts it down (ACPI shutdown, " +
				"then a stop after the timeout). A VM that HA manages is started and stopped through HA.",
		},
		"protection": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "PVE's protection flag (default false): PVE then refuses to destroy the VM or remove its disks, " +
				"and the provider refuses a destroy at plan. Set it to false and apply before destroying.",
		},
		"destroy_disks": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Allow destroying the VM while its config still lists volumes (attached disks or detached " +
				"`unusedN` ones), which PVE deletes with the VM (default false: such a destroy is refused and names the " +
				"volumes). Not a PVE setting; only the provider reads it.",
		},
		"status": schema.StringAttribute{
			Computed: true, MarkdownDescription: "`running` or `stopped`, as PVE reports it.",
		},
		"pending_changes": schema.ListAttribute{
			Computed: true, ElementType: types.StringType,
			MarkdownDescription: "Options written to PVE's pending section that take effect at the next restart of the VM " +
				"(all of the VM's, also those of its disks).",
		},
	}
}

// ModifyPlan refuses a vmid change and a destroy of a protected VM, and
// marks what PVE reports after a write as unknown when it may change.
func (r *vmResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.planRefs(ctx, req, resp) // vm_refs.go
	if req.State.Raw.IsNull() {
		return
	}
	var state vmResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	planVM(ctx, r.PD, &state, req.Plan.Raw.IsNull(), &resp.Diagnostics)
	if req.Plan.Raw.IsNull() {
		if state.Protection.ValueBool() {
			framework.RefuseDestroy(&resp.Diagnostics, "protection", fmt.Sprintf("VM %d", state.VMID.ValueInt64()),
				fmt.Sprintf("VM %d has protection = true, so PVE refuses to destroy it (and its disks). Set protection = false "+
					"and apply that first. To stop managing the VM without destroying it, use a removed block with "+
					"lifecycle { destroy = false }.", state.VMID.ValueInt64()))
		}
		return
	}
	var plan vmResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	warnVMPendingAtPlan(ctx, &state, &resp.Diagnostics)
	if !plan.VMID.IsUnknown() && !plan.VMID.IsNull() && plan.VMID.ValueInt64() != state.VMID.ValueInt64() {
		framework.RefuseChange(&resp.Diagnostics, "vmid", "a VM",
			fmt.Sprintf("PVE cannot renumber VM %d, and replacing it with a new VM %d would destroy its disks, so the provider "+
				"does neither. Keep vmid = %d (or remove vmid to keep the one PVE assigned).",
				state.VMID.ValueInt64(), plan.VMID.ValueInt64(), state.VMID.ValueInt64()))
	}
	// A NIC's MAC address left to PVE keeps the one PVE generated; a new
	// NIC's is known after the apply.
	if !plan.Network.IsNull() && !plan.Network.IsUnknown() {
		var planNets, stateNets map[string]types.Object
		resp.Diagnostics.Append(plan.Network.ElementsAs(ctx, &planNets, false)...)
		if !state.Network.IsNull() && !state.Network.IsUnknown() {
			resp.Diagnostics.Append(state.Network.ElementsAs(ctx, &stateNets, false)...)
		}
		changed := false
		for k, o := range planNets {
			attrs := o.Attributes()
			mac, _ := attrs["mac_address"].(types.String)
			if !mac.IsNull() {
				continue
			}
			if so, ok := stateNets[k]; ok {
				attrs["mac_address"] = so.Attributes()["mac_address"]
			} else {
				attrs["mac_address"] = types.StringUnknown()
			}
			planNets[k] = types.ObjectValueMust(netAttrTypes, attrs)
			changed = true
		}
		if changed {
			nets, d := types.MapValueFrom(ctx, netObjectType, planNets)
			resp.Diagnostics.Append(d...)
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("network"), nets)...)
			plan.Network = nets
		}
	}
	warnHAPlacement(&state, &plan, &resp.Diagnostics)
	// status, pending_changes and current_node follow from the write (HA
	// may move the VM meanwhile).
	if !plan.sameAs(&state.vmModel) {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringUnknown())...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending_changes"), types.ListUnknown(types.StringType))...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("current_node"), types.StringUnknown())...)
	} else {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), state.Status)...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending_changes"), state.PendingChanges)...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("current_node"), state.CurrentNode)...)
	}
}

// sameAs compares the configurable attributes.
func (m *vmModel) sameAs(o *vmModel) bool {
	return m.Node.Equal(o.Node) && m.Name.Equal(o.Name) && m.Description.Equal(o.Description) && m.Tags.Equal(o.Tags) &&
		m.Cores.Equal(o.Cores) && m.Sockets.Equal(o.Sockets) && m.Memory.Equal(o.Memory) && m.Balloon.Equal(o.Balloon) &&
		m.CPU.Equal(o.CPU) && m.NUMA.Equal(o.NUMA) && m.BIOS.Equal(o.BIOS) && m.Machine.Equal(o.Machine) &&
		m.OSType.Equal(o.OSType) && m.Agent.Equal(o.Agent) && m.SCSIHW.Equal(o.SCSIHW) && m.BootOrder.Equal(o.BootOrder) &&
		m.Network.Equal(o.Network) && m.Cdrom.Equal(o.Cdrom) && m.Serial.Equal(o.Serial) && m.VGA.Equal(o.VGA) && m.OnBoot.Equal(o.OnBoot) &&
		m.Started.Equal(o.Started) && m.Protection.Equal(o.Protection)
}

func (r *vmResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan vmResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 20*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	opts := plan.createOptions(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	vmid, accepted, err := createVM(ctx, c, node, &plan, opts, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if err != nil && !createFailed(ctx, c, node, vmid, accepted, err, &resp.Diagnostics) {
		return
	}
	if plan.Started.ValueBool() {
		tflog.Info(ctx, "starting VM", map[string]any{"vmid": vmid})
		if _, err := c.AwaitVMTaskOf(ctx, node, "qmstart|hastart", vmid, func() (string, error) { return c.StartVM(ctx, node, vmid) }); err != nil && !powerReachedAfterFailure(ctx, c, node, vmid, true, err, &resp.Diagnostics) {
			framework.AddUnable(&resp.Diagnostics, "Start", "VM", vmLabel(vmid), err)
			r.readInto(ctx, node, vmid, &plan, false, &resp.State, &resp.Diagnostics)
			return
		}
	}
	// The power state is what the create left: stopped, or running once
	// the start succeeded.
	m, err := readCreated(ctx, r.PD, c, node, vmid, &plan.vmModel, plan.Started.ValueBool())
	setReadBack(ctx, vmid, m, err, &plan, &resp.State, &resp.Diagnostics)
}

// createOptions are the create request's parameters: the planned config
// without empty values, and the boot order restricted to the devices the
// VM has at create.
func (m *vmResourceModel) createOptions(ctx context.Context, diags *diag.Diagnostics) pve.Params {
	want := m.desired(ctx, diags)
	if diags.HasError() {
		return nil
	}
	opts := pve.Params{}
	for k, v := range want {
		if v != "" {
			opts[k] = v
		}
	}
	cds, _ := m.cdroms()
	for slot, what := range cds {
		opts[slot] = cdromSetting("", what)
		want[slot] = opts[slot]
	}
	var boot []string
	if !m.BootOrder.IsNull() && !m.BootOrder.IsUnknown() {
		diags.Append(m.BootOrder.ElementsAs(ctx, &boot, false)...)
		var present []string
		for _, dev := range boot {
			if _, ok := want[dev]; ok {
				present = append(present, dev)
			}
		}
		if len(present) > 0 {
			opts["boot"] = "order=" + strings.Join(present, ";")
		}
	}
	return opts
}

// createVM posts the create and waits for its task. It returns the VM id
// it used, whether PVE accepted the create (the POST returned a task, so
// the VM id is ours even if the task failed later) and the create's error.
// Failing to allocate an id is diagnosed.
func createVM(ctx context.Context, c *pve.Client, node string, plan *vmResourceModel, opts pve.Params, diags *diag.Diagnostics) (int64, bool, error) {
	// A configured vmid must be free; an allocated one can be taken by a
	// parallel create between nextid and the POST, so try the next one.
	vmid := plan.VMID.ValueInt64()
	fixed := !plan.VMID.IsNull() && !plan.VMID.IsUnknown()
	var err error
	accepted := false
	for attempt := 0; ; attempt++ {
		if !fixed {
			if vmid, err = c.NextVMID(ctx); err != nil {
				framework.AddUnable(diags, "Create", "VM", "", fmt.Errorf("allocate a VM id: %w", err))
				return 0, false, err
			}
		}
		tflog.Info(ctx, "creating VM", map[string]any{"vmid": vmid, "node": node})
		_, err = c.AwaitVMTask(ctx, func() (string, error) {
			// A lost answer is followed through the task it started, and
			// re-POSTed only when there is none (PVE did not act): a second
			// create of a VM PVE made would meet "already exists".
			upid, perr := c.StartTask(ctx, node, "qmcreate", strconv.FormatInt(vmid, 10), func() (string, error) {
				return c.CreateVM(ctx, node, vmid, opts)
			})
			accepted = accepted || perr == nil
			return upid, perr
		})
		if err == nil || accepted || fixed || attempt >= 4 || !strings.Contains(err.Error(), "already exists") {
			return vmid, accepted, err
		}
		tflog.Info(ctx, "VM id taken meanwhile, allocating another", map[string]any{"vmid": vmid})
	}
}

// createFailed handles a failed create (err) of VM vmid: true when it
// adopted the VM the failed task left complete (warned), else false after
// diagnosing the failure and cleaning up what provably is this create's.
func createFailed(ctx context.Context, c *pve.Client, node string, vmid int64, accepted bool, err error, diags *diag.Diagnostics) bool {
	// PVE reserves the id with a `lock: create` config before the
	// worker and unlinks it when createfn dies (qemu-server create_vm),
	// also after write_config, leaving the disks it allocated (freed
	// here). Only a killed worker leaves a config: still locked
	// 'create' before write_config (removed, so the next apply creates
	// the VM), complete after it (this create's, adopted). A VM that
	// existed before (PVE refused the POST) is never touched.
	if !accepted || !framework.FailedTask(err) {
		framework.AddUnable(diags, "Create", "VM", vmLabel(vmid), err)
		return false
	}
	lock, found := vmLock(ctx, c, node, vmid)
	// The id is free again once the worker unlinked the config, so the
	// config read may be another create's (a parallel apply, the GUI):
	// it is this one's only when no later create or restore task of
	// the id started before that read (the task list is read after).
	// The same holds for the disks an unlinked create left.
	other, lerr := laterCreateTask(ctx, c, node, vmid, err)
	if found && (other != "" || lerr != nil) {
		framework.AddUnable(diags, "Create", "VM", vmLabel(vmid), notThisCreate(err, node, vmid, other, lerr))
		return false
	}
	switch {
	case found && lock == "":
		framework.WarnAdopted(diags, "VM", vmLabel(vmid), err)
		return true
	case found && lock == "create":
		framework.AddUnable(diags, "Create", "VM", vmLabel(vmid), fmt.Errorf("%w\n\n%s", err, removeReservedVM(ctx, c, node, vmid)))
		return false
	default:
		if left := freeOrphanedDisks(ctx, c, node, vmid, err, other, lerr); left != "" {
			err = fmt.Errorf("%w\n\n%s", err, left)
		}
		framework.AddUnable(diags, "Create", "VM", vmLabel(vmid), err)
		return false
	}
}

// powerReachedAfterFailure reports whether a start or shutdown whose task
// failed (err) left the VM as asked all the same (its worker died after
// the VM came up or went down), and then warns: that is the state the
// plan wanted, not a failure to tell as one.
func powerReachedAfterFailure(ctx context.Context, c *pve.Client, node string, vmid int64, run bool, err error, diags *diag.Diagnostics) bool {
	if !framework.FailedTask(err) {
		return false
	}
	st, serr := c.VMStatus(ctx, node, vmid)
	if serr != nil || st.Running() != run {
		return false
	}
	what := map[bool]string{true: "runs", false: "is stopped"}[run]
	diags.AddWarning(fmt.Sprintf("VM %d %s although its task failed", vmid, what),
		fmt.Sprintf("PVE's task failed after the VM's state changed: the VM %s as planned.\n\n%v", what, err))
	return true
}

// laterCreateTask returns the UPID of a qmcreate or qmrestore task of
// vmid on node that started since the failed create task (taskErr) and is
// not it: whatever config that id has now is that task's.
func laterCreateTask(ctx context.Context, c *pve.Client, node string, vmid int64, taskErr error) (string, error) {
	var te *pve.TaskError
	if !errors.As(taskErr, &te) {
		return "", errors.New("the failed create task is not known")
	}
	for _, typ := range []string{"qmcreate", "qmrestore"} {
		tasks, err := c.TasksSince(ctx, node, typ, strconv.FormatInt(vmid, 10), te.UPID.StartTime)
		if err != nil {
			return "", err
		}
		for _, u := range tasks {
			if u.Raw != te.UPID.Raw {
				return u.Raw, nil
			}
		}
	}
	return "", nil
}

// createdDiskRE is create_disks' log line for each disk it allocated; the
// drive string starts with the volid.
var createdDiskRE = regexp.MustCompile(`^\w+: successfully created disk '([^',]+)`)

// freeOrphanedDisks frees the disks a failed create task (taskErr) left
// with no config: qemu-server frees them only on errors up to write_config,
// so a worker that died after it (add_vm_to_pool, create_ifaces_ipams_ips)
// left volumes no VM owns. They are provably this create's: its task log
// names them as allocated, PVE reserved the id for it (no config before),
// no config has it now and no later create or restore task (other, or
// lerr when that is unknown) can have taken them. It says what it did or
// what is left to do by hand ("" when the task allocated nothing).
func freeOrphanedDisks(ctx context.Context, c *pve.Client, node string, vmid int64, taskErr error, other string, lerr error) string {
	var te *pve.TaskError
	if !errors.As(taskErr, &te) {
		return ""
	}
	var vols []string
	for _, line := range te.Log {
		if m := createdDiskRE.FindStringSubmatch(line); m != nil {
			vols = append(vols, m[1])
		}
	}
	if len(vols) == 0 {
		return ""
	}
	byHand := func(vs []string) string {
		cmds := make([]string, 0, len(vs))
		for _, v := range vs {
			cmds = append(cmds, "pvesm free "+v)
		}
		return fmt.Sprintf("Check that no VM uses them, then remove them on node %s: %s", node, strings.Join(cmds, "; "))
	}
	switch {
	case other != "":
		return fmt.Sprintf("PVE removed VM %d's config but left the disks the task allocated (%s); task %s has used VM id %d since, so they are left alone. %s",
			vmid, strings.Join(vols, ", "), other, vmid, byHand(vols))
	case lerr != nil:
		return fmt.Sprintf("PVE removed VM %d's config but left the disks the task allocated (%s); whether another task used VM id %d since could not be told (%v), so they are left alone. %s",
			vmid, strings.Join(vols, ", "), vmid, lerr, byHand(vols))
	}
	var left []string
	var errs []string
	for _, v := range vols {
		upid, derr := c.DeleteVolume(ctx, node, v)
		if _, derr = c.Await(ctx, upid, derr); derr != nil {
			left = append(left, v)
			errs = append(errs, derr.Error())
		}
	}
	if len(left) > 0 {
		return fmt.Sprintf("PVE removed VM %d's config but left the disks the task allocated; freeing %s failed (%s). %s",
			vmid, strings.Join(left, ", "), strings.Join(errs, "; "), byHand(left))
	}
	return fmt.Sprintf("PVE removed VM %d's config but left the disks the task allocated (%s): the provider freed them, so nothing of this create is left.",
		vmid, strings.Join(vols, ", "))
}

// notThisCreate is the failed create's error when VM vmid's config on
// node cannot be told to be this create's (another task made it, or the
// task list could not be read): it is left alone.
func notThisCreate(err error, node string, vmid int64, other string, lerr error) error {
	if other != "" {
		return fmt.Errorf("%w\n\nVM id %d was free again after this create's task failed, and task %s on node %s has used it since: "+
			"that VM is not this create's and is left alone. Apply again to create the VM with another id (or set vmid)", err, vmid, other, node)
	}
	return fmt.Errorf("%w\n\nWhether a VM %d on node %s is this create's could not be told (reading the node's tasks failed: %w); "+
		"it is left alone. If VM %d is this create's half VM (locked 'create'), remove it with qm destroy %d --skiplock --purge and apply again",
		err, vmid, node, lerr, vmid, vmid)
}

// vmLock returns the VM's config lock and whether the config exists.
func vmLock(ctx context.Context, c *pve.Client, node string, vmid int64) (string, bool) {
	cfg, err := c.VMConfig(ctx, node, vmid, false)
	if err != nil {
		return "", false
	}
	return cfg.Values["lock"], true
}

// removeReservedVM destroys the config a killed create worker left locked
// 'create' (only root@pam may skip the lock) and says what it did, or how
// to do it by hand.
func removeReservedVM(ctx context.Context, c *pve.Client, node string, vmid int64) string {
	by := fmt.Sprintf("Remove it on node %s (qm destroy %d --skiplock --purge) and apply again.", node, vmid)
	if !c.IsRootTicket() {
		return fmt.Sprintf("The create task left VM %d's config locked 'create' (the worker was killed before it wrote the config); "+
			"PVE lets only root@pam destroy a locked VM. %s", vmid, by)
	}
	if _, err := c.AwaitVMTaskOf(ctx, node, "qmdestroy", vmid, func() (string, error) { return c.DeleteReservedVM(ctx, node, vmid) }); err != nil {
		return fmt.Sprintf("The create task left VM %d's config locked 'create', and removing it failed: %v. %s", vmid, err, by)
	}
	return fmt.Sprintf("The create task left VM %d's config locked 'create' (the worker was killed before it wrote the config); "+
		"the provider removed it, so the next apply creates the VM.", vmid)
}

// readInto reads the VM back into st (on the node it moved to, if a
// migration took it away from node), warning about pending changes.
func (r *vmResource) readInto(ctx context.Context, node string, vmid int64, prior *vmResourceModel, keepNode bool, st *tfsdk.State, diags *diag.Diagnostics) {
	m, err := r.readFollowing(ctx, node, vmid, &prior.vmModel, keepNode, true)
	setReadBack(ctx, vmid, m, err, prior, st, diags)
}

// setReadBack puts a read-back (m, or its error) into st, warning about
// pending changes.
func setReadBack(ctx context.Context, vmid int64, m *vmModel, err error, prior *vmResourceModel, st *tfsdk.State, diags *diag.Diagnostics) {
	if err != nil {
		framework.AddUnable(diags, "Read", "VM", vmLabel(vmid), err)
		return
	}
	out := vmResourceModel{vmModel: *m, Timeouts: prior.Timeouts}
	var pending []string
	diags.Append(out.PendingChanges.ElementsAs(ctx, &pending, false)...)
	if len(pending) > 0 && out.Started.ValueBool() {
		diags.AddWarning(fmt.Sprintf("VM %d has changes waiting for a restart", vmid),
			fmt.Sprintf("PVE cannot apply %s to the running VM; they take effect at its next restart (shutdown and start, or "+
				"reboot from PVE, not from inside the guest). pending_changes lists them.", strings.Join(pending, ", ")))
	}
	diags.Append(st.Set(ctx, &out)...)
}

// readFollowing is readVM on node, or on the node a migration took the VM
// to meanwhile.
func (r *vmResource) readFollowing(ctx context.Context, node string, vmid int64, prior *vmModel, keepNode, fresh bool) (*vmModel, error) {
	var m *vmModel
	_, err := onVMNode(ctx, r.PD, vmid, node, func(c *pve.Client, node string) error {
		var err error
		m, err = readVM(ctx, r.PD, c, node, vmid, prior, keepNode, fresh)
		return err
	})
	return m, err
}

func (r *vmResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior vmResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	vmid, err := strconv.ParseInt(prior.ID.ValueString(), 10, 64)
	if err != nil {
		resp.Diagnostics.AddError("Invalid VM id in state", fmt.Sprintf("id %q is not a VM id", prior.ID.ValueString()))
		return
	}
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	node, err := findVM(ctx, r.PD, vmid, prior.Node.ValueString())
	if errors.Is(err, pve.ErrNotFound) {
		tflog.Warn(ctx, "VM is gone; removing it from the state", map[string]any{"vmid": vmid})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM", vmLabel(vmid), err)
		return
	}
	m, err := r.readFollowing(ctx, node, vmid, &prior.vmModel, false, false)
	if errors.Is(err, pve.ErrNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM", vmLabel(vmid), err)
		return
	}
	out := vmResourceModel{vmModel: *m, Timeouts: prior.Timeouts}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

// locate returns the node that has the VM: the node in the state when its
// config is there (also for standalone nodes, whose VMs the main
// endpoint's resource list does not show), else wherever the cluster's
// resource list has it (HA or someone else migrated it); ErrNotFound when
// neither has it. With settle, while a migration holds the VM, it waits
// for its end and returns the node the VM is on then (a read needs not).
func (r *vmResource) locate(ctx context.Context, vmid int64, known string, settle bool) (string, error) {
	if known != "" {
		if c, err := r.PD.NodeClient(ctx, known); err == nil {
			cfg, err := c.VMConfig(ctx, known, vmid, true)
			if err == nil && (!settle || cfg.Values["lock"] != "migrate") {
				return known, nil
			}
			if err != nil && !errors.Is(err, pve.ErrNotFound) {
				return "", err
			}
		}
	}
	row, err := r.PD.Client.VMResource(ctx, vmid)
	if err != nil {
		return "", err
	}
	if settle && migrating(row) {
		return settledNode(ctx, r.PD.Client, vmid)
	}
	return row.Node, nil
}

func (r *vmResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state vmResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 30*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vmid := state.VMID.ValueInt64()
	node := state.Node.ValueString()
	target := plan.Node.ValueString()
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	// One writer per VM in this provider: its pve_vm_disk resources take
	// the same lock.
	defer r.PD.NodeLocks.Lock(VMLockKey(vmid))()
	forgetVM(r.PD, vmid) // this write changes what the run last read of it
	if n, err := r.locate(ctx, vmid, node, true); err == nil {
		node = n
	}
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	// Migrate first, so the config is then written where the VM lives. A
	// VM that HA moved stays where HA put it unless the plan changes node.
	// The plan decides: a plan made while HA had moved the VM leaves it
	// there, also when the VM's HA resource is gone by now (destroyed in
	// the same apply, before this update), and `node` stays as planned.
	keepNode := plan.Node.Equal(state.Node) && state.haMoved()
	if target != node && !keepNode {
		st, err := c.VMStatus(ctx, node, vmid)
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Migrate", "VM", vmLabel(vmid), err)
			return
		}
		if !haOwnsPlacement(st) || !plan.Node.Equal(state.Node) {
			if !r.migrate(ctx, c, node, target, vmid, st.Running(), &state, resp) {
				return
			}
			node = target
		}
	}
	w := plan.write(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	// The config and the power state, following the VM when a migration
	// (HA's) takes it to another node meanwhile.
	node, err := onVMNode(ctx, r.PD, vmid, node, func(c *pve.Client, node string) error {
		return writeVMConfig(ctx, c, node, vmid, w)
	})
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "VM", vmLabel(vmid), err)
		r.readInto(ctx, node, vmid, &state, keepNode, &resp.State, &resp.Diagnostics)
		return
	}
	if !plan.Started.Equal(state.Started) || plan.Started.ValueBool() {
		node, err = onVMNode(ctx, r.PD, vmid, node, func(c *pve.Client, node string) error {
			err := setPower(ctx, c, node, vmid, plan.Started.ValueBool())
			if err != nil && powerReachedAfterFailure(ctx, c, node, vmid, plan.Started.ValueBool(), err, &resp.Diagnostics) {
				return nil
			}
			return err
		})
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "VM", vmLabel(vmid), err)
		}
	}
	r.readInto(ctx, node, vmid, &plan, keepNode, &resp.State, &resp.Diagnostics)
}

// migrate moves the VM from node to target (through HA when HA manages
// it) and reports the migration; false when it failed (diagnosed).
func (r *vmResource) migrate(ctx context.Context, c *pve.Client, node, target string, vmid int64, online bool, state *vmResourceModel, resp *resource.UpdateResponse) bool {
	tflog.Info(ctx, "migrating VM", map[string]any{"vmid": vmid, "from": node, "to": target, "online": online})
	migStart := time.Now()
	migRes, err := c.AwaitVMTaskOf(ctx, node, "qmigrate|hamigrate", vmid, func() (string, error) {
		return c.MigrateVM(ctx, node, vmid, pve.MigrateVMRequest{Target: target, Online: online, WithLocalDisks: online})
	})
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Migrate", "VM", vmLabel(vmid), err)
		r.readInto(ctx, node, vmid, state, false, &resp.State, &resp.Diagnostics)
		return false
	}
	if err := waitOnNode(ctx, r.PD.Client, vmid, target); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Migrate", "VM", vmLabel(vmid), err)
		return false
	}
	took := time.Since(migStart)
	// The report quotes the task's closing line: its log, read only here
	// (WaitTask reads the log of failed and warning tasks only).
	if err := c.ReadTaskLog(ctx, migRes); err != nil {
		tflog.Debug(ctx, "reading the migration's task log failed", map[string]any{"error": err.Error()})
	}
	addMigrationReport(&resp.Diagnostics, vmid, node, target, online, took, migRes)
	return true
}

// vmWrite is what an update writes: the planned options, CD drives
// (cdromsManaged false: left alone) and boot order (bootSet false: left
// alone).
type vmWrite struct {
	want          desiredConfig
	cdroms        map[string]string
	cdromsManaged bool
	boot          []string
	bootSet       bool
}

func (m *vmModel) write(ctx context.Context, diags *diag.Diagnostics) vmWrite {
	w := vmWrite{want: m.desired(ctx, diags), bootSet: !m.BootOrder.IsNull()}
	w.cdroms, w.cdromsManaged = m.cdroms()
	if !m.BootOrder.IsNull() && !m.BootOrder.IsUnknown() {
		diags.Append(m.BootOrder.ElementsAs(ctx, &w.boot, false)...)
	}
	return w
}

// writeVMConfig reads, diffs and writes with the digest: a concurrent
// change (another apply, the GUI) makes PVE refuse, and the diff is made
// again, as after a lost answer. A write that adds a CD drive to a VM
// with a boot order is followed by one more round when the order is
// planned: PVE appends the drive to the order (and may put that over an
// order sent in the same write).
func writeVMConfig(ctx context.Context, c *pve.Client, node string, vmid int64, w vmWrite) error {
	for attempt := 0; ; attempt++ {
		cfg, err := c.VMConfig(ctx, node, vmid, false)
		if err != nil {
			return err
		}
		set, del, err := configUpdate(vmid, cfg, w.want, w.cdroms, w.cdromsManaged, w.boot, w.bootSet)
		if err != nil {
			return err
		}
		if len(set) == 0 && len(del) == 0 {
			return nil
		}
		tflog.Info(ctx, "updating VM config", map[string]any{"vmid": vmid, "set": sortedParamKeys(set), "delete": del})
		err = c.UpdateVMConfigSync(ctx, node, vmid, pve.VMConfigUpdate{Set: set, Delete: del, Digest: cfg.Digest})
		if err == nil && w.bootSet && attempt < 3 && cdromJoinsBoot(cfg.Values["boot"], set) {
			continue
		}
		// A lost answer is read back by the next round's diff: done, the
		// diff is empty; not done, it is sent again with a fresh digest.
		if err == nil || attempt >= 3 || !strings.Contains(err.Error(), "checksum mismatch") && !pve.LostAnswer(err) {
			return err
		}
	}
}

func sortedParamKeys(p pve.Params) []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// setPower starts or shuts the VM down unless it already is in that state.
func setPower(ctx context.Context, c *pve.Client, node string, vmid int64, run bool) error {
	st, err := c.VMStatus(ctx, node, vmid)
	if err != nil {
		return err
	}
	switch {
	case run && !st.Running():
		tflog.Info(ctx, "starting VM", map[string]any{"vmid": vmid})
		_, err = c.AwaitVMTaskOf(ctx, node, "qmstart|hastart", vmid, func() (string, error) { return c.StartVM(ctx, node, vmid) })
	case !run && st.Running():
		tflog.Info(ctx, "shutting VM down", map[string]any{"vmid": vmid})
		_, err = c.AwaitVMTaskOf(ctx, node, "qmshutdown|hastop", vmid, func() (string, error) { return c.ShutdownVM(ctx, node, vmid, true, 0) })
	}
	return err
}

func (r *vmResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state vmResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 20*time.Minute)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vmid := state.VMID.ValueInt64()
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	forgetVM(r.PD, vmid)
	node, err := r.locate(ctx, vmid, state.Node.ValueString(), true)
	if errors.Is(err, pve.ErrNotFound) {
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "VM", vmLabel(vmid), err)
		return
	}
	// Checked, stopped and destroyed where the VM is; when a migration
	// (HA's) takes it elsewhere meanwhile, again there.
	_, err = onVMNode(ctx, r.PD, vmid, node, func(c *pve.Client, node string) error {
		return destroyVM(ctx, c, node, vmid, state.DestroyDisks.ValueBool())
	})
	if err != nil && !errors.Is(err, pve.ErrNotFound) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "VM", vmLabel(vmid), err)
	}
}

// destroyVM refuses a protected VM and one that lists volumes without
// destroyDisks, stops it and destroys it.
func destroyVM(ctx context.Context, c *pve.Client, node string, vmid int64, destroyDisks bool) error {
	cfg, err := c.VMConfig(ctx, node, vmid, false)
	if err != nil {
		return err
	}
	if cfg.Bool("protection", false) {
		return errors.New("protection is on in PVE. Set protection = false and apply that before destroying the VM")
	}
	if vols := ownedVolumes(cfg); len(vols) > 0 && !destroyDisks {
		return fmt.Errorf("the VM still lists %s, which PVE would delete together with the VM. Move or detach what you want to keep "+
			"(a detached disk stays as unusedN and is deleted too), or set destroy_disks = true and apply before destroying",
			strings.Join(vols, ", "))
	}
	if err := setPowerOff(ctx, c, node, vmid); err != nil {
		return err
	}
	tflog.Info(ctx, "destroying VM", map[string]any{"vmid": vmid, "node": node})
	_, err = c.AwaitVMTaskOf(ctx, node, "qmdestroy", vmid, func() (string, error) { return c.DeleteVM(ctx, node, vmid, true, false) })
	return err
}

// setPowerOff stops a running VM at once: it is about to be destroyed.
func setPowerOff(ctx context.Context, c *pve.Client, node string, vmid int64) error {
	st, err := c.VMStatus(ctx, node, vmid)
	if err != nil || !st.Running() {
		return err
	}
	_, err = c.AwaitVMTaskOf(ctx, node, "qmstop|hastop", vmid, func() (string, error) { return c.StopVM(ctx, node, vmid) })
	return err
}

// ownedVolumes lists the volumes in the config (disks that are not CD
// drives, and unusedN), "slot (volume)".
func ownedVolumes(cfg *pve.VMConfig) []string {
	var out []string
	for k, d := range cfg.Drives() {
		if !d.IsCdrom() && d.Storage() != "" {
			out = append(out, fmt.Sprintf("%s (%s)", k, d.Volume))
		}
	}
	for k, v := range cfg.Unused() {
		out = append(out, fmt.Sprintf("%s (%s)", k, v))
	}
	sort.Strings(out)
	return out
}

// ImportState takes "<vmid>" or "<node>/<vmid>"; Read finds the node.
func (r *vmResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if _, after, ok := strings.Cut(id, "/"); ok {
		id = after
	}
	vmid, err := strconv.ParseInt(id, 10, 64)
	if err != nil || vmid < 100 {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import a VM by its id, such as 100 (or <node>/100); got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), strconv.FormatInt(vmid, 10))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("vmid"), vmid)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("destroy_disks"), false)...)
}
