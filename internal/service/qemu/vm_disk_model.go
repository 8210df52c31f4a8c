package qemu

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// vmDiskModel is pve_vm_disk's state.
type vmDiskModel struct {
	ID              types.String   `tfsdk:"id"`
	VMID            types.Int64    `tfsdk:"vm_id"`
	Slot            types.String   `tfsdk:"slot"`
	Node            types.String   `tfsdk:"node"`
	Storage         types.String   `tfsdk:"storage"`
	Size            types.String   `tfsdk:"size"`
	Cache           types.String   `tfsdk:"cache"`
	IOThread        types.Bool     `tfsdk:"iothread"`
	SSD             types.Bool     `tfsdk:"ssd"`
	Discard         types.String   `tfsdk:"discard"`
	AIO             types.String   `tfsdk:"aio"`
	Backup          types.Bool     `tfsdk:"backup"`
	Replicate       types.Bool     `tfsdk:"replicate"`
	RO              types.Bool     `tfsdk:"ro"`
	Serial          types.String   `tfsdk:"serial"`
	Model           types.String   `tfsdk:"model"`
	Vendor          types.String   `tfsdk:"vendor"`
	Product         types.String   `tfsdk:"product"`
	WWN             types.String   `tfsdk:"wwn"`
	MBpsRd          types.Float64  `tfsdk:"mbps_rd"`
	MBpsRdMax       types.Float64  `tfsdk:"mbps_rd_max"`
	MBpsWr          types.Float64  `tfsdk:"mbps_wr"`
	MBpsWrMax       types.Float64  `tfsdk:"mbps_wr_max"`
	IOPSRd          types.Int64    `tfsdk:"iops_rd"`
	IOPSRdMax       types.Int64    `tfsdk:"iops_rd_max"`
	IOPSWr          types.Int64    `tfsdk:"iops_wr"`
	IOPSWrMax       types.Int64    `tfsdk:"iops_wr_max"`
	Volume          types.String   `tfsdk:"volume"`
	DeleteOnDestroy types.Bool     `tfsdk:"delete_on_destroy"`
	RebootIfNeeded  types.Bool     `tfsdk:"reboot_if_needed"`
	Boot            types.Bool     `tfsdk:"boot"`
	Pending         types.List     `tfsdk:"pending"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
}

// slotRE are the disk slots of a VM this resource manages (efidisk0 and
// tpmstate0 belong to pve_vm).
var slotRE = regexp.MustCompile(`^(scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5])|sata[0-5]|ide[0-3])$`)

var sizeRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[KMGT]?$`)

// What a drive tells the guest about itself (Drive.pm's vendor, product
// and wwn formats; PVE also takes tabs where these take spaces).
var (
	vendorRE  = regexp.MustCompile(`^[A-Za-z0-9_ -]{1,8}$`)
	productRE = regexp.MustCompile(`^[A-Za-z0-9_ -]{1,16}$`)
	wwnRE     = regexp.MustCompile(`^0x[0-9a-fA-F]{16}$`)
)

// The drive options the resource manages, by attribute; everything else
// in the drive string (format, media, ...) is kept as PVE has it.
var (
	driveStringOpts = []string{"cache", "discard", "aio", "serial", "model", "vendor", "product", "wwn"}
	driveBoolOpts   = []string{"iothread", "ssd", "backup", "replicate", "ro"}
	driveFloatOpts  = []string{"mbps_rd", "mbps_rd_max", "mbps_wr", "mbps_wr_max"}
	driveIntOpts    = []string{"iops_rd", "iops_rd_max", "iops_wr", "iops_wr_max"}
)

func (m *vmDiskModel) strAttr(k string) *types.String {
	switch k {
	case "cache":
		return &m.Cache
	case "discard":
		return &m.Discard
	case "aio":
		return &m.AIO
	case "serial":
		return &m.Serial
	case "model":
		return &m.Model
	case "vendor":
		return &m.Vendor
	case "product":
		return &m.Product
	case "wwn":
		return &m.WWN
	}
	panic("unknown option " + k)
}

func (m *vmDiskModel) boolAttr(k string) *types.Bool {
	switch k {
	case "iothread":
		return &m.IOThread
	case "ssd":
		return &m.SSD
	case "backup":
		return &m.Backup
	case "replicate":
		return &m.Replicate
	case "ro":
		return &m.RO
	}
	panic("unknown option " + k)
}

func (m *vmDiskModel) floatAttr(k string) *types.Float64 {
	switch k {
	case "mbps_rd":
		return &m.MBpsRd
	case "mbps_rd_max":
		return &m.MBpsRdMax
	case "mbps_wr":
		return &m.MBpsWr
	case "mbps_wr_max":
		return &m.MBpsWrMax
	}
	panic("unknown option " + k)
}

func (m *vmDiskModel) intAttr(k string) *types.Int64 {
	switch k {
	case "iops_rd":
		return &m.IOPSRd
	case "iops_rd_max":
		return &m.IOPSRdMax
	case "iops_wr":
		return &m.IOPSWr
	case "iops_wr_max":
		return &m.IOPSWrMax
	}
	panic("unknown option " + k)
}

// options are the managed drive options as PVE writes them ("" = unset).
func (m *vmDiskModel) options() map[string]string {
	out := map[string]string{}
	for _, k := range driveStringOpts {
		if v := m.strAttr(k); !v.IsNull() && !v.IsUnknown() {
			out[k] = v.ValueString()
		}
	}
	for _, k := range urlEncodedOpts {
		if v, ok := out[k]; ok {
			out[k] = urlEncodeDriveText(v)
		}
	}
	for _, k := range driveBoolOpts {
		if v := m.boolAttr(k); !v.IsNull() && !v.IsUnknown() {
			out[k] = bool01(v.ValueBool())
		}
	}
	for _, k := range driveFloatOpts {
		if v := m.floatAttr(k); !v.IsNull() && !v.IsUnknown() {
			out[k] = strconv.FormatFloat(v.ValueFloat64(), 'f', -1, 64)
		}
	}
	for _, k := range driveIntOpts {
		if v := m.intAttr(k); !v.IsNull() && !v.IsUnknown() {
			out[k] = strconv.FormatInt(v.ValueInt64(), 10)
		}
	}
	return out
}

func allManagedOpts() []string {
	var out []string
	out = append(out, driveStringOpts...)
	out = append(out, driveBoolOpts...)
	out = append(out, driveFloatOpts...)
	return append(out, driveIntOpts...)
}

// bool01 is a bool as PVE writes it.
func bool01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// withOptions returns d with the managed options replaced by want (keys
// absent from want are removed), the other keys kept.
func withOptions(d pve.Drive, want map[string]string) pve.Drive {
	out := d
	for _, k := range allManagedOpts() {
		out = out.With(k, want[k])
	}
	return out
}

// optionsDiffer reports whether d's managed options differ from want.
func optionsDiffer(d pve.Drive, want map[string]string) bool {
	for _, k := range allManagedOpts() {
		if !sameOption(k, d.Options[k], want[k]) {
			return true
		}
	}
	return false
}

// sameOption compares option values as PVE means them (numbers by value).
func sameOption(k, a, b string) bool {
	if a == b {
		return true
	}
	if slices.Contains(urlEncodedOpts, k) {
		x, err1 := url.PathUnescape(a)
		y, err2 := url.PathUnescape(b)
		return err1 == nil && err2 == nil && x == y
	}
	for _, f := range driveFloatOpts {
		if k == f {
			x, err1 := strconv.ParseFloat(a, 64)
			y, err2 := strconv.ParseFloat(b, 64)
			return err1 == nil && err2 == nil && x == y
		}
	}
	return false
}

// fromDrive fills the model from the drive PVE reports at the slot
// (pending view) and the keys waiting for a restart.
func (m *vmDiskModel) fromDrive(vmid int64, slot, node string, d pve.Drive, pending []string) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = types.StringValue(fmt.Sprintf("%d/%s", vmid, slot))
	m.VMID = types.Int64Value(vmid)
	m.Slot = types.StringValue(slot)
	m.Node = types.StringValue(node)
	m.Storage = types.StringValue(d.Storage())
	m.Volume = types.StringValue(d.Volume)
	if b, err := d.SizeBytes(); err == nil && b > 0 {
		// Keep the configured spelling (32768M) when it is the same size.
		if old, oerr := pve.ParseDiskSize(m.Size.ValueString()); m.Size.IsNull() || m.Size.IsUnknown() || oerr != nil || old != b {
			m.Size = types.StringValue(pve.FormatDiskSize(b))
		}
	}
	for _, k := range driveStringOpts {
		v, ok := d.Options[k]
		if slices.Contains(urlEncodedOpts, k) && ok {
			// Stored url-encoded (Drive.pm's urlencoded format); the
			// attribute is the text the guest sees.
			if dec, err := url.PathUnescape(v); err == nil {
				v = dec
			}
		}
		if ok {
			*m.strAttr(k) = types.StringValue(v)
		} else {
			*m.strAttr(k) = types.StringNull()
		}
	}
	for _, k := range driveBoolOpts {
		if v, ok := d.Options[k]; ok {
			*m.boolAttr(k) = types.BoolValue(v == "1")
		} else {
			*m.boolAttr(k) = types.BoolNull()
		}
	}
	for _, k := range driveFloatOpts {
		v, ok := d.Options[k]
		if !ok {
			*m.floatAttr(k) = types.Float64Null()
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			diags.AddWarning("Unexpected drive option", fmt.Sprintf("%s of %s is %q, not a number", k, slot, v))
			continue
		}
		*m.floatAttr(k) = types.Float64Value(f)
	}
	for _, k := range driveIntOpts {
		v, ok := d.Options[k]
		if !ok {
			*m.intAttr(k) = types.Int64Null()
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			diags.AddWarning("Unexpected drive option", fmt.Sprintf("%s of %s is %q, not a number", k, slot, v))
			continue
		}
		*m.intAttr(k) = types.Int64Value(n)
	}
	vals := make([]attr.Value, 0, len(pending))
	for _, p := range pending {
		vals = append(vals, types.StringValue(p))
	}
	m.Pending = types.ListValueMust(types.StringType, vals)
	if m.DeleteOnDestroy.IsNull() || m.DeleteOnDestroy.IsUnknown() {
		m.DeleteOnDestroy = types.BoolValue(false)
	}
	if m.RebootIfNeeded.IsNull() || m.RebootIfNeeded.IsUnknown() {
		m.RebootIfNeeded = types.BoolValue(false)
	}
	if m.Timeouts.IsNull() || m.Timeouts.IsUnknown() {
		m.Timeouts = timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{
			"create": types.StringType, "update": types.StringType, "delete": types.StringType,
		})}
	}
	return diags
}

// slotState is what PVE reports for one slot: the drive the VM runs now
// (current), the one it runs after a restart (effective), and what
// differs between them.
type slotState struct {
	Current, Effective       pve.Drive
	HasCurrent, HasEffective bool
	// PendingDelete: the slot goes at the next restart.
	PendingDelete bool
	Digest        string
	// Boot is the VM's boot property as it will be after a restart;
	// BootPending: whether the slot's place in it changes then.
	Boot        string
	BootPending bool
}

// Pending lists what waits for a restart: the changed drive options
// (volume included), "attach" for a disk not yet plugged in, "detach"
// for one to be removed, "boot" when the slot enters or leaves the boot
// order at the next start.
func (s slotState) Pending() []string {
	p := s.drivePending()
	if s.BootPending {
		p = append(p, "boot")
	}
	return p
}

func (s slotState) drivePending() []string {
	switch {
	case s.PendingDelete:
		return []string{"detach"}
	case !s.HasCurrent && s.HasEffective:
		return []string{"attach"}
	case !s.HasCurrent || !s.HasEffective:
		return []string{}
	}
	var opts []string
	keys := map[string]bool{}
	for k := range s.Current.Options {
		keys[k] = true
	}
	for k := range s.Effective.Options {
		keys[k] = true
	}
	for k := range keys {
		if k != "size" && !sameOption(k, s.Current.Options[k], s.Effective.Options[k]) {
			opts = append(opts, k)
		}
	}
	sort.Strings(opts)
	out := []string{}
	if s.Current.Volume != s.Effective.Volume {
		out = append(out, "volume")
	}
	out = append(out, opts...)
	return out
}

// slotFrom is the slot's state in GET pending's rows.
func slotFrom(items []pve.VMPendingItem, slot string) (*slotState, error) {
	st := &slotState{}
	for _, it := range items {
		if it.Key == "digest" {
			st.Digest = it.Value
			continue
		}
		if it.Key == "boot" {
			st.Boot = it.Value
			if it.HasPending {
				st.Boot = it.Pending
			}
			if it.Delete > 0 {
				st.Boot = ""
			}
			st.BootPending = inBootOrder(it.Value, slot) != inBootOrder(st.Boot, slot)
			continue
		}
		if it.Key != slot {
			continue
		}
		if it.HasValue {
			d, err := pve.ParseDrive(it.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", slot, err)
			}
			st.Current, st.HasCurrent = d, true
			st.Effective, st.HasEffective = d, true
		}
		if it.HasPending {
			d, err := pve.ParseDrive(it.Pending)
			if err != nil {
				return nil, fmt.Errorf("%s (pending): %w", slot, err)
			}
			st.Effective, st.HasEffective = d, true
		}
		st.PendingDelete = it.Delete > 0
	}
	return st, nil
}

// bootOrderWith replaces device old with new in a boot property's order,
// or returns "" when old is not in it.
func bootOrderWith(boot, old, repl string) string {
	var order []string
	found := false
	for _, part := range strings.Split(boot, ",") {
		v, ok := strings.CutPrefix(part, "order=")
		if !ok {
			continue
		}
		for _, dev := range strings.Split(v, ";") {
			if dev == old {
				dev, found = repl, true
			}
			order = append(order, dev)
		}
	}
	if !found {
		return ""
	}
	return "order=" + strings.Join(order, ";")
}

// bootDevices lists the devices of a boot property's order= (PVE 6.3+);
// the legacy form (`cdn`, bootdisk) names no devices.
func bootDevices(boot string) []string {
	for _, part := range strings.Split(boot, ",") {
		if v, ok := strings.CutPrefix(part, "order="); ok && v != "" {
			return strings.Split(v, ";")
		}
	}
	return nil
}

// inBootOrder is whether slot is in the boot property's order.
func inBootOrder(boot, slot string) bool {
	return slices.Contains(bootDevices(boot), slot)
}

// bootOrderSetting is the boot property with slot first in the order
// (in) or without it; "" when the order would be empty.
func bootOrderSetting(boot, slot string, in bool) string {
	var order []string
	if in {
		order = append(order, slot)
	}
	for _, dev := range bootDevices(boot) {
		if dev != slot {
			order = append(order, dev)
		}
	}
	if len(order) == 0 {
		return ""
	}
	return "order=" + strings.Join(order, ";")
}

// setBoot records, when the configuration manages it, whether the slot is
// in the VM's boot order.
func (m *vmDiskModel) setBoot(s *slotState, slot string) {
	if !m.Boot.IsNull() && !m.Boot.IsUnknown() {
		m.Boot = types.BoolValue(inBootOrder(s.Boot, slot))
	}
}

// urlEncodedOpts are the drive options Drive.pm keeps url-encoded: the
// serial number and the model name.
var urlEncodedOpts = []string{"serial", "model"}

// urlEncodeDriveText is a drive's model or serial text as PVE's urlencoded format
// takes it (pve_verify_urlencoded: [-%a-zA-Z0-9_.!~*'()]): every other
// byte as %XX.
func urlEncodeDriveText(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// maxModelBytes is the model's limit: Drive.pm's "up to 40 bytes long"
// (maxLength 120 on the url-encoded text), the ATA model number field.
const maxModelBytes = 40

// validateDriveIdentity refuses model, vendor, product and wwn on a bus
// whose drive format lacks them (Drive.pm: model on IDE, vendor and
// product on SCSI, wwn on all but VirtIO) and a model over 40 bytes.
func validateDriveIdentity(m *vmDiskModel, slot, bus string, diags *diag.Diagnostics) {
	known := func(v types.String) bool { return !v.IsNull() && !v.IsUnknown() }
	busName := map[string]string{"ide": "IDE", "sata": "SATA", "scsi": "SCSI", "virtio": "VirtIO"}[bus]
	refuse := func(attr, has, fix string) {
		diags.AddAttributeError(path.Root(attr), "Option not available on "+busName,
			fmt.Sprintf("PVE has %s only for %s disks; %s is %s. Remove %s, %s.", attr, has, slot, busName, attr, fix))
	}
	if !m.Model.IsNull() && bus != "ide" {
		refuse("model", "IDE", "or use an ideN slot (on SCSI, vendor and product name the drive)")
	}
	if known(m.Model) && len(m.Model.ValueString()) > maxModelBytes {
		diags.AddAttributeError(path.Root("model"), "Model name too long",
			fmt.Sprintf("model = %q is %d bytes; PVE takes up to %d (the ATA model number field). Shorten it.",
				m.Model.ValueString(), len(m.Model.ValueString()), maxModelBytes))
	}
	for _, k := range []string{"vendor", "product"} {
		if !m.strAttr(k).IsNull() && bus != "scsi" {
			refuse(k, "SCSI", "or use a scsiN slot")
		}
	}
	if !m.WWN.IsNull() && bus == "virtio" {
		refuse("wwn", "IDE, SATA and SCSI", "or use a scsiN, sataN or ideN slot")
	}
}
