// Package qemu holds the resources and data sources of PVE's VMs
// (qemu-server): pve_vm (the VM without its disks) and the pve_vm and
// pve_vms data sources.
package qemu

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// PVE's defaults for options the VM config leaves out
// (PVE::QemuServer $confdesc).
const (
	defaultCores   = 1
	defaultSockets = 1
	defaultMemory  = 512
	defaultBIOS    = "seabios"
	defaultOSType  = "other"
	defaultSCSIHW  = "lsi"
)

type vmModel struct {
	ID             types.String `tfsdk:"id"`
	Node           types.String `tfsdk:"node"`
	CurrentNode    types.String `tfsdk:"current_node"`
	VMID           types.Int64  `tfsdk:"vmid"`
	Name           types.String `tfsdk:"name"`
	Description    types.String `tfsdk:"description"`
	Tags           types.Set    `tfsdk:"tags"`
	Cores          types.Int64  `tfsdk:"cores"`
	Sockets        types.Int64  `tfsdk:"sockets"`
	Memory         types.Int64  `tfsdk:"memory"`
	Balloon        types.Int64  `tfsdk:"balloon"`
	CPU            types.String `tfsdk:"cpu"`
	NUMA           types.Bool   `tfsdk:"numa"`
	BIOS           types.String `tfsdk:"bios"`
	Machine        types.String `tfsdk:"machine"`
	OSType         types.String `tfsdk:"ostype"`
	Agent          types.Bool   `tfsdk:"agent"`
	SCSIHW         types.String `tfsdk:"scsihw"`
	BootOrder      types.List   `tfsdk:"boot_order"`
	Network        types.Map    `tfsdk:"network"`
	Serial         types.Map    `tfsdk:"serial"`
	Cdrom          types.Map    `tfsdk:"cdrom"`
	VGA            types.String `tfsdk:"vga"`
	OnBoot         types.Bool   `tfsdk:"onboot"`
	Started        types.Bool   `tfsdk:"started"`
	Protection     types.Bool   `tfsdk:"protection"`
	DestroyDisks   types.Bool   `tfsdk:"destroy_disks"`
	Status         types.String `tfsdk:"status"`
	PendingChanges types.List   `tfsdk:"pending_changes"`
}

var netAttrTypes = map[string]attr.Type{
	"model": types.StringType, "bridge": types.StringType, "mac_address": types.StringType, "tag": types.Int64Type,
	"trunks": types.StringType, "firewall": types.BoolType, "link_down": types.BoolType, "mtu": types.Int64Type,
	"queues": types.Int64Type,
}

var netObjectType = types.ObjectType{AttrTypes: netAttrTypes}

// netDevice is one NIC in plain Go.
type netDevice struct {
	Model, Bridge, MAC, Trunks string
	Tag, MTU, Queues           *int64
	Firewall, LinkDown         bool
}

func (n netDevice) toPVE() string {
	d := pve.NetDevice{Model: n.Model, MAC: n.MAC, Options: map[string]string{}}
	if n.Bridge != "" {
		d.Options["bridge"] = n.Bridge
	}
	if n.Tag != nil {
		d.Options["tag"] = strconv.FormatInt(*n.Tag, 10)
	}
	if n.Trunks != "" {
		d.Options["trunks"] = n.Trunks
	}
	if n.Firewall {
		d.Options["firewall"] = "1"
	}
	if n.LinkDown {
		d.Options["link_down"] = "1"
	}
	if n.MTU != nil {
		d.Options["mtu"] = strconv.FormatInt(*n.MTU, 10)
	}
	if n.Queues != nil {
		d.Options["queues"] = strconv.FormatInt(*n.Queues, 10)
	}
	return d.String()
}

func netFromPVE(d pve.NetDevice) netDevice {
	n := netDevice{Model: d.Model, MAC: d.MAC, Bridge: d.Options["bridge"], Trunks: d.Options["trunks"],
		Firewall: d.Options["firewall"] == "1", LinkDown: d.Options["link_down"] == "1"}
	num := func(k string) *int64 {
		if v, err := strconv.ParseInt(d.Options[k], 10, 64); err == nil {
			return &v
		}
		return nil
	}
	n.Tag, n.MTU, n.Queues = num("tag"), num("mtu"), num("queues")
	return n
}

func i64Value(p *int64) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(*p)
}

func strValue(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func (n netDevice) object() types.Object {
	return types.ObjectValueMust(netAttrTypes, map[string]attr.Value{
		"model": types.StringValue(n.Model), "bridge": strValue(n.Bridge), "mac_address": types.StringValue(n.MAC),
		"tag": i64Value(n.Tag), "trunks": strValue(n.Trunks), "firewall": types.BoolValue(n.Firewall),
		"link_down": types.BoolValue(n.LinkDown), "mtu": i64Value(n.MTU), "queues": i64Value(n.Queues),
	})
}

// netsFromModel reads the network map of a plan (unknown MACs stay "").
func netsFromModel(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]netDevice {
	out := map[string]netDevice{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	var objs map[string]types.Object
	diags.Append(m.ElementsAs(ctx, &objs, false)...)
	for k, o := range objs {
		a := o.Attributes()
		n := netDevice{}
		str := func(name string) string {
			if v, ok := a[name].(types.String); ok && !v.IsNull() && !v.IsUnknown() {
				return v.ValueString()
			}
			return ""
		}
		num := func(name string) *int64 {
			if v, ok := a[name].(types.Int64); ok && !v.IsNull() && !v.IsUnknown() {
				x := v.ValueInt64()
				return &x
			}
			return nil
		}
		boolean := func(name string) bool {
			v, ok := a[name].(types.Bool)
			return ok && !v.IsNull() && !v.IsUnknown() && v.ValueBool()
		}
		n.Model, n.Bridge, n.MAC, n.Trunks = str("model"), str("bridge"), strings.ToUpper(str("mac_address")), str("trunks")
		n.Tag, n.MTU, n.Queues = num("tag"), num("mtu"), num("queues")
		n.Firewall, n.LinkDown = boolean("firewall"), boolean("link_down")
		out[k] = n
	}
	return out
}

// desiredConfig is the VM config the plan asks for, as PVE option values;
// "" means the option is to be absent. nets and serials are keyed netN /
// serialN. Options the provider does not manage are not in it.
type desiredConfig map[string]string

// managedKeys are the plain options pve_vm owns.
var managedKeys = []string{"name", "description", "tags", "cores", "sockets", "memory", "balloon", "cpu", "numa", "bios",
	"machine", "ostype", "agent", "scsihw", "vga", "onboot", "protection"}

func boolStr(b types.Bool) string {
	if b.IsNull() || b.IsUnknown() {
		return ""
	}
	if b.ValueBool() {
		return "1"
	}
	return "0"
}

func intStr(v types.Int64) string {
	if v.IsNull() || v.IsUnknown() {
		return ""
	}
	return strconv.FormatInt(v.ValueInt64(), 10)
}

func (m *vmModel) desired(ctx context.Context, diags *diag.Diagnostics) desiredConfig {
	d := desiredConfig{
		"name": m.Name.ValueString(), "description": m.Description.ValueString(), "cores": intStr(m.Cores),
		"sockets": intStr(m.Sockets), "memory": intStr(m.Memory), "balloon": intStr(m.Balloon), "cpu": m.CPU.ValueString(),
		"numa": boolStr(m.NUMA), "bios": m.BIOS.ValueString(), "machine": m.Machine.ValueString(),
		"ostype": m.OSType.ValueString(), "agent": boolStr(m.Agent), "scsihw": m.SCSIHW.ValueString(), "vga": m.VGA.ValueString(),
		"onboot": boolStr(m.OnBoot), "protection": boolStr(m.Protection),
	}
	if !m.Tags.IsNull() && !m.Tags.IsUnknown() {
		var tags []string
		diags.Append(m.Tags.ElementsAs(ctx, &tags, false)...)
		sort.Strings(tags)
		d["tags"] = strings.Join(tags, ";")
	} else {
		d["tags"] = ""
	}
	for k, n := range netsFromModel(ctx, m.Network, diags) {
		d[k] = n.toPVE()
	}
	if !m.Serial.IsNull() && !m.Serial.IsUnknown() {
		var serials map[string]string
		diags.Append(m.Serial.ElementsAs(ctx, &serials, false)...)
		for k, v := range serials {
			d[k] = v
		}
	}
	return d
}

// isNetKey / isSerialKey name the indexed options pve_vm owns.
func isIndexed(k, prefix string, maxIdx int) bool {
	rest, ok := strings.CutPrefix(k, prefix)
	if !ok {
		return false
	}
	n, err := strconv.Atoi(rest)
	return err == nil && strconv.Itoa(n) == rest && n >= 0 && n <= maxIdx
}

func isNetKey(k string) bool    { return isIndexed(k, "net", 31) }
func isSerialKey(k string) bool { return isIndexed(k, "serial", 3) }

// agentEnabled reads agent's enabled flag (`1`, `enabled=1,...`).
func agentEnabled(v string) bool {
	if v == "" {
		return false
	}
	ps := pve.ParsePropertyString("enabled", v)
	switch strings.ToLower(ps["enabled"]) {
	case "1", "on", "yes", "true":
		return true
	}
	return false
}

// memoryMiB reads memory (`8192` or `current=8192`).
func memoryMiB(v string) int64 {
	if v == "" {
		return defaultMemory
	}
	ps := pve.ParsePropertyString("current", v)
	if n, err := strconv.ParseInt(ps["current"], 10, 64); err == nil {
		return n
	}
	return defaultMemory
}

// bootOrder reads `order=scsi0;net0` (nil for a legacy or absent boot).
func bootOrder(v string) []string {
	ps := pve.ParsePropertyString("legacy", v)
	if ps["order"] == "" {
		return nil
	}
	return strings.Split(ps["order"], ";")
}

// fromConfig fills the model from PVE's config (with pending values) and
// status. prior supplies what PVE cannot report (destroy_disks) and the
// configured boot order while devices it names are still missing.
func (m *vmModel) fromConfig(node string, vmid int64, cfg *pve.VMConfig, running bool, pending []string, prior *vmModel) {
	v := cfg.Values
	m.ID = types.StringValue(strconv.FormatInt(vmid, 10))
	m.Node, m.CurrentNode = types.StringValue(node), types.StringValue(node)
	m.VMID = types.Int64Value(vmid)
	m.namesFromConfig(v, prior)
	m.hardwareFromConfig(cfg)
	m.BootOrder = bootOrderFromConfig(v, prior)
	m.devicesFromConfig(v)
	m.Cdrom = cdromsFromConfig(v, prior)
	m.Started = types.BoolValue(running)
	if running {
		m.Status = types.StringValue("running")
	} else {
		m.Status = types.StringValue("stopped")
	}
	pend := make([]attr.Value, 0, len(pending))
	for _, k := range pending {
		pend = append(pend, types.StringValue(k))
	}
	m.PendingChanges = types.ListValueMust(types.StringType, pend)
	if prior != nil && !prior.DestroyDisks.IsNull() && !prior.DestroyDisks.IsUnknown() {
		m.DestroyDisks = prior.DestroyDisks
	} else {
		m.DestroyDisks = types.BoolValue(false)
	}
}

// namesFromConfig fills name, description and tags.
func (m *vmModel) namesFromConfig(v map[string]string, prior *vmModel) {
	m.Name = strValue(v["name"])
	m.Description = strValue(v["description"])
	// PVE strips trailing whitespace from the description (a heredoc's
	// final newline): the configured text stands for what PVE has.
	if prior != nil && !prior.Description.IsNull() && !prior.Description.IsUnknown() &&
		strings.TrimRight(prior.Description.ValueString(), " \t\r\n") == v["description"] {
		m.Description = prior.Description
	}
	if t := v["tags"]; t != "" {
		var vals []attr.Value
		for _, tag := range strings.FieldsFunc(t, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			vals = append(vals, types.StringValue(tag))
		}
		m.Tags = types.SetValueMust(types.StringType, vals)
	} else {
		m.Tags = types.SetNull(types.StringType)
	}
}

// hardwareFromConfig fills CPU, memory, firmware, controller and the
// flags, with PVE's defaults for what the config leaves out.
func (m *vmModel) hardwareFromConfig(cfg *pve.VMConfig) {
	v := cfg.Values
	m.Cores = types.Int64Value(cfg.Int("cores", defaultCores))
	m.Sockets = types.Int64Value(cfg.Int("sockets", defaultSockets))
	m.Memory = types.Int64Value(memoryMiB(v["memory"]))
	if _, ok := v["balloon"]; ok {
		m.Balloon = types.Int64Value(cfg.Int("balloon", 0))
	} else {
		m.Balloon = types.Int64Null()
	}
	m.CPU = strValue(v["cpu"])
	m.NUMA = types.BoolValue(cfg.Bool("numa", false))
	m.BIOS = types.StringValue(orDefault(v["bios"], defaultBIOS))
	m.Machine = strValue(v["machine"])
	m.OSType = types.StringValue(orDefault(v["ostype"], defaultOSType))
	m.Agent = types.BoolValue(agentEnabled(v["agent"]))
	m.SCSIHW = types.StringValue(orDefault(v["scsihw"], defaultSCSIHW))
	m.VGA = strValue(v["vga"])
	m.OnBoot = types.BoolValue(cfg.Bool("onboot", false))
	m.Protection = types.BoolValue(cfg.Bool("protection", false))
}

// bootOrderFromConfig is PVE's boot order, or the configured one (prior)
// while devices it names are still missing; null when not configured.
func bootOrderFromConfig(v map[string]string, prior *vmModel) types.List {
	have := bootOrder(v["boot"])
	order := have
	if prior != nil && prior.BootOrder.IsNull() {
		// Not configured: the provider leaves PVE's boot order alone.
		order = nil
	} else if prior != nil && !prior.BootOrder.IsUnknown() {
		var want []string
		prior.BootOrder.ElementsAs(context.Background(), &want, false)
		// Devices the VM does not have yet (disks of pve_vm_disk created
		// after the VM) cannot be in PVE's order; the configured order
		// stands while PVE has the rest of it.
		var present []string
		for _, dev := range want {
			if _, ok := v[dev]; ok {
				present = append(present, dev)
			}
		}
		if strings.Join(present, ";") == strings.Join(have, ";") {
			order = want
		}
	}
	if order == nil {
		return types.ListNull(types.StringType)
	}
	vals := make([]attr.Value, 0, len(order))
	for _, dev := range order {
		vals = append(vals, types.StringValue(dev))
	}
	return types.ListValueMust(types.StringType, vals)
}

// devicesFromConfig fills the NICs and serial ports.
func (m *vmModel) devicesFromConfig(v map[string]string) {
	nets := map[string]attr.Value{}
	serials := map[string]attr.Value{}
	for k, val := range v {
		switch {
		case isNetKey(k):
			if d, err := pve.ParseNetDevice(val); err == nil {
				nets[k] = netFromPVE(d).object()
			}
		case isSerialKey(k):
			serials[k] = types.StringValue(val)
		}
	}
	if len(nets) == 0 {
		m.Network = types.MapNull(netObjectType)
	} else {
		m.Network = types.MapValueMust(netObjectType, nets)
	}
	if len(serials) == 0 {
		m.Serial = types.MapNull(types.StringType)
	} else {
		m.Serial = types.MapValueMust(types.StringType, serials)
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// configUpdate compares what PVE has (cfg, pending values included) with
// the plan and returns the options to set and to delete. Options the
// provider does not manage are left alone.
func configUpdate(vmid int64, cfg *pve.VMConfig, want desiredConfig, cdroms map[string]string, cdromsManaged bool, wantBoot []string, plannedBoot bool) (pve.Params, []string, error) {
	set := pve.Params{}
	var del []string
	have := cfg.Values
	for _, k := range managedKeys {
		w := want[k]
		h, present := have[k]
		switch {
		case w == "" && present:
			del = append(del, k)
		case w == "":
		case k == "memory" && memoryMiB(h) == memoryMiB(w) && present:
		case k == "agent" && present && agentEnabled(h) == agentEnabled(w) && !strings.Contains(h, "="):
		case k == "tags" && present && normalizeTags(h) == w:
		case k == "description" && present && strings.TrimRight(w, " \t\r\n") == h:
		case !present || h != w:
			set[k] = w
		}
	}
	for k, h := range have {
		if (isNetKey(k) || isSerialKey(k)) && want[k] == "" {
			del = append(del, k)
			continue
		}
		if w, ok := want[k]; ok && (isNetKey(k) || isSerialKey(k)) && w != h {
			set[k] = w
		}
	}
	for k, w := range want {
		if _, ok := have[k]; !ok && (isNetKey(k) || isSerialKey(k)) && w != "" {
			set[k] = w
		}
	}
	if cdromsManaged {
		if err := cdromUpdate(vmid, have, cdroms, set, &del); err != nil {
			return nil, nil, err
		}
	}
	if plannedBoot {
		var present []string
		for _, dev := range wantBoot {
			if _, ok := have[dev]; (ok && !slices.Contains(del, dev)) || set[dev] != "" {
				present = append(present, dev)
			}
		}
		if len(present) > 0 && strings.Join(bootOrder(have["boot"]), ";") != strings.Join(present, ";") {
			set["boot"] = "order=" + strings.Join(present, ";")
		}
	}
	sort.Strings(del)
	return set, del, nil
}

func normalizeTags(v string) string {
	tags := strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
	sort.Strings(tags)
	return strings.Join(tags, ";")
}

func vmLabel(vmid int64) string { return fmt.Sprintf("%d", vmid) }
