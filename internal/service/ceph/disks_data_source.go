package ceph

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

const nodeDisksTypeName = "pve_node_disks"

// NewNodeDisksDataSource is pve_node_disks.
func NewNodeDisksDataSource() datasource.DataSource {
	return &nodeDisksDataSource{DataSourceBase: framework.DataSourceBase{TypeName: nodeDisksTypeName}}
}

type nodeDisksDataSource struct{ framework.DataSourceBase }

type nodeDisksModel struct {
	Node         types.String  `tfsdk:"node"`
	MinOSDSizeGB types.Float64 `tfsdk:"min_osd_size_gb"`
	Disks        []diskEntry   `tfsdk:"disks"`
}

type diskEntry struct {
	DevPath             types.String `tfsdk:"devpath"`
	Model               types.String `tfsdk:"model"`
	Serial              types.String `tfsdk:"serial"`
	Vendor              types.String `tfsdk:"vendor"`
	WWN                 types.String `tfsdk:"wwn"`
	Size                types.Int64  `tfsdk:"size"`
	Type                types.String `tfsdk:"type"`
	RPM                 types.Int64  `tfsdk:"rpm"`
	Wearout             types.Int64  `tfsdk:"wearout"`
	Health              types.String `tfsdk:"health"`
	Used                types.String `tfsdk:"used"`
	GPT                 types.Bool   `tfsdk:"gpt"`
	Mounted             types.Bool   `tfsdk:"mounted"`
	OSDID               types.Int64  `tfsdk:"osd_id"`
	OSDIDs              []int64      `tfsdk:"osd_ids"`
	OSDEncrypted        types.Bool   `tfsdk:"osd_encrypted"`
	DriveFamily         types.String `tfsdk:"drive_family"`
	PowerLossProtection types.Bool   `tfsdk:"power_loss_protection"`
	SuitableForOSD      types.Bool   `tfsdk:"suitable_for_osd"`
	UnsuitableReasons   []string     `tfsdk:"unsuitable_reasons"`
}

func (d *nodeDisksDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The disks of a node (`GET /nodes/{node}/disks/list`, GUI: Node > Disks) with advice on which may become a Ceph OSD.",
		Attributes: map[string]schema.Attribute{
			"node": framework.DataSourceNodeAttribute("The node, such as `z2g4a`.", true),
			"min_osd_size_gb": schema.Float64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Smallest disk (in GB, 10^9 bytes) called suitable for an OSD. Default %d: Ceph weighs OSDs by size and stops "+
					"writes to a pool when one of its OSDs is 95 %% full, so a small OSD fills first.", defaultMinOSDSizeGB),
				Validators: []validator.Float64{float64validator.AtLeast(0)},
			},
			"disks": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The node's disks, ordered by device path.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"devpath": str("Device path, such as `/dev/sdb`: what `pve_ceph_osd.device` takes."),
					"model":   str("Model as the kernel reports it, such as `INTEL_SSDSC2BB480G4`."),
					"serial":  str("Serial number."),
					"vendor":  str("Vendor (`ATA` for SATA disks); null when PVE reports none."),
					"wwn":     str("World wide name; null when PVE reports none."),
					"size":    schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in bytes."},
					"type":    str("`ssd`, `hdd`, `nvme`, `usb` or `unknown`."),
					"rpm":     schema.Int64Attribute{Computed: true, MarkdownDescription: "Rotation rate; 0 for SSDs, -1 when unknown."},
					"wearout": schema.Int64Attribute{Computed: true,
						MarkdownDescription: "Percent of rated life left from SMART (100 = new); null when PVE reports `N/A`."},
					"health": str("SMART health (`PASSED`, `OK`, `FAILED`, `UNKNOWN`)."),
					"used":   str("What uses the disk (`LVM`, `partitions`, `BIOS boot`, `ZFS`, a file system, ...); null when unused."),
					"gpt":    schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the disk has a GPT partition table."},
					"mounted": schema.BoolAttribute{Computed: true,
						MarkdownDescription: "Whether the disk itself is mounted."},
					"osd_id": schema.Int64Attribute{Computed: true, MarkdownDescription: "The Ceph OSD keeping its data on the disk (the lowest id if several); null for none."},
					"osd_ids": schema.ListAttribute{ElementType: types.Int64Type, Computed: true,
						MarkdownDescription: "Every OSD keeping its data on the disk (several with `osds_per_device`)."},
					"osd_encrypted": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the OSD on the disk is encrypted; null without an OSD."},
					"drive_family":  str("The drive family the model belongs to in the provider's list, such as `Intel 660p/665p (QLC NVMe)`; null when not listed."),
					"power_loss_protection": schema.BoolAttribute{Computed: true,
						MarkdownDescription: "Whether the drive family has power-loss protection; null when the model is not in the list (then measure)."},
					"suitable_for_osd": schema.BoolAttribute{Computed: true,
						MarkdownDescription: "Whether the provider recommends the disk for a new OSD (see above); `unsuitable_reasons` says why not."},
					"unsuitable_reasons": schema.ListAttribute{ElementType: types.StringType, Computed: true,
						MarkdownDescription: "Why the disk is unsuitable; empty when suitable."},
				}},
			},
		},
	}
}

func strOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func (d *nodeDisksDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m nodeDisksModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := m.Node.ValueString()
	minGB := float64(defaultMinOSDSizeGB)
	if !m.MinOSDSizeGB.IsNull() {
		minGB = m.MinOSDSizeGB.ValueFloat64()
	}
	c := d.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	disks, err := framework.CachedDisks(ctx, d.PD, c, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "node disks", node, err)
		return
	}
	m.Disks = make([]diskEntry, 0, len(disks))
	for _, dk := range disks {
		v := judgeDisk(dk, int64(minGB*1e9))
		e := diskEntry{
			DevPath: types.StringValue(dk.DevPath), Model: types.StringValue(dk.Model), Serial: types.StringValue(dk.Serial),
			Vendor: strOrNull(dk.Vendor), WWN: strOrNull(dk.WWN), Size: types.Int64Value(dk.Size), Type: types.StringValue(dk.Type),
			RPM: types.Int64Value(dk.RPM), Wearout: types.Int64Null(), Health: strOrNull(dk.Health), Used: strOrNull(dk.Used),
			GPT: types.BoolValue(dk.GPT), Mounted: types.BoolValue(dk.Mounted), OSDID: types.Int64Null(), OSDIDs: []int64{},
			OSDEncrypted: types.BoolNull(), DriveFamily: strOrNull(v.Family), PowerLossProtection: types.BoolNull(),
			SuitableForOSD: types.BoolValue(v.Suitable), UnsuitableReasons: v.Reasons,
		}
		if dk.Wearout >= 0 {
			e.Wearout = types.Int64Value(dk.Wearout)
		}
		if len(dk.OSDIDs) > 0 {
			e.OSDIDs = append([]int64(nil), dk.OSDIDs...)
			sort.Slice(e.OSDIDs, func(i, j int) bool { return e.OSDIDs[i] < e.OSDIDs[j] })
		} else if dk.OSDID >= 0 {
			e.OSDIDs = []int64{dk.OSDID}
		}
		if len(e.OSDIDs) > 0 {
			e.OSDID = types.Int64Value(e.OSDIDs[0])
			e.OSDEncrypted = types.BoolValue(dk.OSDEncrypted)
		}
		if v.Known {
			e.PowerLossProtection = types.BoolValue(v.PLP)
		}
		if e.UnsuitableReasons == nil {
			e.UnsuitableReasons = []string{}
		}
		m.Disks = append(m.Disks, e)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
