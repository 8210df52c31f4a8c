package pvesim

import "strings"

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
