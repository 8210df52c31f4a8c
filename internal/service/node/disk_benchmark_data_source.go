package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	pathpkg "path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const benchTypeName = "pve_node_disk_benchmark"

var (
	_ datasource.DataSource                   = (*diskBenchmarkDataSource)(nil)
	_ datasource.DataSourceWithConfigure      = (*diskBenchmarkDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*diskBenchmarkDataSource)(nil)
)

// NewDiskBenchmarkDataSource is the constructor the provider registers.
func NewDiskBenchmarkDataSource() datasource.DataSource {
	return &diskBenchmarkDataSource{framework.DataSourceBase{TypeName: benchTypeName}}
}

type diskBenchmarkDataSource struct{ framework.DataSourceBase }

type diskBenchmarkModel struct {
	ID              types.String  `tfsdk:"id"`
	Node            types.String  `tfsdk:"node"`
	Device          types.String  `tfsdk:"device"`
	Directory       types.String  `tfsdk:"directory"`
	OverwriteDevice types.Bool    `tfsdk:"overwrite_device"`
	IfInUse         types.String  `tfsdk:"if_in_use"`
	BlockSize       types.String  `tfsdk:"block_size"`
	Jobs            types.Int64   `tfsdk:"jobs"`
	Runtime         types.Int64   `tfsdk:"runtime"`
	Size            types.String  `tfsdk:"size"`
	Pattern         types.String  `tfsdk:"pattern"`
	Skipped         types.Bool    `tfsdk:"skipped"`
	InUse           types.String  `tfsdk:"in_use"`
	Model           types.String  `tfsdk:"model"`
	Filesystem      types.String  `tfsdk:"filesystem"`
	WriteIOPS       types.Float64 `tfsdk:"write_iops"`
	Bandwidth       types.Int64   `tfsdk:"bandwidth_bytes_per_second"`
	LatencyMean     types.Float64 `tfsdk:"latency_mean_us"`
	LatencyP50      types.Float64 `tfsdk:"latency_p50_us"`
	LatencyP95      types.Float64 `tfsdk:"latency_p95_us"`
	LatencyP99      types.Float64 `tfsdk:"latency_p99_us"`
	LatencyP999     types.Float64 `tfsdk:"latency_p999_us"`
	FioCommand      types.String  `tfsdk:"fio_command"`
}

var (
	blockSizeRE = regexp.MustCompile(`^([1-9][0-9]*)([kKmM]?)$`)
	fileSizeRE  = regexp.MustCompile(`^([1-9][0-9]*)([kKmMgG])$`)
	devPathRE   = regexp.MustCompile(`^/dev/[A-Za-z0-9][A-Za-z0-9/_.:+@=-]*$`)
)

func (d *diskBenchmarkDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Measures a drive's **sync-write** performance with [fio](https://fio.readthedocs.io/) on a node: " +
			"4 KiB writes (`block_size`) at queue depth 1, each one durable before the next (`--direct=1 --sync=1`, the " +
			"same as an fsync after every write), from 1 to 8 parallel jobs, for a bounded time. That is what Ceph's " +
			"BlueStore asks of an OSD's drive for every client write: datacenter SSDs with power-loss protection " +
			"acknowledge it from a capacitor-backed cache (thousands of IOPS, a latency of 0.1-0.3 ms), consumer drives " +
			"must write through to flash (the reference lab's QLC NVMe drives: about 800 IOPS, milliseconds, collapsing " +
			"under load). Use the figures in a `precondition` so that a configuration refuses to make a slow drive an " +
			"OSD (see the example).",
		Attributes: diskBenchmarkAttributes(),
	}
}

// diskBenchmarkAttributes are the data source's settings (what to measure
// and how) and the figures it reports.
func diskBenchmarkAttributes() map[string]schema.Attribute {
	attrs := diskBenchmarkResultAttributes()
	for k, v := range diskBenchmarkSettingAttributes() {
		attrs[k] = v
	}
	return attrs
}

func diskBenchmarkSettingAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id":   schema.StringAttribute{Computed: true, MarkdownDescription: "`<node>:<device or directory>`."},
		"node": framework.DataSourceNodeAttribute("", true),
		"device": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Whole disk to benchmark, such as `/dev/nvme0n1`, `/dev/sdb` or a `/dev/disk/by-id/` link. " +
				"Must be unused (see above); its content is destroyed. Exactly one of `device` and `directory`.",
			Validators: []validator.String{regexValidator{re: devPathRE, what: "a device path under /dev, such as /dev/sdb"}},
		},
		"directory": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Existing directory on the node for the scratch file, such as `/var/lib/vz` (PVE's `local` " +
				"storage). Exactly one of `device` and `directory`.",
		},
		"overwrite_device": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Must be `true` with `device`: confirms that the benchmark may write over the device. The " +
				"data source still refuses devices that are in use.",
		},
		"if_in_use": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "What to do when `device` is in use: `fail` (default) stops the plan with what holds the " +
				"device; `skip` sets `skipped` and leaves the figures null (for a configuration whose OSD now uses the disk).",
			Validators: []validator.String{stringvalidator.OneOf("fail", "skip")},
		},
		"block_size": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "Size of each write: bytes, or with a `k` or `m` suffix (powers of 1024), 512 bytes to 16m, a multiple of 512. Default `4k`.",
		},
		"jobs": schema.Int64Attribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "Parallel writers, each at queue depth 1: 1 to 8. Default 1.",
			Validators:          []validator.Int64{int64validator.Between(1, 8)},
		},
		"runtime": schema.Int64Attribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "Seconds to measure: 5 to 300. Default 60.",
			Validators:          []validator.Int64{int64validator.Between(5, 300)},
		},
		"size": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "Region written (on a device: its first `size` bytes) or size of the scratch file: a number " +
				"with a `k`, `m` or `g` suffix, 16m to 64g. Default `1g`.",
		},
		"pattern": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "`randwrite` (default) or `write` (sequential).",
			Validators:          []validator.String{stringvalidator.OneOf("randwrite", "write")},
		},
	}
}

func diskBenchmarkResultAttributes() map[string]schema.Attribute {
	computedFloat := func(desc string) schema.Float64Attribute {
		return schema.Float64Attribute{Computed: true, MarkdownDescription: desc}
	}
	return map[string]schema.Attribute{
		"skipped": schema.BoolAttribute{Computed: true, MarkdownDescription: "True when `if_in_use = \"skip\"` left an in-use device alone."},
		"in_use": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "What holds the device (empty when it is free, or for a directory).",
		},
		"model": schema.StringAttribute{Computed: true, MarkdownDescription: "The device's model as PVE reports it (null for a directory)."},
		"filesystem": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "For a directory: its filesystem and device, such as `ext4 on /dev/mapper/pve-root`.",
		},
		"write_iops": computedFloat("Durable writes per second, all jobs together."),
		"bandwidth_bytes_per_second": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "Write bandwidth in bytes per second.",
		},
		"latency_mean_us": computedFloat("Mean completion latency of a write, in microseconds."),
		"latency_p50_us":  computedFloat("Median write latency, in microseconds."),
		"latency_p95_us":  computedFloat("95th percentile write latency, in microseconds."),
		"latency_p99_us":  computedFloat("99th percentile write latency, in microseconds."),
		"latency_p999_us": computedFloat("99.9th percentile write latency, in microseconds."),
		"fio_command": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The fio command that ran (null when skipped).",
		},
	}
}

// parseSize reads a size with an optional k/m/g suffix (powers of 1024).
func parseSize(re *regexp.Regexp, v string) (int64, bool) {
	m := re.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, false
	}
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
	if n > (1<<62)>>shift {
		return 0, false
	}
	return n << shift, true
}

func (d *diskBenchmarkDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m diskBenchmarkModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	dev, dir := m.Device, m.Directory
	if dev.IsUnknown() || dir.IsUnknown() {
		return
	}
	switch {
	case dev.IsNull() && dir.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("device"), "Missing benchmark target",
			"Set device (an unused disk, such as /dev/sdb) or directory (for a scratch file, such as /var/lib/vz).")
	case !dev.IsNull() && !dir.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("directory"), "Two benchmark targets",
			"Set either device or directory, not both.")
	case !dev.IsNull():
		p := dev.ValueString()
		if pathpkg.Clean(p) != p {
			resp.Diagnostics.AddAttributeError(path.Root("device"), "Invalid device", fmt.Sprintf("device %q is not a clean path (%q).", p, pathpkg.Clean(p)))
		}
		if !m.OverwriteDevice.IsUnknown() && !m.OverwriteDevice.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("overwrite_device"), "Device benchmark not confirmed",
				fmt.Sprintf("A write benchmark on %s overwrites the device and destroys whatever is on it. Set overwrite_device = true "+
					"to confirm the disk holds nothing you need (in-use disks are refused anyway), or benchmark a scratch file with "+
					"directory instead.", p))
		}
	case !dir.IsNull():
		if err := nodeexec.CheckPath(dir.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("directory"), "Invalid directory", "directory: "+err.Error()+".")
		}
		if m.OverwriteDevice.ValueBool() {
			resp.Diagnostics.AddAttributeWarning(path.Root("overwrite_device"), "overwrite_device has no effect",
				"overwrite_device applies to device; a directory benchmark writes only its own scratch file.")
		}
	}
	if v := m.BlockSize; !v.IsNull() && !v.IsUnknown() {
		n, ok := parseSize(blockSizeRE, v.ValueString())
		if !ok || n < 512 || n > 16<<20 || n%512 != 0 {
			resp.Diagnostics.AddAttributeError(path.Root("block_size"), "Invalid block_size",
				fmt.Sprintf("block_size must be 512 bytes to 16m and a multiple of 512, such as 4k or 64k; got %q.", v.ValueString()))
		}
	}
	if v := m.Size; !v.IsNull() && !v.IsUnknown() {
		n, ok := parseSize(fileSizeRE, v.ValueString())
		if !ok || n < 16<<20 || n > 64<<30 {
			resp.Diagnostics.AddAttributeError(path.Root("size"), "Invalid size",
				fmt.Sprintf("size must be 16m to 64g with a k, m or g suffix, such as 1g; got %q.", v.ValueString()))
		}
	}
}

func (d *diskBenchmarkDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m diskBenchmarkModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || d.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(d.PD, &resp.Diagnostics, benchTypeName) {
		return
	}
	m.setDefaults()
	node := m.Node.ValueString()
	target := m.Directory.ValueString()
	if !m.Device.IsNull() {
		target = m.Device.ValueString()
	}
	m.ID = types.StringValue(node + ":" + target)
	unlock, err := d.PD.NodeExec.Lock(ctx, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "disk benchmark on", node, err)
		return
	}
	defer unlock()
	if !m.Device.IsNull() {
		d.benchDevice(ctx, &m, node, &resp.Diagnostics)
	} else {
		d.benchDirectory(ctx, &m, node, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// setDefaults fills the settings left unset with their defaults and
// starts the results empty (null figures, not skipped).
func (m *diskBenchmarkModel) setDefaults() {
	setDefault := func(v *types.String, def string) {
		if v.IsNull() || v.IsUnknown() {
			*v = types.StringValue(def)
		}
	}
	setDefault(&m.IfInUse, "fail")
	setDefault(&m.BlockSize, "4k")
	setDefault(&m.Size, "1g")
	setDefault(&m.Pattern, "randwrite")
	if m.Jobs.IsNull() || m.Jobs.IsUnknown() {
		m.Jobs = types.Int64Value(1)
	}
	if m.Runtime.IsNull() || m.Runtime.IsUnknown() {
		m.Runtime = types.Int64Value(60)
	}
	m.Skipped, m.InUse = types.BoolValue(false), types.StringValue("")
	m.Model, m.Filesystem, m.FioCommand = types.StringNull(), types.StringNull(), types.StringNull()
	m.WriteIOPS, m.Bandwidth = types.Float64Null(), types.Int64Null()
	m.LatencyMean, m.LatencyP50, m.LatencyP95, m.LatencyP99, m.LatencyP999 = types.Float64Null(), types.Float64Null(),
		types.Float64Null(), types.Float64Null(), types.Float64Null()
}

// benchDevice benchmarks m's device after checking that nothing uses it;
// with if_in_use = "skip" an in-use device only sets skipped and in_use.
func (d *diskBenchmarkDataSource) benchDevice(ctx context.Context, m *diskBenchmarkModel, node string, diags *diag.Diagnostics) {
	if !m.OverwriteDevice.ValueBool() {
		diags.AddAttributeError(path.Root("overwrite_device"), "Device benchmark not confirmed",
			"Set overwrite_device = true to benchmark a device.")
		return
	}
	c := d.NodeClient(ctx, node, diags)
	if c == nil {
		return
	}
	dev, model, reasons, err := d.checkDevice(ctx, c, node, m.Device.ValueString())
	if err != nil {
		framework.AddUnable(diags, "Read", "disk benchmark on", node, err)
		return
	}
	m.Model = types.StringValue(model)
	if len(reasons) > 0 {
		inUse := strings.Join(reasons, "; ")
		if m.IfInUse.ValueString() == "skip" {
			tflog.Info(ctx, "device in use; not benchmarking it", map[string]any{"node": node, "device": dev, "in_use": inUse})
			m.Skipped, m.InUse = types.BoolValue(true), types.StringValue(inUse)
			return
		}
		diags.AddError(fmt.Sprintf("Refusing to benchmark %s on node %s: it is in use", m.Device.ValueString(), node),
			fmt.Sprintf("%s is in use: %s.\n\nfio writes over the whole device and would destroy what is on it (a user who ran it "+
				"on OSD disks lost those OSDs). Benchmark an unused disk (PVE's Disks panel: Usage \"No\"), a scratch file with "+
				"directory = \"/var/lib/vz\", or set if_in_use = \"skip\" to leave in-use devices alone.", dev, inUse))
		return
	}
	d.run(ctx, m, node, dev, false, diags)
}

// benchDirectory benchmarks a scratch file in m's directory and removes
// the file again.
func (d *diskBenchmarkDataSource) benchDirectory(ctx context.Context, m *diskBenchmarkModel, node string, diags *diag.Diagnostics) {
	dir := m.Directory.ValueString()
	fs, err := d.checkDirectory(ctx, node, dir)
	if err != nil {
		framework.AddUnable(diags, "Read", "disk benchmark on", node, err)
		return
	}
	m.Filesystem = types.StringValue(fs)
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		framework.AddUnable(diags, "Read", "disk benchmark on", node, err)
		return
	}
	file := pathpkg.Join(dir, ".pve-disk-benchmark-"+hex.EncodeToString(suffix)+".fio")
	defer func() {
		// Also after a failure or cancellation: fio's unlink may not have run.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := d.PD.NodeExec.RemoveFile(cctx, node, file); err != nil {
			diags.AddWarning("Scratch file left on node "+node,
				fmt.Sprintf("Could not remove the benchmark's scratch file %s: %v", file, err))
		}
	}()
	d.run(ctx, m, node, file, true, diags)
}

// lsblkDev is one device of lsblk -J.
type lsblkDev struct {
	Name     string     `json:"name"`
	Type     string     `json:"type"`
	FSType   *string    `json:"fstype"`
	Mount    *string    `json:"mountpoint"`
	Children []lsblkDev `json:"children"`
}

func (b lsblkDev) describe() string {
	var parts []string
	if b.FSType != nil && *b.FSType != "" {
		parts = append(parts, *b.FSType)
	}
	if b.Mount != nil && *b.Mount != "" {
		parts = append(parts, "mounted at "+*b.Mount)
	}
	if len(parts) == 0 {
		return b.Name + " (" + b.Type + ")"
	}
	return b.Name + " (" + b.Type + ", " + strings.Join(parts, ", ") + ")"
}

// checkDevice resolves dev on node and lists why it is in use, from the
// kernel (lsblk) and from PVE's disk list. It errors for devices that are
// not whole disks PVE knows.
func (d *diskBenchmarkDataSource) checkDevice(ctx context.Context, c *pve.Client, node, dev string) (string, string, []string, error) {
	res, err := d.PD.NodeExec.Run(ctx, node, nodeexec.Cmd("lsblk", "-J", "-p", "-o", "NAME,TYPE,FSTYPE,MOUNTPOINT", "--", dev))
	if err != nil {
		if code, ok := nodeexec.ExitCode(err); ok && code == 32 {
			return "", "", nil, fmt.Errorf("%s is not a block device on node %s", dev, node)
		}
		return "", "", nil, err
	}
	var out struct {
		Devs []lsblkDev `json:"blockdevices"`
	}
	if err := json.Unmarshal(res.Stdout, &out); err != nil || len(out.Devs) != 1 {
		return "", "", nil, fmt.Errorf("node %s: unexpected lsblk output for %s: %q", node, dev, res.Stdout)
	}
	b := out.Devs[0]
	if b.Type != "disk" {
		return "", "", nil, fmt.Errorf("%s is %s (type %s), not a whole disk: benchmark the disk it belongs to, if that disk is unused", dev, b.Name, b.Type)
	}
	var reasons []string
	if b.FSType != nil && *b.FSType != "" {
		reasons = append(reasons, fmt.Sprintf("lsblk: it carries a %s signature", *b.FSType))
	}
	if b.Mount != nil && *b.Mount != "" {
		reasons = append(reasons, "lsblk: it is mounted at "+*b.Mount)
	}
	if len(b.Children) > 0 {
		var names []string
		for _, c := range b.Children {
			names = append(names, c.describe())
		}
		reasons = append(reasons, "lsblk: it holds "+strings.Join(names, ", "))
	}
	// The command's shared disk list (pve_node_disks and the OSDs read the
	// same; any write to the node's disks drops it): several benchmarks on
	// one node cost one read.
	disks, err := framework.CachedDisks(ctx, d.PD, c, node)
	if err != nil {
		return "", "", nil, err
	}
	var disk *pve.Disk
	for i := range disks {
		if disks[i].DevPath == b.Name {
			disk = &disks[i]
		}
	}
	if disk == nil {
		return "", "", nil, fmt.Errorf("PVE does not list %s (%s) among the disks of node %s (GET /nodes/%s/disks/list)", dev, b.Name, node, node)
	}
	if disk.Used != "" {
		reasons = append(reasons, "PVE: used by "+disk.Used)
	}
	ids := disk.OSDIDs
	if len(ids) == 0 && disk.OSDID >= 0 {
		ids = []int64{disk.OSDID}
	}
	for _, id := range ids {
		reasons = append(reasons, fmt.Sprintf("PVE: holds Ceph OSD %d", id))
	}
	if disk.Mounted {
		reasons = append(reasons, "PVE: mounted")
	}
	return b.Name, disk.Model, reasons, nil
}

// refusedFS are filesystems a benchmark file would not measure a drive on.
var refusedFS = map[string]string{
	"tmpfs": "memory (tmpfs)", "ramfs": "memory (ramfs)", "devtmpfs": "memory (devtmpfs)",
	"fuse": "PVE's cluster filesystem (pmxcfs), which holds its data in a database and refuses O_DIRECT",
	"proc": "the proc pseudo-filesystem", "sysfs": "the sysfs pseudo-filesystem", "squashfs": "a read-only filesystem",
}

// checkDirectory makes sure dir is a directory on a filesystem worth
// measuring and describes that filesystem.
func (d *diskBenchmarkDataSource) checkDirectory(ctx context.Context, node, dir string) (string, error) {
	ex := d.PD.NodeExec
	res, err := ex.Run(ctx, node, nodeexec.Cmd("stat", "-c", "%F", "--", dir))
	if err != nil {
		var e *nodeexec.Error
		if errors.As(err, &e) && strings.Contains(e.Stderr, "No such file or directory") {
			return "", fmt.Errorf("directory %s does not exist on node %s", dir, node)
		}
		return "", err
	}
	if kind := strings.TrimSpace(string(res.Stdout)); kind != "directory" {
		return "", fmt.Errorf("%s on node %s is a %s, not a directory", dir, node, kind)
	}
	res, err = ex.Run(ctx, node, nodeexec.Cmd("findmnt", "-J", "-o", "TARGET,SOURCE,FSTYPE", "-T", dir))
	if err != nil {
		return "", err
	}
	var out struct {
		FS []struct {
			Target string `json:"target"`
			Source string `json:"source"`
			FSType string `json:"fstype"`
		} `json:"filesystems"`
	}
	if err := json.Unmarshal(res.Stdout, &out); err != nil || len(out.FS) != 1 {
		return "", fmt.Errorf("node %s: unexpected findmnt output for %s: %q", node, dir, res.Stdout)
	}
	fs := out.FS[0]
	kind := fs.FSType
	if strings.HasPrefix(kind, "fuse.") {
		kind = "fuse"
	}
	if why, bad := refusedFS[kind]; bad {
		return "", fmt.Errorf("%s on node %s is on %s (%s mounted at %s): a benchmark there would not measure a drive; use a "+
			"directory on a disk, such as /var/lib/vz", dir, node, why, fs.FSType, fs.Target)
	}
	return fs.FSType + " on " + fs.Source, nil
}

// fioResult is the part of fio's JSON output the data source reads.
type fioResult struct {
	Jobs []struct {
		Error int `json:"error"`
		Write struct {
			IOPS    float64 `json:"iops"`
			BWBytes int64   `json:"bw_bytes"`
			Clat    struct {
				Mean float64          `json:"mean"`
				Pct  map[string]int64 `json:"percentile"`
			} `json:"clat_ns"`
		} `json:"write"`
	} `json:"jobs"`
}

// run runs fio on target and fills m with its figures.
func (d *diskBenchmarkDataSource) run(ctx context.Context, m *diskBenchmarkModel, node, target string, scratch bool, diags interface {
	AddError(string, string)
}) {
	runtime := m.Runtime.ValueInt64()
	cmd := nodeexec.Cmd("fio", "--name=pve-disk-benchmark", "--filename="+target, "--rw="+m.Pattern.ValueString(),
		"--bs="+m.BlockSize.ValueString(), "--iodepth=1", fmt.Sprintf("--numjobs=%d", m.Jobs.ValueInt64()),
		"--ioengine=psync", "--direct=1", "--sync=1", fmt.Sprintf("--runtime=%d", runtime), "--time_based",
		"--size="+m.Size.ValueString(), "--group_reporting", "--output-format=json")
	if scratch {
		cmd.Arg("--unlink=1")
	}
	// fio lays the file out first, then measures for runtime.
	cmd.WithTimeout(time.Duration(runtime)*time.Second + 5*time.Minute)
	m.FioCommand = types.StringValue(cmd.String())
	tflog.Info(ctx, "running fio", map[string]any{"node": node, "command": cmd.String()})
	res, err := d.PD.NodeExec.Run(ctx, node, cmd)
	if err != nil {
		var e *nodeexec.Error
		if code, ok := nodeexec.ExitCode(err); (ok && code == 127) || (errors.As(err, &e) && strings.Contains(e.Stderr, "fio: command not found")) {
			err = fmt.Errorf("fio is not installed on node %s: install it with `apt install fio`: %w", node, err)
		}
		diags.AddError("Unable to Read disk benchmark on "+node, err.Error())
		return
	}
	out := res.Stdout
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:] // fio may print notes before the JSON
	}
	var r fioResult
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) != 1 {
		diags.AddError("Unable to Read disk benchmark on "+node, fmt.Sprintf("unexpected fio output (%v): %.500q", err, res.Stdout))
		return
	}
	job := r.Jobs[0]
	if job.Error != 0 {
		diags.AddError("Unable to Read disk benchmark on "+node, fmt.Sprintf("fio reported error %d: %s", job.Error, strings.TrimSpace(string(res.Stderr))))
		return
	}
	w := job.Write
	pct := func(key string) types.Float64 {
		v, ok := w.Clat.Pct[key]
		if !ok {
			return types.Float64Null()
		}
		return types.Float64Value(float64(v) / 1000)
	}
	m.WriteIOPS = types.Float64Value(w.IOPS)
	m.Bandwidth = types.Int64Value(w.BWBytes)
	m.LatencyMean = types.Float64Value(w.Clat.Mean / 1000)
	m.LatencyP50, m.LatencyP95 = pct("50.000000"), pct("95.000000")
	m.LatencyP99, m.LatencyP999 = pct("99.000000"), pct("99.900000")
	d.recordForOSDPlans(ctx, m, node, target, scratch)
	tflog.Info(ctx, "fio finished", map[string]any{"node": node, "target": target, "iops": w.IOPS, "p99_us": m.LatencyP99.ValueFloat64()})
}
