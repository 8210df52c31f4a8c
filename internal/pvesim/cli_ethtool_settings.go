package pvesim

import "strings"

// `ethtool IFACE`: the link settings, where a node reports a NIC's speed
// and carrier. The lab's NICs (nodeState.NICs) give both; without a lab
// the reference lab's NICs have link at their nominal speed. Only the
// lines scripts read are printed (Speed, Duplex, Auto-negotiation, Port,
// Link detected), in ethtool's order and layout.

// nicSpeedLink is a physical NIC's speed in Mb/s and carrier.
func (ns *nodeState) nicSpeedLink(iface string) (int, bool) {
	if n := ns.NICs[iface]; n != nil {
		return n.SpeedMbps, n.Link
	}
	if strings.HasPrefix(iface, "cx3") {
		return 40000, true
	}
	return 1000, true
}

func (x *sshExec) ethtoolSettings(iface string) int {
	if !x.netDeviceExists(iface) {
		x.errf("netlink error: no device matches name\nnetlink error: No such device\n")
		return 1
	}
	ns := x.s.st.Nodes[x.node]
	if !ns.isPhysical(iface) {
		// Virtual devices have no link settings, only a carrier.
		link := "yes"
		if iface != "lo" && !contains(ns.Active, iface) {
			link = "no"
		}
		x.outf("Settings for %s:\n\tLink detected: %s\n", iface, link)
		return 0
	}
	speed, link := ns.nicSpeedLink(iface)
	port := "Twisted Pair"
	if speed > 10000 {
		port = "Direct Attach Copper"
	}
	if !link {
		x.outf("Settings for %s:\n\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n\tAuto-negotiation: on\n\tPort: %s\n\tLink detected: no\n", iface, port)
		return 0
	}
	x.outf("Settings for %s:\n\tSpeed: %dMb/s\n\tDuplex: Full\n\tAuto-negotiation: on\n\tPort: %s\n\tLink detected: yes\n", iface, speed, port)
	return 0
}
