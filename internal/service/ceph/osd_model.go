package ceph

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// osdModel is pve_ceph_osd: the OSD(s) on one disk of one node.
type osdModel struct {
	ID               types.String   `tfsdk:"id"`
	Node             types.String   `tfsdk:"node"`
	Device           types.String   `tfsdk:"device"`
	DBDevice         types.String   `tfsdk:"db_device"`
	DBSize           types.Float64  `tfsdk:"db_size"`
	WALDevice        types.String   `tfsdk:"wal_device"`
	WALSize          types.Float64  `tfsdk:"wal_size"`
	CrushDeviceClass types.String   `tfsdk:"crush_device_class"`
	Encrypted        types.Bool     `tfsdk:"encrypted"`
	OSDsPerDevice    types.Int64    `tfsdk:"osds_per_device"`
	Force            types.Bool     `tfsdk:"force"`
	OSDID            types.Int64    `tfsdk:"osd_id"`
	OSDIDs           types.List     `tfsdk:"osd_ids"`
	UUID             types.String   `tfsdk:"uuid"`
	Up               types.Bool     `tfsdk:"up"`
	In               types.Bool     `tfsdk:"in"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

// ids are the OSD ids the resource manages (osd_ids, else osd_id).
func (m *osdModel) ids(ctx context.Context) []int64 {
	var out []int64
	if !m.OSDIDs.IsNull() && !m.OSDIDs.IsUnknown() {
		_ = m.OSDIDs.ElementsAs(ctx, &out, false)
	}
	if len(out) == 0 && !m.OSDID.IsNull() && !m.OSDID.IsUnknown() {
		out = []int64{m.OSDID.ValueInt64()}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func osdName(id int64) string { return "osd." + strconv.FormatInt(id, 10) }

func osdNames(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = osdName(id)
	}
	return strings.Join(s, ", ")
}

// The per-command read cache: one OSD tree per command and one disk list per
// node, shared by every pve_ceph_osd; writes invalidate them.
const osdTreeKey = "ceph/osd-tree"

func cachedTree(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string) (*pve.CephOSDTree, error) {
	return framework.CachedRead(ctx, pd.Reads, osdTreeKey, func(ctx context.Context) (*pve.CephOSDTree, error) { return readTree(ctx, pd, c, node) })
}

func cachedDisks(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string) ([]pve.Disk, error) {
	return framework.CachedDisks(ctx, pd, c, node)
}

// osdMetadata is OSD id's metadata. A refresh (useCache) takes it from
// the cluster's metadata of every OSD (GET /cluster/ceph/metadata, one
// shared read per command, dropped by every write), so N OSDs cost one
// request, not N; an OSD missing there (never started), or a failed
// read, falls back to the OSD's own read on host, whose answer is PVE's.
func osdMetadata(ctx context.Context, pd *framework.ProviderData, c *pve.Client, host string, id int64, useCache bool) (*pve.CephOSDMetadata, error) {
	if useCache {
		all, err := framework.SharedRead(ctx, pd, false, "ceph/metadata@"+c.Endpoint(), c.CephClusterMetadata)
		if err == nil && all[id] != nil {
			return all[id], nil
		}
		if err != nil {
			tflog.Debug(ctx, "cannot read the cluster's OSD metadata; reading the OSD's", map[string]any{"osd": id, "error": err.Error()})
		}
	}
	return c.CephOSDMetadata(ctx, host, id)
}

func invalidateOSDReads(pd *framework.ProviderData, nodes ...string) {
	pd.Reads.Invalidate(osdTreeKey)
	for _, n := range nodes {
		pd.Reads.Invalidate(framework.DisksCacheKey(n))
	}
}

// cephNotInitialized: PVE's answer when the node has no Ceph configuration,
// so no OSD can exist.
func cephNotInitialized(err error) bool {
	return err != nil && strings.Contains(err.Error(), "pveceph configuration not initialized")
}

func diskByPath(disks []pve.Disk, dev string) *pve.Disk {
	for i := range disks {
		if disks[i].DevPath == dev {
			return &disks[i]
		}
	}
	return nil
}

func diskWithOSD(disks []pve.Disk, id int64) *pve.Disk {
	for i := range disks {
		if disks[i].HasOSD(id) {
			return &disks[i]
		}
	}
	return nil
}

func devPaths(disks []pve.Disk) string {
	p := make([]string, len(disks))
	for i, d := range disks {
		p[i] = d.DevPath
	}
	return strings.Join(p, ", ")
}

const gib = 1 << 30

// sizeGiB turns a block.db/block.wal size into GiB. A configured size that
// PVE had to round (to KiB, then up to a 4 MiB LVM extent) is kept as
// written, so the plan stays empty.
func sizeGiB(bytes int64, prior types.Float64) types.Float64 {
	if bytes <= 0 {
		return types.Float64Null()
	}
	got := float64(bytes) / gib
	if !prior.IsNull() && !prior.IsUnknown() && math.Abs(prior.ValueFloat64()-got) <= float64(4<<20)/gib {
		return prior
	}
	return types.Float64Value(math.Round(got*1e6) / 1e6)
}

// physicalPath turns metadata's physical_device ("sdb", or "sdb,sdc") into
// a device path. A configured partition of that disk (/dev/nvme0n1p3) is
// kept as written: PVE reports the disk, not the partition.
func physicalPath(phys string, prior types.String) types.String {
	first, _, _ := strings.Cut(strings.ReplaceAll(phys, " ", ","), ",")
	if first == "" {
		return types.StringNull()
	}
	p := "/dev/" + strings.TrimPrefix(first, "/dev/")
	if !prior.IsNull() && !prior.IsUnknown() && strings.HasPrefix(prior.ValueString(), p) {
		return prior
	}
	return types.StringValue(p)
}

// readTree reads the OSD tree (the whole cluster's) on node, or, when that
// node does not answer (it may be rebooting), on another online node.
func readTree(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string) (*pve.CephOSDTree, error) {
	tree, err := c.CephOSDTree(ctx, node)
	if err == nil || cephNotInitialized(err) || ctx.Err() != nil {
		return tree, err
	}
	nodes, lerr := pd.Client.Nodes(ctx)
	if lerr != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.Node == node || n.Status != "online" {
			continue
		}
		oc, cerr := pd.NodeClient(ctx, n.Node)
		if cerr != nil {
			continue
		}
		if t, terr := oc.CephOSDTree(ctx, n.Node); terr == nil {
			tflog.Info(ctx, "read the OSD tree through another node", map[string]any{"node": n.Node, "unreachable": node, "error": err.Error()})
			return t, nil
		}
	}
	return nil, err
}

// readOSD fills m from PVE. found is false when the OSD no longer exists
// (or the OSD with its id is not the one this resource created). Problems
// that only stop parts of the read (the node is down, the disk is gone) are
// warnings that keep the recorded values.
func (r *osdResource) readOSD(ctx context.Context, m *osdModel, useCache bool, diags *diag.Diagnostics) (found bool) {
	node := m.Node.ValueString()
	present, c, found := r.readPresentOSDs(ctx, m, useCache, diags)
	if !found {
		return false
	}
	primary := present[0]
	host := primary.Host
	if host != "" && host != node {
		tflog.Warn(ctx, "PVE reports the OSD on another host", map[string]any{"osd": primary.Name, "state_node": node, "host": host})
		m.Node = types.StringValue(host)
		if c = r.NodeClient(ctx, host, diags); c == nil {
			return false
		}
	}
	storeOSDStatus(m, present)
	if !r.readOSDDisk(ctx, c, m, primary, host, useCache, diags) {
		return false
	}
	// The resource's OSD is the lowest id on the disk (osd_id).
	r.readOSDMetadata(ctx, c, m, primary, host, useCache, diags)
	if m.UUID.IsNull() || m.UUID.IsUnknown() || m.UUID.ValueString() == "" {
		// lv-info runs ceph-volume on the node: once, not on every refresh.
		if v, err := c.CephOSDLVInfo(ctx, host, m.OSDID.ValueInt64(), "block"); err == nil && v.OSDFSID() != "" {
			m.UUID = types.StringValue(v.OSDFSID())
		} else {
			if err != nil {
				tflog.Warn(ctx, "cannot read the OSD's fsid", map[string]any{"osd": primary.Name, "error": err.Error()})
			}
			m.UUID = types.StringNull()
		}
	}
	return true
}

// readPresentOSDs reads the OSD tree and returns those of m's OSDs it
// still lists, with the client of m's node. found is false when none is
// (or Ceph is gone).
func (r *osdResource) readPresentOSDs(ctx context.Context, m *osdModel, useCache bool, diags *diag.Diagnostics) ([]*pve.CephOSD, *pve.Client, bool) {
	node := m.Node.ValueString()
	ids := m.ids(ctx)
	if len(ids) == 0 {
		diags.AddError("Unable to Read Ceph OSD", "The state records no OSD id (provider bug).")
		return nil, nil, false
	}
	c := r.NodeClient(ctx, node, diags)
	if c == nil {
		return nil, nil, false
	}
	var tree *pve.CephOSDTree
	var err error
	if useCache {
		tree, err = cachedTree(ctx, r.PD, c, node)
	} else {
		tree, err = readTree(ctx, r.PD, c, node)
	}
	if cephNotInitialized(err) {
		tflog.Warn(ctx, "Ceph is not initialised any more; the OSD is gone", map[string]any{"node": node, "osds": osdNames(ids)})
		return nil, nil, false
	}
	if err != nil {
		framework.AddUnable(diags, "Read", "Ceph OSD", m.ID.ValueString(), err)
		return nil, nil, false
	}
	var present []*pve.CephOSD
	for _, id := range ids {
		if o := tree.OSD(id); o != nil {
			present = append(present, o)
		}
	}
	if len(present) == 0 {
		tflog.Warn(ctx, "OSD no longer exists; removing it from state", map[string]any{"node": node, "osds": osdNames(ids)})
		return nil, nil, false
	}
	return present, c, true
}

// storeOSDStatus sets what the OSD tree tells about present (the first
// being the resource's OSD): up, in, device class and id.
func storeOSDStatus(m *osdModel, present []*pve.CephOSD) {
	primary := present[0]
	up, in := true, true
	for _, o := range present {
		up = up && o.Up()
		in = in && o.In
	}
	m.Up, m.In = types.BoolValue(up), types.BoolValue(in)
	if primary.DeviceClass != "" {
		m.CrushDeviceClass = types.StringValue(primary.DeviceClass)
	}
	m.OSDID = types.Int64Value(primary.ID)
	m.ID = types.StringValue(fmt.Sprintf("%s/%d", m.Node.ValueString(), primary.ID))
}

// readOSDDisk sets what PVE's disk list tells about the disk holding
// primary; an unreadable list or a missing disk is a warning. It returns
// false when the disk's OSD with primary's id is another OSD (its fsid
// differs from m's).
func (r *osdResource) readOSDDisk(ctx context.Context, c *pve.Client, m *osdModel, primary *pve.CephOSD, host string, useCache bool, diags *diag.Diagnostics) bool {
	var disks []pve.Disk
	var err error
	if useCache {
		disks, err = cachedDisks(ctx, r.PD, c, host)
	} else {
		disks, err = c.Disks(ctx, host, false)
	}
	if err != nil {
		diags.AddWarning("Cannot read the disks of node "+host,
			fmt.Sprintf("PVE could not list the disks of %s (%v), so the device of %s is not verified; the recorded values are kept.", host, err, primary.Name))
		return true
	}
	d := diskWithOSD(disks, primary.ID)
	if d == nil {
		diags.AddWarning(fmt.Sprintf("No disk of %s holds %s", host, primary.Name),
			fmt.Sprintf("Ceph knows %s on %s, but PVE lists no disk with its data (%s). The disk may have failed or been pulled; the recorded device %s is kept.",
				primary.Name, host, devPaths(disks), m.Device.ValueString()))
		return true
	}
	if !m.Device.IsNull() && !m.Device.IsUnknown() && m.Device.ValueString() != d.DevPath && !m.UUID.IsNull() && m.UUID.ValueString() != "" {
		// Renamed disk, or another OSD that got the same id? The fsid tells.
		lowest := primary.ID
		for _, x := range d.OSDIDs {
			lowest = min(lowest, x)
		}
		if v, err := c.CephOSDLVInfo(ctx, host, lowest, "block"); err == nil && v.OSDFSID() != "" && v.OSDFSID() != m.UUID.ValueString() {
			tflog.Warn(ctx, "the OSD id belongs to another OSD now; removing the old one from state",
				map[string]any{"osd": primary.Name, "fsid": m.UUID.ValueString(), "now": v.OSDFSID(), "device": d.DevPath})
			return false
		}
	}
	m.Device = types.StringValue(d.DevPath)
	osdIDs := append([]int64(nil), d.OSDIDs...)
	if len(osdIDs) == 0 {
		osdIDs = []int64{primary.ID}
	}
	sort.Slice(osdIDs, func(i, j int) bool { return osdIDs[i] < osdIDs[j] })
	l, dd := types.ListValueFrom(ctx, types.Int64Type, osdIDs)
	diags.Append(dd...)
	m.OSDIDs = l
	m.OSDID = types.Int64Value(osdIDs[0])
	m.ID = types.StringValue(fmt.Sprintf("%s/%d", host, osdIDs[0]))
	m.OSDsPerDevice = types.Int64Value(int64(len(osdIDs)))
	m.Encrypted = types.BoolValue(d.OSDEncrypted)
	return true
}

// readOSDMetadata sets block.db and block.wal from the OSD's metadata; an
// unreadable one is a warning that keeps the recorded values.
func (r *osdResource) readOSDMetadata(ctx context.Context, c *pve.Client, m *osdModel, primary *pve.CephOSD, host string, useCache bool, diags *diag.Diagnostics) {
	md, err := osdMetadata(ctx, r.PD, c, host, m.OSDID.ValueInt64(), useCache)
	if err != nil {
		diags.AddWarning("Cannot read the metadata of "+primary.Name,
			fmt.Sprintf("PVE could not read the metadata of %s on %s (%v); block.db and block.wal are not verified.", primary.Name, host, err))
		return
	}
	dbDev, dbSize, walDev, walSize := m.DBDevice, m.DBSize, m.WALDevice, m.WALSize
	m.DBDevice, m.DBSize, m.WALDevice, m.WALSize = types.StringNull(), types.Float64Null(), types.StringNull(), types.Float64Null()
	if db := md.Device("db"); db != nil {
		m.DBDevice = physicalPath(db.PhysicalDevice, dbDev)
		m.DBSize = sizeGiB(db.Size, dbSize)
	}
	if wal := md.Device("wal"); wal != nil {
		m.WALDevice = physicalPath(wal.PhysicalDevice, walDev)
		m.WALSize = sizeGiB(wal.Size, walSize)
	}
}
