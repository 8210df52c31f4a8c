package network

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

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
		if now := lookupIface(after, hb.Iface); now != nil {
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
			b, a := lookupIface(before, n), lookupIface(after, n)
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

func lookupIface(list []pve.NetworkInterface, name string) *pve.NetworkInterface {
	for i := range list {
		if list[i].Iface == name {
			return &list[i]
		}
	}
	return nil
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
		if in := lookupIface(list, n); in != nil {
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
	in := lookupIface(list, name)
	if in == nil {
		return name
	}
	var sub func(n string, depth int) string
	sub = func(n string, depth int) string {
		i := lookupIface(list, n)
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
	switch {
	case in.Type == typeBridge:
		noun = "port"
	case in.Type == typeBond:
		noun = "slave"
	case in.Type == typeVLAN:
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
