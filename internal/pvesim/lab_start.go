package pvesim

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// The starting states of a lab (Options.Lab): what the PVE installer
// leaves on each node (fresh-install), the same nodes clustered (cluster),
// and the lab built by hand (hand-built, start_handbuilt.go, on top of the
// cluster state).
//
// What the installer (pve-installer Proxmox/Install.pm, ext4/xfs on LVM)
// leaves:
//   - /etc/network/interfaces: vmbr0, auto, static with the address and
//     gateway typed in, bridge-ports the NIC chosen, stp off, fd 0; every
//     other NIC "iface X inet manual" without auto;
//   - /etc/hosts mapping "<fqdn> <node>" to that address;
//   - the boot disk: BIOS boot and ESP partitions and the VG pve holding
//     root, swap and the thin pool data; storage local and local-lvm;
//   - the enterprise repositories enabled (freshAPT), no cluster, no Ceph.

// prepareLabOptions validates Options.Lab (a copy, with defaults) and lets
// it decide the options it covers: nodes, release, cluster, Ceph.
func prepareLabOptions(opts *Options) error {
	if opts.Lab == nil {
		return nil
	}
	lab := cloneLab(opts.Lab)
	lab.setDefaults()
	if err := lab.Validate(); err != nil {
		return err
	}
	opts.Lab = lab
	opts.Nodes = nil
	for _, n := range lab.Nodes {
		opts.Nodes = append(opts.Nodes, n.Name)
	}
	opts.PVERelease = lab.PVERelease
	opts.ClusterName = ""
	if lab.Start != StartFreshInstall {
		opts.ClusterName = lab.ClusterName
	}
	// The installer installs no Ceph; hand-built installs it itself.
	opts.CephNotInstalled = true
	return nil
}

func (l *Lab) node(name string) *LabNode {
	for i := range l.Nodes {
		if l.Nodes[i].Name == name {
			return &l.Nodes[i]
		}
	}
	return nil
}

// labMgmt is the node's management address from the lab; nil without one.
func labMgmt(lab *Lab, name string) *nodeMgmt {
	if lab == nil {
		return nil
	}
	n := lab.node(name)
	if n == nil {
		return nil
	}
	p := netip.MustParsePrefix(n.Management.CIDR) // validated
	m := &nodeMgmt{Address: p.Addr().String(), Prefix: p.Bits(), Gateway: n.Management.Gateway, NIC: n.Management.NIC, FQDN: name}
	if lab.Domain != "" {
		m.FQDN = name + "." + lab.Domain
	}
	return m
}

// applyLabStart gives each node of a new state the lab's hardware and the
// installer's configuration. Called by newState before the cluster (whose
// corosync links use hostIP) is formed.
func applyLabStart(st *simState, lab *Lab) {
	for _, name := range st.NodeOrder {
		ns := st.Nodes[name]
		ln := lab.node(name)
		ns.Mgmt = labMgmt(lab, name)
		ns.Physical = nil
		ns.NICs = map[string]*simNIC{}
		for _, nic := range ln.NICs {
			link := nic.Link == nil || *nic.Link
			ns.Physical = append(ns.Physical, nic.Name)
			ns.NICs[nic.Name] = &simNIC{Name: nic.Name, MAC: strings.ToLower(nic.MAC), SpeedMbps: nic.SpeedMbps, Link: link}
		}
		ns.Applied = installerNetConfig(ln, ns.Mgmt)
		ns.computeActive()
		ns.Disks = labDisks(ln)
		ns.ThinPools = map[string]*thinPool{}
		if p := installerThinPool(ns.Disks, ln.MemoryGiB); p != nil {
			ns.ThinPools["pve/data"] = p
		}
		ns.Exec = &nodeExecState{Units: defaultUnits(), Tuned: "balanced", Files: map[string]*simFile{
			"/etc/hosts": {Content: []byte(installerHosts(ns.Mgmt)), Mode: 0o644, Owner: "root", Group: "root"},
		}}
	}
}

// installerNetConfig is /etc/network/interfaces as the installer writes
// it (pve-installer Proxmox/Install.pm): the management NIC, vmbr0 after
// it, then the other NICs, each stanza's priority its position in the
// file (lo first, counted from 2), and its last line "source
// /etc/network/interfaces.d/*" (kept by PVE's writer: netConfig.Options).
func installerNetConfig(ln *LabNode, m *nodeMgmt) *netConfig {
	cfg := newNetConfig()
	cfg.Options = []string{"source /etc/network/interfaces.d/*"}
	prio := 3
	cfg.Ifaces[m.NIC] = &netIface{Name: m.NIC, Type: "eth", Priority: prio}
	prio++
	cfg.Ifaces["vmbr0"] = &netIface{
		Name: "vmbr0", Type: "bridge", Autostart: true, Priority: prio,
		Address: m.Address, Netmask: strconv.Itoa(m.Prefix), Gateway: m.Gateway, BridgePorts: m.NIC,
	}
	// The other NICs follow in the order of their names (Install.pm sorts
	// them).
	var others []string
	for _, nic := range ln.NICs {
		if nic.Name != m.NIC {
			others = append(others, nic.Name)
		}
	}
	sort.Strings(others)
	for _, name := range others {
		prio++
		cfg.Ifaces[name] = &netIface{Name: name, Type: "eth", Priority: prio}
	}
	return cfg
}

// installerHosts is the installer's /etc/hosts, as Install.pm writes it.
func installerHosts(m *nodeMgmt) string {
	short, _, _ := strings.Cut(m.FQDN, ".")
	return "127.0.0.1 localhost.localdomain localhost\n" +
		fmt.Sprintf("%s %s %s\n", m.Address, m.FQDN, short) +
		"\n# The following lines are desirable for IPv6 capable hosts\n\n" +
		"::1     ip6-localhost ip6-loopback\nfe00::0 ip6-localnet\nff00::0 ip6-mcastprefix\n" +
		"ff02::1 ip6-allnodes\nff02::2 ip6-allrouters\nff02::3 ip6-allhosts\n"
}

// labDiskType is Diskmanage's type: not rotating is ssd (nvme for an
// nvmeXnY namespace); rotating is hdd when the rpm is known, usb on USB.
func labDiskType(d LabDisk) string {
	switch {
	case !d.Rotational && d.Transport == "nvme":
		return "nvme"
	case !d.Rotational:
		return "ssd"
	case d.Transport == "usb" && d.RPM == 0:
		return "usb"
	}
	return "hdd"
}

func labDisks(ln *LabNode) []*simDisk {
	out := make([]*simDisk, 0, len(ln.Disks))
	for _, d := range ln.Disks {
		wear := d.Wearout
		if wear == 0 {
			wear = 100
		}
		sd := &simDisk{
			DevPath: d.Device, Model: d.Model, Vendor: d.Vendor, Serial: d.Serial, WWN: d.WWN, Size: d.SizeBytes,
			Type: labDiskType(d), RPM: d.RPM, Wearout: wear, PLP: d.PowerLossProtection, SyncWriteIOPS: d.SyncWriteIOPS,
		}
		if d.Boot {
			sd.Boot, sd.GPT, sd.Partitions, sd.LVM, sd.VG = true, true, true, true, "pve"
		}
		out = append(out, sd)
	}
	return out
}

// installerThinPool is pve/data as pve-installer sizes it on the boot
// disk (Proxmox/Sys/Block.pm partition_bootable_disk, Proxmox/Install.pm
// compute_swapsize and create_lvm_volumes; sizes in KiB as there): after
// the BIOS boot partition and the ESP, swap from the RAM (at most 8 GiB),
// root a quarter of the rest plus 12 GiB (at most 96 GiB), free space
// disk/8 (at most 16 GiB), and the thin pool the remainder less twice its
// metadata (1 %, 1-16 GiB) and one extent. The reference lab's 120 GB
// disk keeps the figures pvesim has always reported (pveDataSize,
// pveDataMeta); nil when the installer creates no pool (4 GiB or less).
func installerThinPool(disks []*simDisk, memGiB int) *thinPool {
	var size int64
	for _, d := range disks {
		if d.Boot {
			size = d.Size
		}
	}
	if size == size120G {
		return &thinPool{VG: "pve", LV: "data", Size: pveDataSize, MetaSize: pveDataMeta}
	}
	if memGiB <= 0 {
		memGiB = 64
	}
	const gibKB = 1024 * 1024
	hdKB := size / 1024
	espMB := int64(512)
	if hdKB > 100*gibKB {
		espMB = 1024
	}
	osKB := hdKB - (espMB+1)*1024
	hdgb := osKB / gibKB

	ss := int64(memGiB) * 1024 // MB
	if ss < 4096 && hdgb >= 64 {
		ss = 4096
	}
	if ss < 2048 && hdgb >= 32 {
		ss = 2048
	}
	if ss >= 2048 && hdgb <= 16 {
		ss = 1024
	}
	ss = max(ss, 512)
	ss = min(ss, hdgb*128, 8192)
	swapKB := (ss * 1024) &^ 0xFFF

	space := float64(4 * 1024)
	if hdgb > 32 {
		space = float64(min(hdgb, 128)) / 8 * gibKB
		if hdgb > 128 {
			space = 16 * gibKB
		}
	}
	rest := osKB - swapKB
	restMB := rest / 1024
	var rootMB float64
	switch {
	case restMB < 12*1024:
		rootMB = float64((restMB - 4) &^ 3)
	case restMB < 48*1024:
		rootMB = float64((restMB / 2) &^ 3)
	default:
		rootMB = float64(restMB)/4 + 12*1024
	}
	rootMB = min(rootMB, 96*1024)
	rootKB := int64(rootMB*1024) &^ 0xFFF
	rest -= rootKB
	dataKB := int64(float64(rest)-space) &^ 0xFFF
	if dataKB <= 4*gibKB {
		return nil
	}
	metaKB := min(max(dataKB/100, gibKB), 16*gibKB) &^ 0xFFF
	dataKB -= 2*metaKB + 4*1024
	return &thinPool{VG: "pve", LV: "data", Size: dataKB * 1024, MetaSize: metaKB * 1024}
}
