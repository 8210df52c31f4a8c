package ceph

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	osdTypeName          = "pve_ceph_osd"
	defaultOSDCreateWait = 30 * time.Minute
	defaultOSDDeleteWait = 60 * time.Minute
	// osdUpWait bounds the wait for a new OSD to come up after the create
	// task (the daemon starts and reports to the monitors).
	osdUpWait = 2 * time.Minute
)

var (
	_ resource.Resource                   = (*osdResource)(nil)
	_ resource.ResourceWithConfigure      = (*osdResource)(nil)
	_ resource.ResourceWithImportState    = (*osdResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*osdResource)(nil)
	_ resource.ResourceWithValidateConfig = (*osdResource)(nil)

	devPathRE     = regexp.MustCompile(`^/dev/[A-Za-z0-9!_./-]+$`)
	deviceClassRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// NewOSDResource is the constructor the provider registers.
func NewOSDResource() resource.Resource {
	return &osdResource{ResourceBase: framework.ResourceBase{TypeName: osdTypeName}}
}

type osdResource struct{ framework.ResourceBase }

func (r *osdResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Ceph OSD on a disk of a node (`pveceph osd create`; GUI: Node > Ceph > OSD > Create: OSD). " +
			"With `osds_per_device` greater than 1 the resource is all OSDs on that disk.",
		Attributes: osdAttributes(),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

// osdAttributes are the OSD's disks, its settings and what Ceph reports.
func osdAttributes() map[string]schema.Attribute {
	attrs := osdDiskAttributes()
	maps.Copy(attrs, osdCreateAttributes())
	maps.Copy(attrs, osdReportedAttributes())
	return attrs
}

// osdDiskAttributes are the node and the disks the OSD and its block.db
// and block.wal are on, with their sizes.
func osdDiskAttributes() map[string]schema.Attribute {
	devPath := stringvalidator.RegexMatches(devPathRE, "must be a device path such as /dev/sdb or /dev/nvme0n1")
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true, MarkdownDescription: "`<node>/<osd id>` (the lowest id when the disk has several OSDs).",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"node": framework.NodeAttribute("The node the disk is in, such as `z2g4a`. Cannot change (refused at plan).", framework.NodeInPlace),
		"device": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "The disk for the OSD's data, as PVE lists it (`devpath` of `pve_node_disks`), such as `/dev/sdb`. " +
				"PVE refuses a disk in use (partitions, LVM, a file system); wipe it first if its content is expendable. Cannot change (refused at plan).",
			Validators: []validator.String{devPath},
		},
		"db_device": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "A faster disk for the OSD's RocksDB (block.db), such as a datacenter NVMe in front of HDDs. PVE adds an LV " +
				"to it (or a partition on a GPT disk); several OSDs can share it. PVE reports the disk, so give the whole disk. Cannot change (refused at plan).",
			Validators: []validator.String{devPath},
		},
		"db_size": schema.Float64Attribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Size of block.db in GiB (at least 1). Default: `bluestore_block_db_size` from the Ceph configuration, else 10 % " +
				"of the OSD disk; PVE reports what it created. Only with `db_device`. Cannot change (refused at plan).",
			Validators:    []validator.Float64{float64validator.AtLeast(1)},
			PlanModifiers: []planmodifier.Float64{float64planmodifier.UseStateForUnknown()},
		},
		"wal_device": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "A faster disk for the OSD's write-ahead log (block.wal). Only worth it on a disk faster than `db_device`. Cannot change (refused at plan).",
			Validators:          []validator.String{devPath},
		},
		"wal_size": schema.Float64Attribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Size of block.wal in GiB (at least 0.5). Default: `bluestore_block_wal_size`, else 1 % of the OSD disk. Only with `wal_device`. Cannot change (refused at plan).",
			Validators:          []validator.Float64{float64validator.AtLeast(0.5)},
			PlanModifiers:       []planmodifier.Float64{float64planmodifier.UseStateForUnknown()},
		},
	}
}

// osdCreateAttributes are the settings fixed when the OSD is created, and
// force, which only the destroy reads.
func osdCreateAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"crush_device_class": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "CRUSH device class, such as `ssd`, `hdd` or `nvme`. Default: what Ceph detects (`ssd` for SATA SSDs). " +
				"PVE's API cannot change it later (refused at plan).",
			Validators:    []validator.String{stringvalidator.RegexMatches(deviceClassRE, "must be a device class name such as ssd")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"encrypted": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Encrypt the OSD with dm-crypt (LUKS); the key is kept in the monitors' config-key store. Default `false`. Cannot change (refused at plan).",
		},
		"osds_per_device": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(1),
			MarkdownDescription: "How many OSDs to put on the disk (`ceph-volume lvm batch`): more than 1 only for fast NVMe disks. " +
				"Not with `db_device` or `wal_device`. Default 1. Cannot change (refused at plan).",
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
		"force": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "**Dangerous.** Destroy without asking Ceph: the OSD is marked out, stopped and destroyed at once, even when " +
				"Ceph still needs its data or could never move it. PGs that had a copy on it are degraded until Ceph recovers from the other " +
				"copies; PGs with no other copy (pool size 1, or other OSDs down) lose data. Only for an OSD whose disk failed or whose data is " +
				"expendable. Default `false`. Changing it touches nothing in PVE; it must be in state (applied) before the destroy.",
		},
	}
}

// osdReportedAttributes are what Ceph reports about the OSD.
func osdReportedAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"osd_id": schema.Int64Attribute{
			Computed: true, MarkdownDescription: "The OSD id (`osd.<id>`); the lowest one when the disk has several.",
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
		},
		"osd_ids": schema.ListAttribute{
			ElementType: types.Int64Type, Computed: true,
			MarkdownDescription: "Every OSD id on the disk (one unless `osds_per_device` is greater than 1).",
			PlanModifiers:       []planmodifier.List{listplanmodifier.UseStateForUnknown()},
		},
		"uuid": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "The OSD's fsid, which ceph-volume puts in the name of its data LV (`osd-block-<fsid>`). Read when the OSD " +
				"is created or imported (reading it runs ceph-volume on the node) and again only if the disk changes; the destroy checks it, " +
				"so an OSD that merely got the same id is never destroyed.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"up": schema.BoolAttribute{
			Computed: true, MarkdownDescription: "Whether the OSD daemon runs (Ceph's `up`); for several OSDs, all of them.",
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
		},
		"in": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "Whether the OSD takes data (Ceph's `in`). A destroy that timed out or was interrupted leaves it `false`; " +
				"to keep the OSD, mark it in again (`ceph osd in <id>`).",
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
		},
	}
}

func (r *osdResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m osdModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	known := func(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }
	if known(m.OSDsPerDevice) && m.OSDsPerDevice.ValueInt64() > 1 {
		for _, a := range []struct {
			name string
			v    types.String
		}{{"db_device", m.DBDevice}, {"wal_device", m.WALDevice}} {
			if !a.v.IsNull() {
				resp.Diagnostics.AddAttributeError(path.Root(a.name), "osds_per_device excludes "+a.name,
					fmt.Sprintf("PVE creates several OSDs per disk with `ceph-volume lvm batch`, which takes no separate DB/WAL device. Remove %s, or set osds_per_device = 1.", a.name))
			}
		}
	}
	if !m.DBSize.IsNull() && m.DBDevice.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("db_size"), "db_size needs db_device", "Set db_device to the disk for block.db, or remove db_size.")
	}
	if !m.WALSize.IsNull() && m.WALDevice.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("wal_size"), "wal_size needs wal_device", "Set wal_device to the disk for block.wal, or remove wal_size.")
	}
	seen := map[string]string{}
	for _, a := range []struct {
		name string
		v    types.String
	}{{"device", m.Device}, {"db_device", m.DBDevice}, {"wal_device", m.WALDevice}} {
		if !known(a.v) {
			continue
		}
		if other, ok := seen[a.v.ValueString()]; ok {
			resp.Diagnostics.AddAttributeError(path.Root(a.name), "One disk for two roles",
				fmt.Sprintf("%s and %s are both %s; PVE refuses one disk for more than one role. Leave %s out to keep it on the data disk.", other, a.name, a.v.ValueString(), a.name))
		}
		seen[a.v.ValueString()] = a.name
	}
}

// requireRoot fails clearly when the provider uses an API token.
func requireRoot(pd *framework.ProviderData, diags *diag.Diagnostics, what string) bool {
	if pd == nil || pd.Client == nil || pd.Client.IsRootTicket() {
		return true
	}
	diags.AddError(what+" needs root@pam",
		fmt.Sprintf("PVE allows only root@pam itself to create and destroy Ceph OSDs and refuses every API token (the provider authenticates as %q). "+
			"Configure a provider with username = \"root@pam\" and its password (for example an aliased provider block used by the pve_ceph_osd resources).", pd.Client.AuthUser()))
	return false
}

// ModifyPlan refuses at plan what would need a new OSD, and a token where
// root@pam is needed.
func (r *osdResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	switch {
	case req.Plan.Raw.IsNull() && req.State.Raw.IsNull():
		return
	case req.Plan.Raw.IsNull(): // destroy
		var st osdModel
		resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
		requireRoot(r.PD, &resp.Diagnostics, "Destroying "+osdTypeName+" "+st.ID.ValueString())
		if st.Force.ValueBool() {
			resp.Diagnostics.AddWarning(fmt.Sprintf("%s will be destroyed without draining (force = true)", osdNames(st.ids(ctx))),
				"Ceph is not asked whether its data exists elsewhere; PGs with no other copy lose data.")
		}
		checkOSDDestroySet(ctx, r.PD, &st, &resp.Diagnostics)
		return
	case req.State.Raw.IsNull(): // create
		requireRoot(r.PD, &resp.Diagnostics, "Creating "+osdTypeName)
		var plan osdModel
		resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
		if resp.Diagnostics.HasError() {
			return
		}
		checkOSDRefsAtPlan(ctx, r.PD, &plan, &resp.Diagnostics)
		// Sizes only exist with their device.
		if plan.DBDevice.IsNull() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("db_size"), types.Float64Null())...)
		}
		if plan.WALDevice.IsNull() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("wal_size"), types.Float64Null())...)
		}
		r.warnDiskAtPlan(ctx, &plan, &resp.Diagnostics)
		return
	}
	var st, plan osdModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	noteOSDInState(r.PD, &st)
	name := osdNames(st.ids(ctx))
	refuse := func(attrName string, old, want attr.Value) {
		if want.IsUnknown() || old.IsNull() || old.IsUnknown() || old.Equal(want) {
			return
		}
		framework.RefuseChange(&resp.Diagnostics, attrName, "a Ceph OSD",
			fmt.Sprintf("PVE reports %s = %s for %s on %s; the configuration says %s. An OSD's %s is fixed when it is created: changing it means draining "+
				"and destroying %s and creating another, which this provider never does as a side effect of an attribute change.\n\n"+
				"If PVE's value is right (something changed outside Terraform; the kernel can name disks differently after a reboot, and Ceph "+
				"follows the disk), set %s = %s. To rebuild the OSD with the same settings run `terraform apply -replace=<address>`. To move it "+
				"to other settings, remove the resource and apply (the OSD is drained and destroyed safely), then declare it with the new values.",
				attrName, show(old), name, st.Node.ValueString(), show(want), attrName, name, attrName, show(old)))
	}
	refuse("node", st.Node, plan.Node)
	refuse("device", st.Device, plan.Device)
	refuse("db_device", st.DBDevice, plan.DBDevice)
	refuse("wal_device", st.WALDevice, plan.WALDevice)
	refuse("crush_device_class", st.CrushDeviceClass, plan.CrushDeviceClass)
	refuse("encrypted", st.Encrypted, plan.Encrypted)
	refuse("osds_per_device", st.OSDsPerDevice, plan.OSDsPerDevice)
	refuse("db_size", st.DBSize, plan.DBSize)
	refuse("wal_size", st.WALSize, plan.WALSize)
	// A device added where PVE reports none is a change too.
	for _, a := range []struct {
		name     string
		old, new types.String
	}{{"db_device", st.DBDevice, plan.DBDevice}, {"wal_device", st.WALDevice, plan.WALDevice}} {
		if a.old.IsNull() && !a.new.IsNull() && !a.new.IsUnknown() {
			framework.RefuseChange(&resp.Diagnostics, a.name, "a Ceph OSD",
				fmt.Sprintf("%s on %s has no separate %s (PVE reports none); the configuration asks for %s. That needs a new OSD, which this provider never "+
					"creates as a side effect. Remove %s, or rebuild the OSD: remove the resource and apply, then declare it again.",
					name, st.Node.ValueString(), a.name, a.new.ValueString(), a.name))
		}
	}
}

func show(v attr.Value) string {
	switch x := v.(type) {
	case types.String:
		if x.IsNull() {
			return "null"
		}
		return strconv.Quote(x.ValueString())
	case types.Float64:
		if x.IsNull() {
			return "null"
		}
		return strconv.FormatFloat(x.ValueFloat64(), 'f', -1, 64)
	}
	return v.String()
}

func (r *osdResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.Client(&resp.Diagnostics) == nil || !requireRoot(r.PD, &resp.Diagnostics, "Creating "+osdTypeName) {
		return
	}
	var plan osdModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultOSDCreateWait)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	// PVE's disk actions take a node-wide lock for 10 s only: one OSD
	// create per node at a time.
	unlock := r.PD.NodeLocks.Lock("disks/" + node)
	defer unlock()

	if !preflightOSDCreate(ctx, c, &plan, &resp.Diagnostics) {
		return
	}
	upid, taskErr := r.runOSDCreate(ctx, c, &plan)
	// ceph-volume is the worker's last step (API2/Ceph/OSD.pm createosd),
	// so a failed task whose disk, free before, now holds an OSD made it.
	if taskErr != nil && !framework.FailedTask(taskErr) {
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph OSD", osdWhat(&plan), taskErr)
		return
	}
	ids, found := createdOSDs(ctx, c, &plan, upid, taskErr, &resp.Diagnostics)
	if !found {
		return
	}
	waitUp(ctx, c, node, ids, &resp.Diagnostics)
	l, d := types.ListValueFrom(ctx, types.Int64Type, ids)
	resp.Diagnostics.Append(d...)
	plan.OSDIDs, plan.OSDID = l, types.Int64Value(ids[0])
	plan.ID = types.StringValue(fmt.Sprintf("%s/%d", node, ids[0]))
	plan.UUID = types.StringNull()
	// Save the OSD before reading it back, so a failed read cannot orphan it
	// (values only the read-back knows are null until then).
	resp.Diagnostics.Append(resp.State.Set(ctx, createdBeforeReadBack(plan))...)
	if !r.readOSD(ctx, &plan, false, &resp.Diagnostics) {
		if !resp.Diagnostics.HasError() {
			framework.AddUnable(&resp.Diagnostics, "Create", "Ceph OSD", osdWhat(&plan), fmt.Errorf("the OSD vanished right after it was created"))
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// osdWhat names a planned OSD in diagnostics: "<node> <device>".
func osdWhat(plan *osdModel) string {
	return plan.Node.ValueString() + " " + plan.Device.ValueString()
}

// preflightOSDCreate refuses a device that PVE does not list, that holds
// an OSD already or is in use, and warns about poor disks under the OSD.
func preflightOSDCreate(ctx context.Context, c *pve.Client, plan *osdModel, diags *diag.Diagnostics) bool {
	node, dev, what := plan.Node.ValueString(), plan.Device.ValueString(), osdWhat(plan)
	disks, err := c.Disks(ctx, node, false)
	if err != nil {
		framework.AddUnable(diags, "Create", "Ceph OSD", what, fmt.Errorf("list the disks of %s: %w", node, err))
		return false
	}
	disk := diskByPath(disks, dev)
	switch {
	case disk == nil:
		diags.AddAttributeError(path.Root("device"), "Unable to Create Ceph OSD "+what,
			fmt.Sprintf("Node %s has no disk %s; PVE lists %s.", node, dev, devPaths(disks)))
		return false
	case len(disk.OSDIDs) > 0 || disk.OSDID >= 0:
		id := disk.OSDID
		if len(disk.OSDIDs) > 0 {
			id = disk.OSDIDs[0]
		}
		diags.AddAttributeError(path.Root("device"), "Unable to Create Ceph OSD "+what,
			fmt.Sprintf("%s on %s already holds %s. To manage it, import it: terraform import <address> %s/%d", dev, node, osdName(id), node, id))
		return false
	case disk.Used != "":
		diags.AddAttributeError(path.Root("device"), "Unable to Create Ceph OSD "+what,
			fmt.Sprintf("%s on %s is in use (PVE reports: %s); PVE creates OSDs only on unused disks. If its content is expendable, wipe it "+
				"(GUI: Node > Disks > Wipe Disk) and apply again.", dev, node, disk.Used))
		return false
	}
	if v := judgeDisk(*disk, 0); !v.Suitable {
		diags.AddAttributeWarning(path.Root("device"), fmt.Sprintf("%s on %s is a poor OSD", dev, node),
			fmt.Sprintf("%s (%s): %s. The OSD is created as asked.", dev, disk.Model, strings.Join(v.Reasons, "; ")))
	}
	// block.db and block.wal take the sync writes: a consumer drive there
	// is as bad as one under the data.
	for _, a := range []struct {
		name string
		v    types.String
	}{{"db_device", plan.DBDevice}, {"wal_device", plan.WALDevice}} {
		if x := diskByPath(disks, a.v.ValueString()); x != nil {
			if fam, plp, known := classifyDrive(x.Model); known && !plp {
				diags.AddAttributeWarning(path.Root(a.name), fmt.Sprintf("%s on %s has no power-loss protection", a.v.ValueString(), node),
					fmt.Sprintf("%s (%s) is a consumer drive (%s): every sync write of the OSD goes through its %s, so the OSD is as slow as the drive's sync writes. Measure sync-write IOPS first.",
						a.v.ValueString(), x.Model, fam, strings.TrimSuffix(a.name, "_device")))
			}
		}
	}
	return true
}

func osdCreateRequest(plan *osdModel) pve.CephOSDCreateRequest {
	cr := pve.CephOSDCreateRequest{Dev: plan.Device.ValueString(), DBDev: plan.DBDevice.ValueString(), WALDev: plan.WALDevice.ValueString(),
		DeviceClass: plan.CrushDeviceClass.ValueString(), Encrypted: plan.Encrypted.ValueBool()}
	if !plan.DBSize.IsNull() && !plan.DBSize.IsUnknown() {
		cr.DBDevSizeGiB = plan.DBSize.ValueFloat64()
	}
	if !plan.WALSize.IsNull() && !plan.WALSize.IsUnknown() {
		cr.WALDevSizeGiB = plan.WALSize.ValueFloat64()
	}
	if n := plan.OSDsPerDevice.ValueInt64(); n > 1 {
		cr.OSDsPerDevice = n
	}
	return cr
}

// runOSDCreate runs PVE's create task and returns its UPID and error.
func (r *osdResource) runOSDCreate(ctx context.Context, c *pve.Client, plan *osdModel) (upid string, err error) {
	node, dev := plan.Node.ValueString(), plan.Device.ValueString()
	cr := osdCreateRequest(plan)
	tflog.Info(ctx, "creating Ceph OSD", map[string]any{"node": node, "device": dev})
	// The worker takes PVE::Diskmanage's lock first: a "can't lock file
	// '/run/lock/pve-diskmanage.lck' - got timeout" task did nothing and is
	// started again (AwaitVMTask retries any task that met a lock timeout).
	res, err := c.AwaitVMTask(ctx, func() (string, error) {
		var serr error
		// A lost answer is followed through the worker it started (PVE
		// names it after the device), re-POSTed only when there is none.
		upid, serr = c.StartTask(ctx, node, "cephcreateosd", strings.TrimPrefix(dev, "/dev/"), func() (string, error) {
			return c.CreateCephOSD(ctx, node, cr)
		})
		return upid, serr
	})
	invalidateOSDReads(r.PD, node)
	if res != nil {
		tflog.Debug(ctx, "OSD create task finished", map[string]any{"upid": upid, "exitstatus": res.ExitStatus, "log": strings.Join(res.Log, "\n")})
	}
	return upid, err
}

// createdOSDs are the ids of the OSDs PVE lists on the device after the
// create task, sorted; a failed task that made them anyway is adopted with
// a warning.
func createdOSDs(ctx context.Context, c *pve.Client, plan *osdModel, upid string, taskErr error, diags *diag.Diagnostics) ([]int64, bool) {
	node, dev, what := plan.Node.ValueString(), plan.Device.ValueString(), osdWhat(plan)
	disks, err := c.Disks(ctx, node, false)
	if err != nil {
		if taskErr != nil {
			err = fmt.Errorf("%w; listing the disks after it failed: %w", taskErr, err)
		} else {
			err = fmt.Errorf("the create task succeeded, but listing the disks failed: %w", err)
		}
		framework.AddUnable(diags, "Create", "Ceph OSD", what, err)
		return nil, false
	}
	disk := diskByPath(disks, dev)
	if disk == nil || (len(disk.OSDIDs) == 0 && disk.OSDID < 0) {
		if taskErr == nil {
			taskErr = fmt.Errorf("the create task %s succeeded, but PVE lists no OSD on %s", upid, dev)
		}
		framework.AddUnable(diags, "Create", "Ceph OSD", what, taskErr)
		return nil, false
	}
	if taskErr != nil {
		framework.WarnAdopted(diags, "Ceph OSD", what, taskErr)
	}
	ids := append([]int64(nil), disk.OSDIDs...)
	if len(ids) == 0 {
		ids = []int64{disk.OSDID}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, true
}

// createdBeforeReadBack is the state saved right after the create: the
// values only the read-back knows are null (or false) until then.
func createdBeforeReadBack(plan osdModel) *osdModel {
	if plan.CrushDeviceClass.IsUnknown() {
		plan.CrushDeviceClass = types.StringNull()
	}
	if plan.DBSize.IsUnknown() {
		plan.DBSize = types.Float64Null()
	}
	if plan.WALSize.IsUnknown() {
		plan.WALSize = types.Float64Null()
	}
	plan.Up, plan.In = types.BoolValue(false), types.BoolValue(false)
	return &plan
}

// waitUp waits a little for new OSDs to report to the monitors; a slow
// start is a warning, not a failed create.
func waitUp(ctx context.Context, c *pve.Client, node string, ids []int64, diags *diag.Diagnostics) {
	ctx, cancel := context.WithTimeout(ctx, osdUpWait)
	defer cancel()
	if poll(ctx, 5*time.Second, func() (bool, error) {
		tree, err := c.CephOSDTree(ctx, node)
		return err == nil && upCount(tree, ids) == len(ids), nil // an error: ask again
	}) != nil {
		diags.AddWarning(osdNames(ids)+" is not up yet",
			fmt.Sprintf("PVE created %s on %s, but it did not come up within %s. Check `systemctl status ceph-osd@%d` on the node.", osdNames(ids), node, osdUpWait, ids[0]))
	}
}

func (r *osdResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var st osdModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.readOSD(ctx, &st, true, &resp.Diagnostics) {
		if !resp.Diagnostics.HasError() {
			resp.State.RemoveResource(ctx)
		}
		return
	}
	noteOSDInState(r.PD, &st)
	resp.Diagnostics.Append(resp.State.Set(ctx, &st)...)
}

// Update changes only force and timeouts, which live in state alone;
// everything else was refused at plan.
func (r *osdResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, st osdModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	st.Force, st.Timeouts = plan.Force, plan.Timeouts
	// Values PVE could not report (an import while the node's disks were
	// unreadable) are taken from the configuration; ModifyPlan let them pass.
	if st.Device.IsNull() && !plan.Device.IsUnknown() {
		st.Device = plan.Device
	}
	if st.Encrypted.IsNull() && !plan.Encrypted.IsUnknown() {
		st.Encrypted = plan.Encrypted
	}
	if st.OSDsPerDevice.IsNull() && !plan.OSDsPerDevice.IsUnknown() {
		st.OSDsPerDevice = plan.OSDsPerDevice
	}
	if st.CrushDeviceClass.IsNull() && !plan.CrushDeviceClass.IsUnknown() {
		st.CrushDeviceClass = plan.CrushDeviceClass
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &st)...)
}

func (r *osdResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if r.Client(&resp.Diagnostics) == nil || !requireRoot(r.PD, &resp.Diagnostics, "Destroying "+osdTypeName) {
		return
	}
	var st osdModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := st.Timeouts.Delete(ctx, defaultOSDDeleteWait)
	resp.Diagnostics.Append(d...)
	r.destroyOSD(ctx, &st, timeout, &resp.Diagnostics)
}

// ImportState takes `<node>/<osd id>`; Read fills in the rest from PVE.
func (r *osdResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, idStr, ok := strings.Cut(req.ID, "/")
	id, err := strconv.ParseInt(strings.TrimPrefix(idStr, "osd."), 10, 64)
	ids := []int64{id}
	if ok && node != "" && err != nil && idStr != "" && !strings.HasPrefix(idStr, "osd.") {
		// <node>/<device> (z2g4a/sdb or z2g4a//dev/sdb): the OSD on that
		// disk, from PVE's disk list, so that a lab built by hand can be
		// imported with for_each without knowing which id Ceph gave.
		c := r.NodeClient(ctx, node, &resp.Diagnostics)
		if c == nil {
			return
		}
		ids, err = osdIDsOnDevice(ctx, c, node, idStr)
		if err != nil {
			resp.Diagnostics.AddError("Unable to Import Ceph OSD "+req.ID, err.Error())
			return
		}
		id = ids[0]
	}
	if !ok || node == "" || err != nil || id < 0 {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("Expected <node>/<osd id> or <node>/<device>, such as z2g4a/0 or z2g4a/sdb; got %q.", req.ID))
		return
	}
	l, d := types.ListValueFrom(ctx, types.Int64Type, ids)
	resp.Diagnostics.Append(d...)
	m := osdModel{
		ID: types.StringValue(fmt.Sprintf("%s/%d", node, id)), Node: types.StringValue(node), Device: types.StringNull(),
		DBDevice: types.StringNull(), DBSize: types.Float64Null(), WALDevice: types.StringNull(), WALSize: types.Float64Null(),
		CrushDeviceClass: types.StringNull(), Encrypted: types.BoolNull(), OSDsPerDevice: types.Int64Null(),
		Force: types.BoolValue(false), OSDID: types.Int64Value(id), OSDIDs: l, UUID: types.StringNull(),
		Up: types.BoolNull(), In: types.BoolNull(),
		Timeouts: timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType, "delete": types.StringType})},
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// osdIDsOnDevice returns the OSDs PVE's disk list shows on dev of node
// (sdb, /dev/sdb), the first being the one an import names.
func osdIDsOnDevice(ctx context.Context, c *pve.Client, node, dev string) ([]int64, error) {
	if !strings.HasPrefix(dev, "/dev/") {
		dev = "/dev/" + dev
	}
	disks, err := c.Disks(ctx, node, false)
	if err != nil {
		return nil, fmt.Errorf("list the disks of %s: %w", node, err)
	}
	disk := diskByPath(disks, dev)
	switch {
	case disk == nil:
		return nil, fmt.Errorf("node %s has no disk %s; PVE lists %s", node, dev, devPaths(disks))
	case len(disk.OSDIDs) > 0:
		return disk.OSDIDs, nil
	case disk.OSDID >= 0:
		return []int64{disk.OSDID}, nil
	}
	return nil, fmt.Errorf("%s on %s holds no Ceph OSD (PVE reports it as %q)", dev, node, disk.Used)
}
