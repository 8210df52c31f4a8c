package network

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The management path is what carries the address the provider (API and
// SSH) reaches a node on: the interface holding it, recursively its bridge
// ports, bond slaves and VLAN raw device, and the default gateways. A
// reload that changes any of it may cut the node off, so it is applied
// behind the dead-man timer (node_network_rollback.go).

// touchesManagementPath reports whether going from the interface list
// before to the list after changes the management path of addr, and
// describes the change for the user, such as "moves 172.27.2.10/24 from
// vmbr0 (port bcm5720p0) to bridge0 (port bond0: bcm5720p0, bcm5720p1);
// default gateway 172.27.2.254 from vmbr0 to bridge0". An address no
// interface held before is not managed through these interfaces: nothing
// the change does can cut it off, so it reports false.
func touchesManagementPath(addr string, before, after []pve.NetworkInterface) (bool, string) {
	ip, err := netip.ParseAddr(strings.TrimSpace(addr))
	if err != nil {
		return false, ""
	}
	ip = ip.Unmap()
	hb := addressHolder(ip, before)
	if hb == nil {
		return false, ""
	}
	ha := addressHolder(ip, after)
	var parts []string
	switch {
	case ha == nil:
		if now := findInterface(after, hb.Iface); now != nil {
			parts = append(parts, fmt.Sprintf("changes %s, which holds the management address %s: %s",
				hb.Iface, ip, strings.Join(ifaceDiff(hb, now), ", ")))
		} else {
			parts = append(parts, fmt.Sprintf("removes %s, which holds the management address %s", describePath(before, hb.Iface), cidrFor(hb, ip)))
		}
	case ha.Iface != hb.Iface:
		s := fmt.Sprintf("moves %s from %s to %s", cidrFor(hb, ip), describePath(before, hb.Iface), describePath(after, ha.Iface))
		if nb, na := cidrFor(hb, ip), cidrFor(ha, ip); nb != na {
			s += " as " + na
		}
		parts = append(parts, s)
	default:
		names := pathNames(before, hb.Iface)
		for _, n := range pathNames(after, ha.Iface) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		for _, n := range names {
			b, a := findInterface(before, n), findInterface(after, n)
			what := fmt.Sprintf("%s, which holds the management address %s", n, ip)
			if n != hb.Iface {
				what = fmt.Sprintf("%s (on the path of %s on %s)", n, ip, hb.Iface)
			}
			switch {
			case b == nil && a != nil:
				parts = append(parts, "adds "+describePath(after, n)+" to the path of "+ip.String()+" on "+hb.Iface)
			case b != nil && a == nil:
				parts = append(parts, "removes "+what)
			case b != nil && a != nil:
				if d := ifaceDiff(b, a); len(d) > 0 {
					parts = append(parts, "changes "+what+": "+strings.Join(d, ", "))
				}
			}
		}
	}
	parts = append(parts, gatewayChanges(before, after)...)
	if len(parts) == 0 {
		return false, ""
	}
	return true, strings.Join(parts, "; ")
}

// addressHolder is the interface whose IPv4 or IPv6 address is ip.
func addressHolder(ip netip.Addr, list []pve.NetworkInterface) *pve.NetworkInterface {
	for i := range list {
		in := &list[i]
		for _, c := range []string{interfaceCIDR(in.CIDR, in.Address, in.Netmask), interfaceCIDR(in.CIDR6, in.Address6, in.Netmask6)} {
			if a, ok := cidrAddr(c); ok && a == ip {
				return in
			}
		}
	}
	return nil
}

func cidrAddr(c string) (netip.Addr, bool) {
	host, _, _ := strings.Cut(c, "/")
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// cidrFor is the address with its prefix as in holds it ("172.27.2.10/24").
func cidrFor(in *pve.NetworkInterface, ip netip.Addr) string {
	c := interfaceCIDR(in.CIDR, in.Address, in.Netmask)
	if ip.Is6() {
		c = interfaceCIDR(in.CIDR6, in.Address6, in.Netmask6)
	}
	if c == "" {
		return ip.String()
	}
	return c
}

// lowerDevices are what an interface's traffic goes through: a bridge's
// ports, a bond's slaves, a VLAN's raw device (named or implied by a
// parent.id name).
func lowerDevices(in *pve.NetworkInterface) []string {
	var out []string
	out = append(out, ifaceList(in.BridgePorts)...)
	out = append(out, ifaceList(in.Slaves)...)
	if in.Type == typeVLAN || in.VLANRawDevice != "" {
		raw := in.VLANRawDevice
		if raw == "" {
			raw, _, _ = splitDottedVLAN(in.Iface)
		}
		if raw != "" {
			out = append(out, raw)
		}
	}
	return out
}

// pathNames is name and, recursively, every interface below it, name first.
func pathNames(list []pve.NetworkInterface, name string) []string {
	var out []string
	var walk func(string)
	walk = func(n string) {
		if slices.Contains(out, n) {
			return
		}
		out = append(out, n)
		if in := findInterface(list, n); in != nil {
			for _, l := range lowerDevices(in) {
				walk(l)
			}
		}
	}
	walk(name)
	return out
}

// describePath renders an interface with what is below it: "vmbr0 (port
// bcm5720p0)", "bridge0 (port bond0: bcm5720p0, bcm5720p1)", "bridge0 (no
// ports)".
func describePath(list []pve.NetworkInterface, name string) string {
	in := findInterface(list, name)
	if in == nil {
		return name
	}
	var sub func(n string, depth int) string
	sub = func(n string, depth int) string {
		i := findInterface(list, n)
		if i == nil || depth > 4 {
			return n
		}
		low := lowerDevices(i)
		if len(low) == 0 {
			return n
		}
		parts := make([]string, len(low))
		for k, l := range low {
			parts[k] = sub(l, depth+1)
		}
		if i.Type == typeVLAN {
			return n + " on " + strings.Join(parts, ", ")
		}
		return n + ": " + strings.Join(parts, ", ")
	}
	low := lowerDevices(in)
	var noun string
	switch in.Type {
	case typeBridge:
		noun = "port"
	case typeBond:
		noun = "slave"
	case typeVLAN:
		noun = "on"
	}
	if noun == "" {
		return name
	}
	if len(low) == 0 {
		return name + " (no " + noun + "s)"
	}
	if len(low) > 1 && noun != "on" {
		noun += "s"
	}
	parts := make([]string, len(low))
	for k, l := range low {
		parts[k] = sub(l, 1)
	}
	return name + " (" + noun + " " + strings.Join(parts, ", ") + ")"
}

// ifaceDiff lists the settings that differ between two versions of one
// interface, as "cidr 172.27.2.10/24 -> 172.27.2.10/8". Gateways are left
// to gatewayChanges; comments and the kernel's state do not change the path.
func ifaceDiff(b, a *pve.NetworkInterface) []string {
	var out []string
	cmp := func(name, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s -> %s", name, orNone(x), orNone(y)))
		}
	}
	sorted := func(l []string) string {
		l = slices.Clone(ifaceList(l))
		sort.Strings(l)
		return strings.Join(l, " ")
	}
	num := func(n int64) string {
		if n == 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	yes := func(v bool) string { return strconv.FormatBool(v) }
	cmp("type", b.Type, a.Type)
	cmp("method", b.Method, a.Method)
	cmp("cidr", interfaceCIDR(b.CIDR, b.Address, b.Netmask), interfaceCIDR(a.CIDR, a.Address, a.Netmask))
	cmp("method6", b.Method6, a.Method6)
	cmp("cidr6", interfaceCIDR(b.CIDR6, b.Address6, b.Netmask6), interfaceCIDR(a.CIDR6, a.Address6, a.Netmask6))
	cmp("mtu", num(b.MTU), num(a.MTU))
	cmp("autostart", yes(b.Autostart), yes(a.Autostart))
	cmp("bridge_ports", sorted(b.BridgePorts), sorted(a.BridgePorts))
	cmp("bridge_vlan_aware", yes(b.BridgeVLANAware), yes(a.BridgeVLANAware))
	cmp("bridge_vids", normalizeVIDs(b.BridgeVIDs), normalizeVIDs(a.BridgeVIDs))
	cmp("slaves", sorted(b.Slaves), sorted(a.Slaves))
	cmp("bond_mode", b.BondMode, a.BondMode)
	cmp("bond_xmit_hash_policy", b.BondXmitHashPolicy, a.BondXmitHashPolicy)
	cmp("bond_primary", b.BondPrimary, a.BondPrimary)
	cmp("vlan_id", num(b.VLANID), num(a.VLANID))
	cmp("vlan_raw_device", b.VLANRawDevice, a.VLANRawDevice)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

type gatewayLine struct{ iface, gw string }

// gatewayChanges describes how the default gateways (one per family) move
// or change between the two lists.
func gatewayChanges(before, after []pve.NetworkInterface) []string {
	var out []string
	for _, fam := range []string{"", "6"} {
		b, a := gatewayOf(before, fam), gatewayOf(after, fam)
		if b == a {
			continue
		}
		name := "default gateway"
		if fam == "6" {
			name = "default IPv6 gateway"
		}
		switch {
		case a.gw == "":
			out = append(out, fmt.Sprintf("removes the %s %s (on %s)", name, b.gw, b.iface))
		case b.gw == "":
			out = append(out, fmt.Sprintf("adds the %s %s on %s", name, a.gw, a.iface))
		case b.gw == a.gw:
			out = append(out, fmt.Sprintf("%s %s from %s to %s", name, b.gw, b.iface, a.iface))
		case b.iface == a.iface:
			out = append(out, fmt.Sprintf("%s on %s from %s to %s", name, b.iface, b.gw, a.gw))
		default:
			out = append(out, fmt.Sprintf("%s %s on %s becomes %s on %s", name, b.gw, b.iface, a.gw, a.iface))
		}
	}
	return out
}

// gatewayOf is the family's gateway line; PVE allows one per node, and if
// a list had more the first in name order stands for them.
func gatewayOf(list []pve.NetworkInterface, fam string) gatewayLine {
	var lines []gatewayLine
	for _, in := range list {
		gw := in.Gateway
		if fam == "6" {
			gw = in.Gateway6
		}
		if gw != "" {
			lines = append(lines, gatewayLine{in.Iface, gw})
		}
	}
	if len(lines) == 0 {
		return gatewayLine{}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].iface < lines[j].iface })
	return lines[0]
}

// The dead-man rollback. PVE has no safety net for a reload that cuts a
// node off: it renames interfaces.new over interfaces before ifreload, so
// the cutting configuration is also the one the node boots with. Before a
// reload that touches the management path the provider therefore keeps a
// copy of /etc/network/interfaces on the node and arms a transient systemd
// timer that puts it back and reloads; it disarms the timer only once the
// API and SSH answer on fresh connections. A node that was cut off
// restores itself, whatever happened to the provider meanwhile.
const (
	rollbackUnit       = "pve-terraform-network-rollback"
	rollbackTimer      = rollbackUnit + ".timer"
	rollbackService    = rollbackUnit + ".service"
	rollbackDir        = "/var/lib/pve-terraform"
	rollbackBackup     = rollbackDir + "/interfaces.rollback"
	rollbackScriptPath = rollbackDir + "/network-rollback"
	interfacesFile     = "/etc/network/interfaces"

	// defaultRollbackTimeout is rollback_timeout_seconds' default: long
	// enough for ifreload and a bond's LACP negotiation, short enough to
	// wait for.
	defaultRollbackTimeout = 120 * time.Second
	// rollbackMargin is what the restore (cp, ifreload) may take after the
	// timer fired before the provider expects the node back.
	rollbackMargin = 5 * time.Second
)

// rollbackScript restores the saved file and reloads. It is fixed text:
// nothing from the configuration reaches it.
const rollbackScript = "#!/bin/sh\n" +
	"set -e\n" +
	"cp " + rollbackBackup + " " + interfacesFile + "\n" +
	"rm -f " + interfacesFile + ".new\n" +
	"ifreload -a\n"

// cutoverConfirmedPrefix starts the warning a confirmed change of the
// management path leaves; addWarnings gives it its own title.
const cutoverConfirmedPrefix = "management cutover on "

func (o networkApplyOptions) timeout() time.Duration {
	if o.RollbackTimeout <= 0 {
		return defaultRollbackTimeout
	}
	return o.RollbackTimeout
}

// managementAddresses are the addresses the provider reaches node on that
// matter for its network: the API endpoint's and the SSH address's host
// when the node holds them on one of its interfaces, else the address PVE
// reports for the node (GET /cluster/status).
func managementAddresses(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, list []pve.NetworkInterface) ([]string, error) {
	var candidates []string
	if u, err := url.Parse(c.Endpoint()); err == nil {
		candidates = append(candidates, u.Hostname())
	}
	if pd.NodeExec != nil {
		if a, err := pd.NodeExec.Address(ctx, node); err == nil {
			candidates = append(candidates, a.Host)
		}
	}
	var out []string
	for _, h := range candidates {
		ip, err := netip.ParseAddr(h)
		if err != nil || addressHolder(ip.Unmap(), list) == nil || slices.Contains(out, ip.Unmap().String()) {
			continue
		}
		out = append(out, ip.Unmap().String())
	}
	if len(out) > 0 {
		return out, nil
	}
	ip, err := pd.NodeIP(ctx, node)
	if err != nil {
		return nil, err
	}
	return []string{ip}, nil
}

// managementChange is the description of how after changes the management
// path of node ("" when it does not), and the management address after
// leaves on no interface ("" when none).
func managementChange(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, before, after []pve.NetworkInterface) (desc, lost string, err error) {
	addrs, err := managementAddresses(ctx, pd, c, node, before)
	if err != nil {
		return "", "", fmt.Errorf("find the management address of node %s: %w", node, err)
	}
	var descs []string
	for _, a := range addrs {
		if touched, d := touchesManagementPath(a, before, after); touched && !slices.Contains(descs, d) {
			descs = append(descs, d)
		}
		if lost == "" {
			lost = lostManagementAddress(a, before, after)
		}
	}
	return strings.Join(descs, "; "), lost, nil
}

// lostManagementAddress is addr as before holds it ("172.27.2.10/24 on
// vmbr0") when after holds it on no interface, else "". An interface that
// takes its address from DHCP may get it back, so it does not count.
func lostManagementAddress(addr string, before, after []pve.NetworkInterface) string {
	ip, err := netip.ParseAddr(strings.TrimSpace(addr))
	if err != nil {
		return ""
	}
	ip = ip.Unmap()
	hb := addressHolder(ip, before)
	if hb == nil || addressHolder(ip, after) != nil {
		return ""
	}
	if now := findInterface(after, hb.Iface); now != nil {
		method := now.Method
		if ip.Is6() {
			method = now.Method6
		}
		if method == "dhcp" || method == "auto" {
			return ""
		}
	}
	return cidrFor(hb, ip) + " on " + hb.Iface
}

// lostAddressDetail explains why a change that removes the management
// address is refused whatever the SSH settings: the provider could never
// confirm it, so with the rollback the node undoes it after the timer, and
// without it the node stays cut off.
func lostAddressDetail(node, desc, lost string) string {
	return fmt.Sprintf("This change %s. The provider reaches node %s on %s, and no interface of the node would hold that "+
		"address afterwards: the reload would cut the node off, and the provider could not confirm the change (the dead-man "+
		"rollback would undo it after rollback_timeout_seconds; without the rollback the node would stay unreachable).\n\n"+
		"Keep the address on an interface. To move it to another interface, set the same cidr there in the same "+
		"pve_node_network_config (one reload moves it). To give the node a new management address, add the new one first, "+
		"point the provider's endpoint and ssh settings at it, then remove the old one.", desc, node, lost)
}

// checkManagementChange is the plan-time check: a change that removes the
// management address is refused (as the destroy of destroying, when the
// change is a destroy); a change of the management path needs SSH for its
// rollback, or the explicit opt-out. The SSH check stays quiet while the
// provider's SSH settings are not known until apply (the apply checks
// again).
func checkManagementChange(ctx context.Context, pd *framework.ProviderData, node string, before, after []pve.NetworkInterface, opts networkApplyOptions, destroying string) diag.Diagnostics {
	var diags diag.Diagnostics
	if pd == nil || pd.Client == nil {
		return diags
	}
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return diags // the apply reports it
	}
	desc, lost, err := managementChange(ctx, pd, c, node, before, after)
	if err != nil {
		tflog.Warn(ctx, "could not check whether the change touches the management path at plan", map[string]any{"node": node, "error": err.Error()})
		return diags
	}
	if lost != "" {
		if destroying != "" {
			framework.RefuseDestroy(&diags, "", destroying, lostAddressDetail(node, desc, lost))
		} else {
			diags.AddError("Change would remove the management address of node "+node, lostAddressDetail(node, desc, lost))
		}
		return diags
	}
	if pd.NodeExec != nil || pd.NodeExecDeferred || opts.AllowWithoutRollback {
		return diags
	}
	if desc != "" {
		diags.AddError("Management network change on node "+node+" needs SSH for its rollback", noRollbackDetail(pd, node, desc))
	}
	return diags
}

func noRollbackDetail(pd *framework.ProviderData, node, desc string) string {
	reason := pd.NodeExecUnavailable
	if reason == "" {
		reason = "The provider has no SSH configuration."
	}
	return fmt.Sprintf("This change touches the management path of node %s: it %s.\n\n"+
		"If the new configuration cuts the node off, only a timer on the node can bring the old one back, and the provider "+
		"arms that timer over SSH. %s\n\nConfigure the provider's ssh block for node %s, or set "+
		"allow_management_change_without_rollback = true to apply the change without a safety net.\n\n%s",
		node, desc, reason, node, framework.SSHHowTo)
}

// ManagementRollbackError is a change of the management path that cut the
// node off and was rolled back by the dead-man timer (or, with Reachable
// false, should have been).
type ManagementRollbackError struct {
	Node, Change string
	// Reachable: the node answered again after the restore.
	Reachable bool
	// Restored: /etc/network/interfaces is the saved copy again.
	Restored bool
	Timeout  time.Duration
	Cause    error
}

func (e *ManagementRollbackError) Error() string {
	head := fmt.Sprintf("the network change on node %s cut the provider off from the node: it %s.\n\n"+
		"After the reload the node did not answer the API and SSH on new connections in time: %v.\n\n", e.Node, e.Change, e.Cause)
	if e.Reachable {
		s := head + fmt.Sprintf("The dead-man timer (%s after it was armed) restored the previous /etc/network/interfaces and reloaded; "+
			"the node answers again (API and SSH). Nothing of this change is left on the node.", e.Timeout)
		if !e.Restored {
			s += " (Warning: /etc/network/interfaces does not match the saved copy " + rollbackBackup + "; check it.)"
		}
		return s + " Fix the configuration and apply again."
	}
	return head + fmt.Sprintf("The dead-man timer should have restored the previous configuration %s after it was armed, "+
		"but the node still does not answer. At the node's console run:\n\n"+
		"  systemctl status %s %s\n  cp %s %s\n  rm -f %s.new\n  ifreload -a\n\n"+
		"then run Terraform again.", e.Timeout, rollbackTimer, rollbackService, rollbackBackup, interfacesFile, interfacesFile)
}

func (e *ManagementRollbackError) Unwrap() error { return e.Cause }

// managementGuard is one armed (or, without SSH, opted-out) change of the
// management path.
type managementGuard struct {
	pd      *framework.ProviderData
	c       *pve.Client
	node    string
	change  string
	timeout time.Duration
	// armed is false when the change goes ahead without a timer.
	armed bool
	// armedAt bounds when the timer fires: not before armedAt+timeout.
	armedAt, armedDone time.Time
}

// probeTimeout bounds each request that checks whether the node answers:
// a node that was cut off does not refuse, it never answers.
func (g *managementGuard) probeTimeout() time.Duration {
	return min(max(g.timeout/10, time.Second), 10*time.Second)
}

// guardManagementChange runs after staging: when the staged change touches
// the management path it arms the rollback (or, without SSH, checks the
// opt-out) and returns the guard the reload must go through; nil when the
// change does not touch the management path.
func guardManagementChange(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, before []pve.NetworkInterface, opts networkApplyOptions) (*managementGuard, error) {
	staged, err := c.Network(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("read the staged network configuration of node %s: %w", node, err)
	}
	desc, lost, err := managementChange(ctx, pd, c, node, before, staged.Interfaces)
	if err != nil {
		// Without the address the provider cannot tell whether the change
		// touches the path it reaches the node on: guard it as if it did.
		tflog.Warn(ctx, "could not tell whether the change touches the management path; guarding it as if it did", map[string]any{"node": node, "error": err.Error()})
		desc, lost = fmt.Sprintf("changes the network of node %s, whose management address could not be determined (%v)", node, err), ""
	}
	if lost != "" {
		return nil, errors.New(lostAddressDetail(node, desc, lost) + "\n\nThe staged change was reverted; nothing changed on the node.")
	}
	if desc == "" {
		return nil, nil
	}
	g := &managementGuard{pd: pd, c: c, node: node, change: desc, timeout: opts.timeout()}
	if pd.NodeExec == nil {
		if !opts.AllowWithoutRollback {
			return nil, errors.New(noRollbackDetail(pd, node, desc) + "\n\nThe staged change was reverted; nothing changed on the node.")
		}
		tflog.Warn(ctx, "changing the management path without a rollback (allow_management_change_without_rollback)", map[string]any{"node": node, "change": desc})
		return g, nil
	}
	if err := g.arm(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// arm saves the current interfaces file, writes the restore script and
// starts the timer. A timer of ours still armed means an earlier run was
// interrupted before it confirmed or disarmed: arming again would replace
// its backup, so it refuses.
func (g *managementGuard) arm(ctx context.Context) error {
	ne := g.pd.NodeExec
	active, sub, err := g.timerState(ctx, 0)
	if err != nil {
		return fmt.Errorf("check for an armed network rollback timer on node %s: %w", g.node, err)
	}
	switch {
	case active == "active" && sub == "elapsed":
		// A timer fires once and then stays loaded (RemainAfterElapse=
		// defaults to yes): an earlier rollback ran. Stopping it frees the
		// name for this one.
		tflog.Info(ctx, "collecting the elapsed network rollback timer of an earlier run", map[string]any{"node": g.node})
		if _, err := ne.Run(ctx, g.node, nodeexec.Cmd("systemctl", "stop", rollbackTimer).AcceptExit(5)); err != nil {
			return fmt.Errorf("collect the elapsed network rollback timer of an earlier run on node %s: %w", g.node, err)
		}
	case active == "active" || active == "activating" || active == "reloading":
		return fmt.Errorf("a network rollback timer of an earlier run is armed on node %s (%s): an earlier apply was interrupted "+
			"before it confirmed a change of the management path. When it fires it restores /etc/network/interfaces from %s and reloads. "+
			"Check it on the node with `systemctl list-timers %s` and `diff %s %s`. If the current configuration is the one you want, "+
			"stop it with `systemctl stop %s` and run Terraform again; otherwise let it fire first. The staged change was reverted",
			g.node, rollbackTimer, rollbackBackup, rollbackTimer, rollbackBackup, interfacesFile, rollbackTimer)
	}
	current, err := ne.ReadFile(ctx, g.node, interfacesFile)
	if err != nil {
		return fmt.Errorf("save %s of node %s before changing its management path: %w", interfacesFile, g.node, err)
	}
	if err := ne.WriteFile(ctx, g.node, nodeexec.File{Path: rollbackBackup, Content: current, Mode: 0o644, MakeDirs: true}); err != nil {
		return fmt.Errorf("save %s of node %s to %s: %w", interfacesFile, g.node, rollbackBackup, err)
	}
	if err := ne.WriteFile(ctx, g.node, nodeexec.File{Path: rollbackScriptPath, Content: []byte(rollbackScript), Mode: 0o755, MakeDirs: true}); err != nil {
		g.cleanup(ctx)
		return fmt.Errorf("write the network rollback script on node %s: %w", g.node, err)
	}
	g.armedAt = time.Now()
	secs := strconv.FormatInt(int64(g.timeout.Round(time.Second)/time.Second), 10)
	if _, err := ne.Run(ctx, g.node, nodeexec.Cmd("systemd-run", "--unit="+rollbackUnit, "--on-active="+secs,
		"--timer-property=AccuracySec=1s", "--collect", rollbackScriptPath)); err != nil {
		g.cleanup(ctx)
		return fmt.Errorf("arm the network rollback timer on node %s: %w", g.node, err)
	}
	g.armedDone, g.armed = time.Now(), true
	tflog.Info(ctx, "network rollback armed: the node restores its previous /etc/network/interfaces unless the provider confirms the change",
		map[string]any{"node": g.node, "change": g.change, "timeout": g.timeout.String(), "backup": rollbackBackup})
	return nil
}

// timerState is the rollback timer's ActiveState and SubState ("inactive",
// "dead" when there is none; "active", "waiting" while armed; "active",
// "elapsed" after it fired).
func (g *managementGuard) timerState(ctx context.Context, timeout time.Duration) (active, sub string, err error) {
	cmd := nodeexec.Cmd("systemctl", "show", "--property=ActiveState,SubState", rollbackTimer)
	if timeout > 0 {
		cmd.WithTimeout(timeout)
	}
	res, err := g.pd.NodeExec.Run(ctx, g.node, cmd)
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "ActiveState":
			active = v
		case "SubState":
			sub = v
		}
	}
	return active, sub, nil
}

// cleanup removes the backup and the script.
func (g *managementGuard) cleanup(ctx context.Context) {
	for _, p := range []string{rollbackBackup, rollbackScriptPath} {
		dctx, cancel := detached(ctx)
		err := g.pd.NodeExec.RemoveFile(dctx, g.node, p)
		cancel()
		if err != nil {
			tflog.Warn(ctx, "could not remove a file of the network rollback", map[string]any{"node": g.node, "path": p, "error": err.Error()})
		}
	}
}

// disarm stops the timer and removes the backup. A timer left armed
// would undo a good change, so it retries until three quarters of the
// timer's time have passed and then says so. It runs on even when the
// apply is interrupted meanwhile: the change is confirmed (or was never
// applied), and only the timer could still undo it.
func (g *managementGuard) disarm(ctx context.Context) error {
	ne := g.pd.NodeExec
	deadline := g.armedAt.Add(g.timeout * 3 / 4)
	dctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	var lastErr error
	for {
		_, err := ne.Run(dctx, g.node, nodeexec.Cmd("systemctl", "stop", rollbackTimer).AcceptExit(5).WithTimeout(g.probeTimeout()))
		if err == nil {
			var active string
			active, _, err = g.timerState(dctx, g.probeTimeout())
			if err == nil && active != "active" {
				g.cleanup(ctx)
				return nil
			}
			if err == nil {
				err = errors.New("the timer is still active after systemctl stop")
			}
		}
		lastErr = err
		ne.Forget(g.node)
		if sleepCtx(dctx, min(500*time.Millisecond, time.Until(deadline))) != nil || time.Now().After(deadline) {
			return fmt.Errorf("the network change on node %s was confirmed (it %s), but the rollback timer could not be stopped (%v). "+
				"It will restore the previous /etc/network/interfaces at about %s: stop it on the node now with `systemctl stop %s`",
				g.node, g.change, lastErr, g.armedDone.Add(g.timeout).UTC().Format(time.TimeOnly+" UTC"), rollbackTimer)
		}
	}
}

// confirmWindow is how long the node has to answer after the reload, and
// the time that ends: without a rollback timer all of timeout; with one,
// half of the timer's time, as what is left is for disarming before it
// fires.
func (g *managementGuard) confirmWindow() (time.Duration, time.Time) {
	if !g.armed {
		return g.timeout, time.Now().Add(g.timeout)
	}
	window := g.timeout / 2
	return window, g.armedAt.Add(window)
}

// reloadRefused undoes the staging and the rollback timer after PVE
// refused to start the reload (nothing was applied), and returns why.
func (g *managementGuard) reloadRefused(ctx context.Context, err error) error {
	revertStaged(ctx, g.c, g.node)
	if g.armed {
		if derr := g.disarm(ctx); derr != nil {
			return fmt.Errorf("staging succeeded but the network reload could not be started (the staged change was reverted): %w\n\n%w", err, derr)
		}
	}
	return fmt.Errorf("staging succeeded but the network reload could not be started (the staged change was reverted): %w", err)
}

// reload applies the staged change behind the guard and confirms the node
// still answers; see the comment on the constants above.
func (g *managementGuard) reload(ctx context.Context) ([]string, error) {
	defer g.pd.NodeNetworkChanged(ctx, g.node)
	tflog.Info(ctx, "applying a change of the management path", map[string]any{"node": g.node, "change": g.change, "rollback_armed": g.armed})
	window, confirmBy := g.confirmWindow()

	var warnings []string
	var taskErr, noAnswer error
	upid, lost, err := g.startReload(ctx, confirmBy)
	if err != nil {
		var apiErr *pve.APIError
		if errors.As(err, &apiErr) && apiErr.StatusCode < 595 {
			return nil, g.reloadRefused(ctx, err)
		}
		// No answer: the reload may be running; the confirmation decides.
		noAnswer = err
		tflog.Info(ctx, "no answer to the reload request; checking whether the node answers", map[string]any{"node": g.node, "error": err.Error()})
	} else {
		res, err := g.waitReload(ctx, upid, confirmBy)
		var te *pve.TaskError
		switch {
		case err == nil:
			if res.Warnings > 0 {
				warnings = append(warnings, fmt.Sprintf("ifreload finished with %d warning(s):\n%s", res.Warnings, strings.Join(res.Log, "\n")))
			}
		case errors.As(err, &te):
			taskErr = err
		default:
			tflog.Info(ctx, "the reload task's status is unreachable; checking whether the node answers", map[string]any{"node": g.node, "error": err.Error()})
		}
	}

	tflog.Info(ctx, "confirming the node answers after the reload (fresh API and SSH connections)", map[string]any{"node": g.node, "until": confirmBy.Format(time.RFC3339)})
	if err := g.confirm(ctx, confirmBy); err != nil {
		if !g.armed {
			return nil, fmt.Errorf("the network change on node %s cut the provider off from the node: it %s.\n\n"+
				"After the reload it did not answer within %s: %v.\n\nThere was no rollback (allow_management_change_without_rollback): "+
				"PVE already made the new configuration /etc/network/interfaces, so the node also boots with it. At the node's console, "+
				"correct /etc/network/interfaces (the PVE UI's previous values, or a backup), run `ifreload -a`, then run Terraform again",
				g.node, g.change, window, err)
		}
		return nil, g.awaitRollback(ctx, err)
	}
	if g.armed {
		if err := g.disarm(ctx); err != nil {
			return nil, err
		}
		tflog.Info(ctx, "management path change confirmed; rollback disarmed", map[string]any{"node": g.node, "change": g.change})
	}
	if taskErr != nil {
		return nil, reloadFailed(ctx, g.c, g.node, taskErr)
	}
	if noAnswer == nil {
		// A lost answer whose task was followed: that task may have been
		// an earlier reload (startReload); what is staged tells.
		noAnswer = lost
	}
	if noAnswer != nil {
		if err := g.notStarted(ctx, noAnswer); err != nil {
			return nil, err
		}
	}
	how := "confirmed: "
	if !g.armed {
		how = "confirmed without a rollback timer: "
	}
	warnings = append(warnings, cutoverConfirmedPrefix+g.node+" "+how+g.change)
	return warnings, nil
}

// notStarted tells, after a reload request that got no answer and a node
// that answers, whether the reload ran: PVE renames interfaces.new over
// interfaces when it does, so a change still staged never ran. That change
// is ours (the apply started with nothing staged); it is reverted, and the
// apply fails rather than report as applied what is only staged.
func (g *managementGuard) notStarted(ctx context.Context, cause error) error {
	dctx, cancel := detached(ctx)
	defer cancel()
	list, err := g.c.Network(dctx, g.node)
	if err != nil {
		return fmt.Errorf("the network reload request on node %s got no answer (%w), and whether it ran cannot be read: %w", g.node, cause, err)
	}
	if strings.TrimSpace(list.Changes) == "" {
		return nil
	}
	revertStaged(ctx, g.c, g.node)
	return fmt.Errorf("the network reload request on node %s got no answer (%v) and the reload never ran: the change (it %s) "+
		"was still staged. The staged change was reverted; nothing changed on the node. Apply again", g.node, cause, g.change)
}

// startReload is PUT /nodes/{node}/network (its lost answer followed
// through its task, node_network_lost.go), bounded: a node the change cuts
// off may never answer it, nor the look for its task.
func (g *managementGuard) startReload(ctx context.Context, by time.Time) (upid string, lost, err error) {
	rctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	return startReload(rctx, g.c, g.node)
}

// waitReload waits for the reload task with a short timeout per request:
// once the reload cut the node off its status does not answer, and the
// time until the deadline is the confirmation's.
func (g *managementGuard) waitReload(ctx context.Context, upid string, by time.Time) (*pve.TaskResult, error) {
	for {
		rctx, cancel := context.WithTimeout(ctx, min(g.probeTimeout()*2, max(time.Until(by), time.Millisecond)))
		res, err := g.c.WaitTask(rctx, upid)
		cancel()
		var te *pve.TaskError
		if err == nil || errors.As(err, &te) || ctx.Err() != nil || time.Now().After(by) {
			return res, err
		}
		g.c.CloseIdleConnections()
	}
}

// confirm returns nil once a fresh API request and a fresh SSH connection
// both answer, trying until by.
func (g *managementGuard) confirm(ctx context.Context, by time.Time) error {
	var lastErr error
	for {
		err := g.probe(ctx)
		if err == nil {
			return nil
		}
		lastErr = err
		if time.Now().After(by) || ctx.Err() != nil {
			return lastErr
		}
		if err := sleepCtx(ctx, min(500*time.Millisecond, time.Until(by))); err != nil {
			return lastErr
		}
	}
}

// probe is one check on new connections: the node's network list through
// the API (forwarded to the node inside a cluster) and, when SSH is
// configured, a command over a new SSH connection.
func (g *managementGuard) probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, g.probeTimeout())
	defer cancel()
	g.c.CloseIdleConnections()
	if _, err := g.c.Network(pctx, g.node); err != nil {
		return fmt.Errorf("API: %w", err)
	}
	if g.pd.NodeExec == nil {
		return nil
	}
	g.pd.NodeExec.Forget(g.node)
	if _, _, err := g.timerState(pctx, g.probeTimeout()); err != nil {
		g.pd.NodeExec.Forget(g.node)
		return fmt.Errorf("SSH: %w", err)
	}
	return nil
}

// awaitRollback waits for the timer to fire and the restore to finish,
// then for the node to answer again, and reports the rollback.
func (g *managementGuard) awaitRollback(ctx context.Context, cause error) error {
	e := &ManagementRollbackError{Node: g.node, Change: g.change, Timeout: g.timeout, Cause: cause}
	fireBy := g.armedDone.Add(g.timeout + rollbackMargin)
	tflog.Info(ctx, "the node does not answer after the change of its management path; waiting for the rollback timer to restore the previous configuration",
		map[string]any{"node": g.node, "change": g.change, "restore_at": g.armedDone.Add(g.timeout).Format(time.RFC3339)})
	if err := sleepCtx(ctx, time.Until(fireBy)); err != nil {
		e.Cause = fmt.Errorf("%w; then interrupted while waiting for the rollback (the timer stays armed and restores the previous configuration by itself): %w", cause, err)
		return e
	}
	if err := g.confirm(ctx, time.Now().Add(max(g.timeout, 30*time.Second))); err != nil {
		e.Cause = fmt.Errorf("%w; after the rollback: %w", cause, err)
		return e
	}
	e.Reachable = true
	rctx, cancel := detached(ctx)
	defer cancel()
	saved, err1 := g.pd.NodeExec.ReadFile(rctx, g.node, rollbackBackup)
	now, err2 := g.pd.NodeExec.ReadFile(rctx, g.node, interfacesFile)
	e.Restored = err1 == nil && err2 == nil && bytes.Equal(saved, now)
	if e.Restored {
		// The elapsed timer stays loaded until stopped; the next change
		// needs the name.
		if _, err := g.pd.NodeExec.Run(rctx, g.node, nodeexec.Cmd("systemctl", "stop", rollbackTimer).AcceptExit(5)); err != nil {
			tflog.Warn(ctx, "could not collect the elapsed rollback timer", map[string]any{"node": g.node, "error": err.Error()})
		}
		g.cleanup(ctx)
	}
	tflog.Info(ctx, "the node rolled back and answers again", map[string]any{"node": g.node, "restored": e.Restored})
	return e
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// applyOptions are the resource's rollback settings.
func (m *nodeNetworkModel) applyOptions() networkApplyOptions {
	o := networkApplyOptions{RollbackTimeout: defaultRollbackTimeout}
	if !m.RollbackTimeout.IsNull() && !m.RollbackTimeout.IsUnknown() {
		o.RollbackTimeout = time.Duration(m.RollbackTimeout.ValueInt64()) * time.Second
	}
	if !m.AllowNoRollback.IsNull() && !m.AllowNoRollback.IsUnknown() {
		o.AllowWithoutRollback = m.AllowNoRollback.ValueBool()
	}
	return o
}

// keepRollbackSettings takes the settings from the configuration (plan or
// prior state): PVE does not know them. An imported resource gets the
// defaults.
func (m *nodeNetworkModel) keepRollbackSettings(from *nodeNetworkModel) {
	if !from.RollbackTimeout.IsNull() && !from.RollbackTimeout.IsUnknown() {
		m.RollbackTimeout = from.RollbackTimeout
	}
	if !from.AllowNoRollback.IsNull() && !from.AllowNoRollback.IsUnknown() {
		m.AllowNoRollback = from.AllowNoRollback
	}
}

// ModifyPlan refuses, at plan, a change of the node's management path the
// provider cannot arm a rollback for (no SSH), unless the configuration
// opts out. Values unknown until apply are taken as unchanged here; the
// apply checks the staged configuration again.
func (r *nodeNetworkResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.planWhole(ctx, req, resp)
	if r.planRefs(ctx, req, resp); resp.Diagnostics.HasError() { // node_network_refs.go
		return
	}
	if r.PD == nil || r.PD.Client == nil {
		return
	}
	if !req.State.Raw.IsNull() && req.Plan.Raw.Equal(req.State.Raw) {
		return // no change: nothing to check, and no request spent
	}
	var m nodeNetworkModel
	destroy := req.Plan.Raw.IsNull()
	if destroy {
		if req.State.Raw.IsNull() {
			return
		}
		resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	} else {
		resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	}
	if resp.Diagnostics.HasError() || m.Node.IsUnknown() || m.Iface.IsUnknown() || m.Type.IsUnknown() {
		return
	}
	node, iface := m.Node.ValueString(), m.Iface.ValueString()
	list, err := listNetwork(ctx, r.PD, node)
	if err != nil {
		return // the node may not exist yet; the apply reports it
	}
	before := list.Interfaces
	var after []pve.NetworkInterface
	for _, in := range before {
		if in.Iface != iface {
			after = append(after, in)
		}
	}
	cur := findInterface(list.Interfaces, iface)
	switch {
	case destroy && cur != nil && cur.Type == typeEth:
		// Deleting an eth drops its stanza; the NIC stays.
		after = append(after, pve.NetworkInterface{Iface: iface, Type: typeEth, Method: "manual"})
	case !destroy:
		planned, d := plannedInterface(ctx, cur, iface, &m.ifaceSettings)
		resp.Diagnostics.Append(d...)
		after = append(after, planned)
	}
	destroying := ""
	if destroy {
		destroying = "network interface " + iface + " of node " + node
	}
	resp.Diagnostics.Append(checkManagementChange(ctx, r.PD, node, before, after, m.applyOptions(), destroying)...)
}

// plannedInterface is the interface as the plan would leave it: the known
// planned values over the current ones (unknown ones stay as they are).
func plannedInterface(ctx context.Context, cur *pve.NetworkInterface, iface string, m *ifaceSettings) (pve.NetworkInterface, diag.Diagnostics) {
	var diags diag.Diagnostics
	in := pve.NetworkInterface{Iface: iface, Type: m.Type.ValueString()}
	if cur != nil {
		in = *cur
		in.Type = m.Type.ValueString()
	}
	str := func(v types.String, dst *string) {
		switch {
		case v.IsUnknown():
		case v.IsNull():
			*dst = ""
		default:
			*dst = v.ValueString()
		}
	}
	cidr := func(v types.String, c, a, n *string) {
		if v.IsUnknown() {
			return
		}
		*c, *a, *n = "", "", ""
		if !v.IsNull() {
			*c = v.ValueString()
		}
	}
	cidr(m.CIDR, &in.CIDR, &in.Address, &in.Netmask)
	cidr(m.CIDR6, &in.CIDR6, &in.Address6, &in.Netmask6)
	str(m.Gateway, &in.Gateway)
	str(m.Gateway6, &in.Gateway6)
	str(m.BondMode, &in.BondMode)
	str(m.BondXmitHashPolicy, &in.BondXmitHashPolicy)
	str(m.BondPrimary, &in.BondPrimary)
	if m.BridgeVLANAware.ValueBool() {
		str(m.BridgeVIDs, &in.BridgeVIDs)
	}
	if !m.MTU.IsUnknown() {
		in.MTU = m.MTU.ValueInt64()
	}
	if !m.Autostart.IsUnknown() && !m.Autostart.IsNull() {
		in.Autostart = m.Autostart.ValueBool()
	}
	if !m.BridgeVLANAware.IsUnknown() {
		in.BridgeVLANAware = m.BridgeVLANAware.ValueBool()
	}
	list := func(v types.List, dst *[]string) {
		switch {
		case v.IsUnknown():
		case v.IsNull():
			*dst = nil
		default:
			var out []string
			diags.Append(v.ElementsAs(ctx, &out, true)...)
			*dst = out
		}
	}
	list(m.BridgePorts, &in.BridgePorts)
	list(m.Slaves, &in.Slaves)
	if in.Type == typeVLAN {
		if parent, id, ok := splitDottedVLAN(in.Iface); ok {
			in.VLANRawDevice, in.VLANID = parent, id
		} else {
			str(m.VLANRawDevice, &in.VLANRawDevice)
			if !m.VLANID.IsUnknown() {
				in.VLANID = m.VLANID.ValueInt64()
			}
		}
	}
	if in.CIDR != "" || in.CIDR6 != "" {
		in.Method = "static"
	}
	return in, diags
}

// rollbackAttributes are the dead-man rollback's settings, the same on
// pve_node_network and pve_node_network_config.
func rollbackAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"rollback_timeout_seconds": schema.Int64Attribute{
			Optional: true,
			Computed: true,
			Default:  int64default.StaticInt64(int64(defaultRollbackTimeout / time.Second)),
			MarkdownDescription: "Seconds the dead-man timer waits before it restores the node's previous network configuration, at least 5, default 120. " +
				"Used when a change touches the node's management path (the interface holding the address the provider reaches the node on, " +
				"its ports, slaves or VLAN raw device, or the default gateway): before the reload the provider saves `/etc/network/interfaces` " +
				"on the node and arms a transient systemd timer (over SSH) that puts it back and runs `ifreload -a`; after the reload it confirms " +
				"that the API and SSH answer on new connections (within half this time) and disarms the timer. A change that cuts the node off " +
				"is restored by the node itself, and the apply fails naming the change once the node answers again (up to about twice this time " +
				"after the reload: keep the `timeouts` above that).",
			Validators: []validator.Int64{int64validator.AtLeast(5)},
		},
		"allow_management_change_without_rollback": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			MarkdownDescription: "Apply a change of the node's management path although the provider has no SSH access to the node and so cannot arm " +
				"the dead-man rollback. Default `false`: such a change is refused at plan. With `true` the provider still checks that the node " +
				"answers after the reload, but a change that cuts it off has to be undone at the node's console.",
		},
	}
}
