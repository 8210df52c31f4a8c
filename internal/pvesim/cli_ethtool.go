package pvesim

import (
	"slices"
	"strconv"
	"strings"
)

// --- ethtool ---

func sshEthtool(x *sshExec) int {
	if len(x.argv) == 2 && !strings.HasPrefix(x.argv[1], "-") {
		return x.ethtoolSettings(x.argv[1]) // cli_ethtool_settings.go
	}
	if len(x.argv) < 3 {
		x.errf("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n")
		return 1
	}
	switch x.argv[1] {
	case "-g", "--show-ring":
		return x.ethtoolShowRing(x.argv[2])
	case "-G", "--set-ring":
		return x.ethtoolSetRing(x.argv[2], x.argv[3:])
	case "-i", "--driver":
		return x.ethtoolDriver(x.argv[2])
	}
	x.errf("ethtool: pvesim simulates only IFACE, -g/--show-ring, -G/--set-ring and -i/--driver, not %s\n", x.argv[1])
	return 1
}

// netDeviceExists reports whether the node has a network device iface.
func (x *sshExec) netDeviceExists(iface string) bool {
	ns := x.s.st.Nodes[x.node]
	if iface == "lo" || slices.Contains(ns.Physical, iface) {
		return true
	}
	return ns.Applied != nil && ns.Applied.Ifaces[iface] != nil
}

func (x *sshExec) ethtoolShowRing(iface string) int {
	if !x.netDeviceExists(iface) {
		x.errf("netlink error: no device matches name\nnetlink error: No such device\n")
		return 1
	}
	m, ok := nicModelOf(iface)
	if !ok {
		x.errf("netlink error: Operation not supported\n")
		return 1
	}
	r := x.s.execState(x.node).ring(iface, m)
	if x.s.rel.atLeast9() {
		// ethtool 6.14 (Debian trixie)
		x.outf("Ring parameters for %s:\nPre-set maximums:\nRX:\t\t\t%d\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t%d\nTX push buff len:\tn/a\n"+
			"Current hardware settings:\nRX:\t\t\t%d\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t%d\n"+
			"RX Buf Len:\t\tn/a\nCQE Size:\t\tn/a\nTX Push:\t\toff\nRX Push:\t\toff\nTX push buff len:\tn/a\nTCP data split:\t\tn/a\n",
			iface, m.rxMax, m.txMax, r.RX, r.TX)
		return 0
	}
	// ethtool 6.1 (Debian bookworm)
	x.outf("Ring parameters for %s:\nPre-set maximums:\nRX:\t\t%d\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t%d\n"+
		"Current hardware settings:\nRX:\t\t%d\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t%d\n"+
		"RX Buf Len:\tn/a\nCQE Size:\tn/a\nTX Push:\toff\nTCP data split:\tn/a\n",
		iface, m.rxMax, m.txMax, r.RX, r.TX)
	return 0
}

func (x *sshExec) ethtoolSetRing(iface string, params []string) int {
	req := map[string]int{}
	for i := 0; i < len(params); i++ {
		p := params[i]
		switch p {
		case "rx", "tx", "rx-mini", "rx-jumbo", "rx-buf-len", "cqe-size", "tx-push-buf-len":
		case "tx-push", "rx-push", "tcp-data-split":
			x.errf("netlink error: setting %s is not supported\nnetlink error: Operation not supported\n", p)
			return 81
		default:
			x.errf("ethtool (-G): unknown parameter '%s'\n", p)
			return 1
		}
		if i+1 >= len(params) {
			x.errf("ethtool (-G): no value for parameter '%s'\n", p)
			return 1
		}
		v, err := strconv.ParseUint(params[i+1], 10, 32)
		if err != nil {
			x.errf("ethtool (-G): invalid value '%s' for parameter '%s'\n", params[i+1], p)
			return 1
		}
		req[p] = int(v)
		i++
	}
	if !x.netDeviceExists(iface) {
		x.errf("netlink error: no device matches name\nnetlink error: No such device\n")
		return 81
	}
	if !x.root {
		x.errf("netlink error: Operation not permitted\n")
		return 81
	}
	m, ok := nicModelOf(iface)
	if !ok {
		x.errf("netlink error: Operation not supported\n")
		return 81
	}
	for _, p := range []string{"rx-buf-len", "cqe-size", "tx-push-buf-len"} {
		if _, set := req[p]; set {
			x.errf("netlink error: setting %s is not supported\nnetlink error: Operation not supported\n", strings.ReplaceAll(p, "-", " "))
			return 81
		}
	}
	// The kernel checks the maxima before the driver sees the request.
	if req["rx"] > m.rxMax || req["tx"] > m.txMax || req["rx-mini"] > 0 || req["rx-jumbo"] > 0 {
		x.errf("netlink error: requested ring size exceeds maximum\nnetlink error: Invalid argument\n")
		return 81
	}
	st := x.s.execState(x.node)
	cur := st.ring(iface, m)
	next := cur
	if v, ok := req["rx"]; ok {
		next.RX = m.adjust(v, m.rxMin)
	}
	if v, ok := req["tx"]; ok {
		next.TX = m.adjust(v, m.txMin)
		if m.txMinExclusive > 0 && next.TX <= m.txMinExclusive {
			x.errf("netlink error: Invalid argument\n")
			return 81
		}
	}
	if next != cur {
		if st.Rings == nil {
			st.Rings = map[string]*nicRing{}
		}
		st.Rings[iface] = &next
		x.changed = true
	}
	return 0
}

// adjust applies what the driver does to a requested ring size.
func (m nicModel) adjust(v, lowest int) int {
	if m.roundPow2 > 0 {
		p := 1
		for p < v {
			p <<= 1
		}
		v = p
	}
	if v < lowest {
		v = lowest
	}
	if m.align > 0 && v%m.align != 0 {
		v += m.align - v%m.align
	}
	return v
}

// nicDriverInfo is what `ethtool -i` reports for the reference lab's NICs
// beyond the driver name: in-tree drivers without their own version
// string report the kernel release (tg3 and e1000e since Linux 5.9),
// mlx4_en still its DRV_VERSION. Both ConnectX-3 ports are one PCI
// function.
type nicDriverInfo struct {
	version, firmware, busInfo string
	statistics, test, eeprom   string
	regdump, privFlags         string
}

func nicInfoOf(iface string, m nicModel, kernel string) nicDriverInfo {
	switch m.driver {
	case "tg3":
		bus := "0000:04:00.0"
		if strings.HasSuffix(iface, "1") {
			bus = "0000:04:00.1"
		}
		return nicDriverInfo{version: kernel, firmware: "FFV21.80.8 bc 5720-v1.39", busInfo: bus,
			statistics: "yes", test: "yes", eeprom: "yes", regdump: "yes", privFlags: "no"}
	case "e1000e":
		return nicDriverInfo{version: kernel, firmware: "0.4-4", busInfo: "0000:00:1f.6",
			statistics: "yes", test: "yes", eeprom: "yes", regdump: "yes", privFlags: "yes"}
	}
	return nicDriverInfo{version: "4.0-0", firmware: "2.42.5000", busInfo: "0000:01:00.0",
		statistics: "yes", test: "yes", eeprom: "no", regdump: "no", privFlags: "yes"}
}

// ethtoolDriver is `ethtool -i IFACE` (an ioctl, so its errors are
// ethtool's perror texts with exit status 71).
func (x *sshExec) ethtoolDriver(iface string) int {
	if !x.netDeviceExists(iface) {
		x.errf("Cannot get driver information: No such device\n")
		return 71
	}
	m, ok := nicModelOf(iface)
	if !ok {
		// lo, bonds, bridges and VLANs: virtual drivers.
		driver := "bridge"
		switch {
		case iface == "lo":
			x.errf("Cannot get driver information: Operation not supported\n")
			return 71
		case strings.HasPrefix(iface, "bond"):
			driver = "bonding"
		case strings.Contains(iface, "."):
			driver = "802.1Q VLAN Support"
		}
		x.outf("driver: %s\nversion: %s\nfirmware-version: N/A\nexpansion-rom-version: \nbus-info: N/A\n"+
			"supports-statistics: no\nsupports-test: no\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: no\n",
			driver, x.s.rel.Kernel)
		return 0
	}
	d := nicInfoOf(iface, m, x.s.rel.Kernel)
	x.outf("driver: %s\nversion: %s\nfirmware-version: %s\nexpansion-rom-version: \nbus-info: %s\n"+
		"supports-statistics: %s\nsupports-test: %s\nsupports-eeprom-access: %s\nsupports-register-dump: %s\nsupports-priv-flags: %s\n",
		m.driver, d.version, d.firmware, d.busInfo, d.statistics, d.test, d.eeprom, d.regdump, d.privFlags)
	return 0
}
