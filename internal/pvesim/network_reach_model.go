package pvesim

import (
	"fmt"
	"net/netip"
	"strconv"
)

// Reachability of a node's management address, over state alone.
//
// A node answers on its management address (nodeState.Mgmt) only while
// what ifreload made live (nodeState.live) has that address on an
// interface that ifreload brought up (Active) with a working path to the
// wire, and a default gateway that the network's router answers: the live
// default gateway must be the lab's (Mgmt.Gateway) and lie in the
// address's configured subnet, on an interface that is up. A lab without
// a gateway (Mgmt.Gateway "") needs none: its clients are on the subnet.
//
// A working path is an eth with carrier; a bridge with at least one port
// that has a working path; a bond with at least one slave that has one; a
// VLAN or alias whose parent has one (a VLAN on a bridge, vlan-aware or
// not, works while the bridge works). The address's prefix is the live
// one, so a wrong mask (/28 for a /24 network) leaves the gateway off the
// subnet and the node cut off.

// live is the network configuration ifreload last made live: Live when a
// hand-written /etc/network/interfaces has not been reloaded yet, else
// the file itself.
func (ns *nodeState) live() *netConfig {
	if ns.Live != nil {
		return ns.Live
	}
	return ns.Applied
}

// keepLive records the live configuration before the file changes under
// it (a write over SSH, srvreload's rename): nothing goes live until a
// reload.
func (ns *nodeState) keepLive() {
	if ns.Live == nil {
		ns.Live = ns.Applied
	}
}

// nicLink reports whether the physical NIC name has carrier. Nodes
// without a lab's NIC table have link on every NIC they have.
func (ns *nodeState) nicLink(name string) bool {
	if n := ns.NICs[name]; n != nil {
		return n.Link
	}
	return ns.NICs == nil && ns.isPhysical(name)
}

// reachable reports whether the node answers on its management address
// to a client behind the network's router, and why not.
func (ns *nodeState) reachable() (bool, string) { return ns.reach(true) }

// reachableOnLink is reachable for a peer on the management subnet (a
// cluster node proxying to it): no gateway is needed.
func (ns *nodeState) reachableOnLink() (bool, string) { return ns.reach(false) }

func (ns *nodeState) reach(viaGateway bool) (bool, string) {
	m := ns.Mgmt
	if m == nil {
		return true, ""
	}
	cfg := ns.live()
	if cfg == nil {
		return false, fmt.Sprintf("%s is not configured on any interface", m.Address)
	}
	want, err := netip.ParseAddr(m.Address)
	if err != nil {
		return false, fmt.Sprintf("management address %q is no IP address", m.Address)
	}
	v6 := want.Is6()
	var holder *netIface
	var prefix netip.Prefix
	for _, n := range cfg.order() {
		d := cfg.Ifaces[n]
		addr, mask := d.Address, d.Netmask
		if v6 {
			addr, mask = d.Address6, d.Netmask6
		}
		a, err := netip.ParseAddr(addr)
		if err != nil || a != want {
			continue
		}
		bits := want.BitLen() // no mask: a host route, as the reader's /32
		if mask != "" {
			if b, err := strconv.Atoi(mask); err == nil {
				bits = b
			} else if b, ok := maskBits(mask); ok {
				bits = b
			}
		}
		holder, prefix = d, netip.PrefixFrom(want, bits).Masked()
		break
	}
	if holder == nil {
		return false, fmt.Sprintf("%s is not configured on any interface", m.Address)
	}
	active := map[string]bool{}
	for _, n := range ns.Active {
		active[n] = true
	}
	if !active[holder.Name] {
		return false, fmt.Sprintf("%s is on %s, which is not up", m.Address, holder.Name)
	}
	if why := ns.pathDown(cfg, active, holder.Name, map[string]bool{}); why != "" {
		return false, fmt.Sprintf("%s is on %s, which has no working path: %s", m.Address, holder.Name, why)
	}
	if m.Gateway == "" || !viaGateway {
		return true, ""
	}
	gwIface := ""
	gw := ""
	for _, n := range cfg.order() {
		d := cfg.Ifaces[n]
		g := d.Gateway
		if v6 {
			g = d.Gateway6
		}
		if g != "" && active[n] {
			gwIface, gw = n, g
			break
		}
	}
	if gw == "" {
		return false, "no default gateway is configured on an interface that is up"
	}
	if gw != m.Gateway {
		return false, fmt.Sprintf("the default gateway is %s (on %s), the network's router is %s", gw, gwIface, m.Gateway)
	}
	if g, err := netip.ParseAddr(gw); err != nil || !prefix.Contains(g) {
		return false, fmt.Sprintf("the default gateway %s is outside %s/%d on %s", gw, m.Address, prefix.Bits(), holder.Name)
	}
	return true, ""
}

// pathDown returns "" when name has a working path to the wire, else why
// not.
func (ns *nodeState) pathDown(cfg *netConfig, active map[string]bool, name string, seen map[string]bool) string {
	if seen[name] {
		return name + " loops back on itself"
	}
	seen[name] = true
	d := cfg.Ifaces[name]
	if d == nil {
		// A port the file does not declare: a NIC the kernel has (the
		// bridge enslaves and raises it), or a dotted VLAN of a parent.
		if ns.isPhysical(name) {
			if !ns.nicLink(name) {
				return name + " has no link"
			}
			return ""
		}
		if m := vlanDotRE.FindStringSubmatch(name); m != nil {
			return ns.pathDown(cfg, active, m[1], seen)
		}
		return name + " does not exist"
	}
	if !active[name] {
		return name + " is not up"
	}
	var parts []string
	switch d.Type {
	case "eth":
		if !ns.isPhysical(name) {
			return name + " does not exist"
		}
		if !ns.nicLink(name) {
			return name + " has no link"
		}
		return ""
	case "bridge":
		parts = splitList(d.BridgePorts)
		if len(parts) == 0 {
			return "bridge " + name + " has no ports"
		}
	case "bond":
		parts = splitList(d.Slaves)
		if len(parts) == 0 {
			return "bond " + name + " has no slaves"
		}
	case "vlan":
		parent := d.VlanRawDevice
		if m := vlanDotRE.FindStringSubmatch(name); m != nil && parent == "" {
			parent = m[1]
		}
		return ns.pathDown(cfg, active, parent, seen)
	case "alias":
		if m := aliasRE.FindStringSubmatch(name); m != nil {
			return ns.pathDown(cfg, active, m[1], seen)
		}
		return name + " has no parent"
	default:
		return name + " is of type " + d.Type + ", which pvesim does not route"
	}
	var whys []string
	for _, p := range parts {
		why := ns.pathDown(cfg, active, p, seen)
		if why == "" {
			return ""
		}
		whys = append(whys, why)
	}
	kind := "port"
	if d.Type == "bond" {
		kind = "slave"
	}
	return fmt.Sprintf("no %s of %s works (%s)", kind, name, joinWhys(whys))
}

func joinWhys(w []string) string {
	out := ""
	for i, s := range w {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}
