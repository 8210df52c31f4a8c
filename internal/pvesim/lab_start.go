package pvesim

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The starting states of a lab (Options.Lab): what the PVE installer
// leaves on each node (fresh-install), the same nodes clustered (cluster),
// and the lab built by hand (hand-built, start_handbuilt.go, on top of the
// cluster state).
//
// What the installer (proxmox-installer, ext4/xfs on LVM) leaves:
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
		ns.ThinPools = map[string]*thinPool{"pve/data": installerThinPool(ns.Disks, ln.MemoryGiB)}
		ns.Exec = &nodeExecState{Units: defaultUnits(), Tuned: "balanced", Files: map[string]*simFile{
			"/etc/hosts": {Content: []byte(installerHosts(ns.Mgmt)), Mode: 0o644, Owner: "root", Group: "root"},
		}}
	}
}

// installerNetConfig is /etc/network/interfaces as the installer writes
// it: the management NIC, vmbr0 after it, then the other NICs, each
// stanza's priority its position in the file (lo first, counted from 2).
func installerNetConfig(ln *LabNode, m *nodeMgmt) *netConfig {
	cfg := newNetConfig()
	prio := 3
	cfg.Ifaces[m.NIC] = &netIface{Name: m.NIC, Type: "eth", Priority: prio}
	prio++
	cfg.Ifaces["vmbr0"] = &netIface{
		Name: "vmbr0", Type: "bridge", Autostart: true, Priority: prio,
		Address: m.Address, Netmask: strconv.Itoa(m.Prefix), Gateway: m.Gateway, BridgePorts: m.NIC,
	}
	for _, nic := range ln.NICs {
		if nic.Name == m.NIC {
			continue
		}
		prio++
		cfg.Ifaces[nic.Name] = &netIface{Name: nic.Name, Type: "eth", Priority: prio}
	}
	return cfg
}

// installerHosts is the installer's /etc/hosts.
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

// installerThinPool is pve/data as the installer sizes it on the boot
// disk: after the 1 GiB ESP, swap min(RAM, disk/8, 8 GiB), root disk/4
// (at most 96 GiB) and free space disk/8 (at most 16 GiB); about 1 % of the
// rest is the pool's metadata. The reference lab's 120 GB disk gives the
// figures an installed node reports (pveDataSize, pveDataMeta).
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
	const gib = int64(1) << 30
	if memGiB <= 0 {
		memGiB = 64
	}
	swap := min(int64(memGiB)*gib, size/8, 8*gib)
	root := min(size/4, 96*gib)
	free := min(size/8, 16*gib)
	rest := max(size-gib-swap-root-free, 2*gib)
	meta := max(rest/100/lvmExtent, 1) * lvmExtent
	data := (rest - 2*meta) / lvmExtent * lvmExtent
	return &thinPool{VG: "pve", LV: "data", Size: data, MetaSize: meta}
}
