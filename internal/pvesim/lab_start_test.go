package pvesim

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func shippedLab(t *testing.T, name string) *Lab {
	t.Helper()
	lab, err := ShippedLab(name)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// standaloneClient talks to node i of unclustered nodes, each its own
// trust domain.
func standaloneClient(t *testing.T, info Info, i int) *client {
	n := info.Nodes[i]
	info.CACertPEM, info.APIToken = n.CACertPEM, n.APIToken
	return newClient(t, info, n.Endpoint)
}

// A node fresh from the installer: vmbr0 holds the management address and
// gateway on the management NIC, every other NIC is manual without auto.
func TestLabFreshInstallNetwork(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "reference"), NoSSH: true})
	// Standalone nodes: each answers for itself only.
	c := standaloneClient(t, info, 1)
	list := c.ok("GET", "/nodes/z2g4b/network", nil).data()
	vmbr0 := findIface(list, "vmbr0")
	want := map[string]any{
		"iface": "vmbr0", "type": "bridge", "autostart": 1.0, "active": 1.0, "method": "static", "method6": "manual",
		"families": []any{"inet"}, "address": "172.27.2.11", "netmask": "24", "cidr": "172.27.2.11/24",
		"gateway": "172.27.2.254", "bridge_ports": "bcm5720p0", "bridge_stp": "off", "bridge_fd": "0", "priority": 4.0,
	}
	if !reflect.DeepEqual(vmbr0, want) {
		t.Errorf("vmbr0:\n got  %v\n want %v", vmbr0, want)
	}
	var names []string
	for _, e := range list.([]any) {
		m := e.(map[string]any)
		names = append(names, m["iface"].(string))
		if m["iface"] == "vmbr0" {
			continue
		}
		if m["type"] != "eth" || m["method"] != "manual" || m["autostart"] != nil || m["exists"] != 1.0 || m["address"] != nil {
			t.Errorf("%s: %v", m["iface"], m)
		}
		// Only the bridge port is up.
		if (m["active"] == 1.0) != (m["iface"] == "bcm5720p0") {
			t.Errorf("%s active: %v", m["iface"], m["active"])
		}
	}
	sort.Strings(names)
	if want := []string{"bcm5720p0", "bcm5720p1", "cx354ap1", "cx354ap2", "i219", "vmbr0"}; !reflect.DeepEqual(names, want) {
		t.Errorf("interfaces %v, want %v", names, want)
	}
	// The installer's order: the management NIC, vmbr0 ...
	if p := findIface(list, "bcm5720p0")["priority"]; p != 3.0 {
		t.Errorf("bcm5720p0 priority %v", p)
	}
	// ... then the others sorted by name, as Install.pm writes them.
	if p := findIface(list, "cx354ap2")["priority"]; p != 7.0 {
		t.Errorf("cx354ap2 priority %v", p)
	}
	if p := findIface(list, "i219")["priority"]; p != 8.0 {
		t.Errorf("i219 priority %v", p)
	}
}

// Done interface by interface, the management cutover is refused: PVE
// allows one default gateway and a NIC in one port list.
func TestLabFreshInstallRefusesSecondGatewayAndPort(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "reference"), NoSSH: true})
	c := newClient(t, info, "")
	r := c.do("POST", "/nodes/z2g4a/network", vals("iface", "bridge0", "type", "bridge", "cidr", "172.27.2.10/24", "gateway", "172.27.2.254"))
	if r.status != 400 || r.errs()["gateway"] != "Default gateway already exists on interface 'vmbr0'." {
		t.Errorf("bridge0 with gateway: %d %s", r.status, r.raw)
	}
	r = c.do("POST", "/nodes/z2g4a/network", vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p0 bcm5720p1", "bond_mode", "802.3ad"))
	if r.status != 400 || r.errs()["slaves"] != "bcm5720p0 is already used on interface 'vmbr0'." {
		t.Errorf("bond0 over bcm5720p0: %d %s", r.status, r.raw)
	}
	// The NIC vmbr0 does not use is free.
	c.ok("POST", "/nodes/z2g4a/network", vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p1", "bond_mode", "active-backup"))
}

// Storage, repositories, cluster and Ceph as the installer leaves them.
func TestLabFreshInstallStorageAptCeph(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "reference"), NoSSH: true, TaskDuration: -1})
	c := newClient(t, info, "")
	var ids []string
	for _, e := range c.ok("GET", "/storage", nil).data().([]any) {
		ids = append(ids, e.(map[string]any)["storage"].(string))
	}
	if !reflect.DeepEqual(ids, []string{"local", "local-lvm"}) {
		t.Errorf("storage %v", ids)
	}
	pools := c.ok("GET", "/nodes/z2g4a/disks/lvmthin", nil).data().([]any)
	if len(pools) != 1 || pools[0].(map[string]any)["vg"] != "pve" || pools[0].(map[string]any)["lv"] != "data" ||
		pools[0].(map[string]any)["lv_size"] != float64(pveDataSize) {
		t.Errorf("thin pools %v", pools)
	}
	_, st := aptStatus(t, c, "z2g4a")
	if st["enterprise"] != 1.0 || st["ceph-squid-enterprise"] != 1.0 || st["no-subscription"] != nil {
		t.Errorf("apt standard repos %v", st)
	}
	status := c.ok("GET", "/cluster/status", nil).data().([]any)
	if len(status) != 1 || status[0].(map[string]any)["ip"] != "172.27.2.10" {
		t.Errorf("cluster status %v", status)
	}
	for _, p := range []string{"/nodes/z2g4a/ceph/status", "/cluster/ceph/status"} {
		if r := c.do("GET", p, nil); r.status != 500 || strings.TrimSpace(r.msg()) != "binary not installed: /usr/bin/ceph-mon" {
			t.Errorf("%s: %d %q", p, r.status, r.msg())
		}
	}
	// The boot disk carries the VG pve.
	for _, e := range c.ok("GET", "/nodes/z2g4a/disks/list", nil).data().([]any) {
		d := e.(map[string]any)
		if boot := d["devpath"] == "/dev/sda"; boot != (d["used"] == "BIOS boot") || (boot && d["serial"] != "BTWL471101120LGN") {
			t.Errorf("disk %v", d)
		}
	}
}

// The diskless node lists only its boot disk; the storage nodes their
// consumer SSD too, with the lab's model and size.
func TestLabDisklessNodeDisks(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "diskless"), NoSSH: true})
	c := newClient(t, info, "")
	d6 := c.ok("GET", "/nodes/jpl-proxmox6/disks/list", nil).data().([]any)
	if len(d6) != 1 || d6[0].(map[string]any)["devpath"] != "/dev/sda" || d6[0].(map[string]any)["used"] != "BIOS boot" {
		t.Errorf("jpl-proxmox6 disks %v", d6)
	}
	c = standaloneClient(t, info, 1)
	d7 := c.ok("GET", "/nodes/jpl-proxmox7/disks/list", vals("type", "unused")).data().([]any)
	if len(d7) != 1 {
		t.Fatalf("jpl-proxmox7 unused disks %v", d7)
	}
	if d := d7[0].(map[string]any); d["model"] != "Samsung_SSD_850_EVO_250GB" || d["size"] != 250059350016.0 || d["type"] != "ssd" || d["rpm"] != 0.0 {
		t.Errorf("850 EVO %v", d)
	}
	// The thin pool follows the 240 GB boot disk as the installer sizes it:
	// 222.5 GiB after the ESP, less 8 GiB swap, 65.6 GiB root (a quarter
	// plus 12 GiB), 16 GiB free and twice 1.33 GiB metadata.
	pools := c.ok("GET", "/nodes/jpl-proxmox7/disks/lvmthin", nil).data().([]any)
	if len(pools) != 1 {
		t.Fatalf("thin pools %v", pools)
	}
	if gib := pools[0].(map[string]any)["lv_size"].(float64) / (1 << 30); gib < 130 || gib > 130.5 {
		t.Errorf("pve/data %.2f GiB, want about 130.3", gib)
	}
}

// SAS 15K HDDs are hdd with their rpm and no wear level.
func TestLabConsumerDiskTypes(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "consumer"), NoSSH: true})
	c := standaloneClient(t, info, 2)
	for _, e := range c.ok("GET", "/nodes/cons3/disks/list", vals("type", "unused")).data().([]any) {
		// No wear level on a spinning disk (Diskmanage: only ssd-like ones).
		if d := e.(map[string]any); d["type"] != "hdd" || d["rpm"] != 15000.0 || d["vendor"] != "SEAGATE" || d["wearout"] != "N/A" {
			t.Errorf("cons3 disk %v", d)
		}
	}
}

// fio on a lab disk gives the lab's sync-write figure for one job at QD1;
// drives without PLP barely gain from more jobs, drives with it do.
func TestLabFioUsesSyncWriteIOPS(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "consumer")})
	tg := sshAs(t, info, "cons1", "root")
	job := "--filename=/dev/sdb --direct=1 --fsync=1 --rw=write --bs=4k --iodepth=1 --runtime=60 --time_based --allow_mounted_write=1"
	one := runFio(t, tg, job+" --numjobs=1").Jobs[0].Write.IOPS
	if math.Abs(one-80)/80 > 0.08 {
		t.Errorf("WD Green QD1 fsync: %.0f IOPS, lab says 80", one)
	}
	eight := runFio(t, tg, job+" --numjobs=8").Jobs[0].Write.IOPS
	if eight >= 100 || eight < one {
		t.Errorf("WD Green 8 jobs: %.0f IOPS (one job %.0f), want under 100", eight, one)
	}
	_, info = startSim(t, Options{Lab: shippedLab(t, "reference")})
	a := sshAs(t, info, "z2g4a", "root")
	plp := runFio(t, a, strings.Replace(job, "/dev/sdb", "/dev/sdc", 1)+" --numjobs=1").Jobs[0].Write.IOPS
	if math.Abs(plp-10000)/10000 > 0.08 {
		t.Errorf("D3-S4510 QD1 fsync: %.0f IOPS, lab says 10000", plp)
	}
}

// Info, /etc/hosts and the node certificate carry the lab's address and
// FQDN.
func TestLabManagementAddressAndFQDN(t *testing.T) {
	s, info := startSim(t, Options{Lab: shippedLab(t, "reference")})
	if info.ManagementAddress != "172.27.2.10" || info.FQDN != "z2g4a.lab.example" {
		t.Errorf("Info: %q %q", info.ManagementAddress, info.FQDN)
	}
	if n := info.Nodes[2]; n.ManagementAddress != "172.27.2.12" || n.FQDN != "z2g4c.lab.example" {
		t.Errorf("NodeInfo: %+v", n)
	}
	hosts := sshAs(t, info, "z2g4c", "root").ok("cat /etc/hosts")
	if !strings.Contains(hosts, "\n172.27.2.12 z2g4c.lab.example z2g4c\n") || !strings.HasPrefix(hosts, "127.0.0.1 localhost.localdomain localhost\n") {
		t.Errorf("/etc/hosts:\n%s", hosts)
	}
	s.mu.Lock()
	certPEM := s.st.Nodes["z2g4c"].CertPEM
	m := *s.st.Nodes["z2g4c"].Mgmt
	s.mu.Unlock()
	if want := (nodeMgmt{Address: "172.27.2.12", Prefix: 24, Gateway: "172.27.2.254", NIC: "bcm5720p0", FQDN: "z2g4c.lab.example"}); m != want {
		t.Errorf("Mgmt %+v", m)
	}
	blk, _ := pem.Decode([]byte(certPEM))
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "z2g4c.lab.example" || !reflect.DeepEqual(cert.DNSNames, []string{"localhost", "z2g4c", "z2g4c.lab.example"}) {
		t.Errorf("certificate names %q %v", cert.Subject.CommonName, cert.DNSNames)
	}
	if ips := fmt.Sprint(cert.IPAddresses); !strings.Contains(ips, "172.27.2.12") {
		t.Errorf("certificate IPs %s", ips)
	}
}

// start cluster: the installer's nodes clustered, corosync on the
// management addresses.
func TestLabClusterStart(t *testing.T) {
	lab := shippedLab(t, "diskless")
	lab.Start = StartCluster
	_, info := startSim(t, Options{Lab: lab, NoSSH: true})
	c := newClient(t, info, "")
	var ips []string
	for _, e := range c.ok("GET", "/cluster/status", nil).data().([]any) {
		m := e.(map[string]any)
		if m["type"] == "cluster" {
			if m["name"] != "jpl" || m["nodes"] != 4.0 {
				t.Errorf("cluster %v", m)
			}
			continue
		}
		ips = append(ips, m["ip"].(string))
	}
	sort.Strings(ips)
	if want := []string{"10.33.80.16", "10.33.80.17", "10.33.80.18", "10.33.80.19"}; !reflect.DeepEqual(ips, want) {
		t.Errorf("node ips %v", ips)
	}
	if vmbr0 := findIface(c.ok("GET", "/nodes/jpl-proxmox8/network", nil).data(), "vmbr0"); vmbr0 == nil || vmbr0["cidr"] != "10.33.80.18/24" {
		t.Errorf("vmbr0 %v", vmbr0)
	}
}

// The lab wins over the options it covers, and Start leaves the caller's
// lab as it was.
func TestLabOverridesOptions(t *testing.T) {
	lab := testLab()
	s, info := startSim(t, Options{Lab: lab, Nodes: []string{"x"}, ClusterName: "other", PVERelease: "8.4", NoSSH: true})
	if len(info.Nodes) != 2 || info.Nodes[0].Name != "n1" || s.rel.atLeast9() != true {
		t.Errorf("nodes %v, release 9: %v", info.Nodes, s.rel.atLeast9())
	}
	if lab.Start != "" || lab.Domain != "" {
		t.Errorf("caller's lab changed: %+v", lab)
	}
	c := newClient(t, info, "")
	if st := c.ok("GET", "/cluster/status", nil).data().([]any); len(st) != 1 {
		t.Errorf("a cluster formed: %v", st)
	}
	// n1's eno2 has no link.
	s.mu.Lock()
	eno2 := *s.st.Nodes["n1"].NICs["eno2"]
	s.mu.Unlock()
	if want := (simNIC{Name: "eno2", MAC: "00:10:18:00:00:02", SpeedMbps: 10000, Link: false}); eno2 != want {
		t.Errorf("eno2 %+v", eno2)
	}
	bad := testLab()
	bad.Nodes[0].Management.NIC = "nope"
	if _, err := Start(Options{Lab: bad, NoSSH: true}); err == nil || !strings.Contains(err.Error(), `management.nic: "nope" is not one of the node's NICs`) {
		t.Errorf("invalid lab started: %v", err)
	}
}

// Without a lab nothing changes: no vmbr0, no management address, the
// reference addresses, Ceph installed.
func TestNoLabKeepsTestDefault(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	if findIface(c.ok("GET", "/nodes/z2g4a/network", nil).data(), "vmbr0") != nil {
		t.Error("vmbr0 without a lab")
	}
	if info.ManagementAddress != "" || info.FQDN != "" {
		t.Errorf("Info %q %q", info.ManagementAddress, info.FQDN)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes["z2g4b"]
	if ns.Mgmt != nil || ns.NICs != nil || s.hostIP("z2g4b") != "172.27.2.11" || !reflect.DeepEqual(ns.Physical, physicalNICs) {
		t.Errorf("node %+v, hostIP %s", ns, s.hostIP("z2g4b"))
	}
	if s.opts.CephNotInstalled {
		t.Error("Ceph not installed without a lab")
	}
}

// ethtool reports the lab's NIC speeds and carriers.
func TestLabEthtoolSpeedAndLink(t *testing.T) {
	lab := testLab()
	lab.Nodes[0].NICs[0].SpeedMbps = 25000
	_, info := startSim(t, Options{Lab: lab})
	tg := sshAs(t, info, "n1", "root")
	if out := tg.ok("ethtool eno1"); out != "Settings for eno1:\n\tSpeed: 25000Mb/s\n\tDuplex: Full\n\tAuto-negotiation: on\n\tPort: Direct Attach Copper\n\tLink detected: yes\n" {
		t.Errorf("eno1:\n%s", out)
	}
	if out := tg.ok("ethtool eno2"); !strings.Contains(out, "\tSpeed: Unknown!\n") || !strings.HasSuffix(out, "\tLink detected: no\n") {
		t.Errorf("eno2 without carrier:\n%s", out)
	}
	if out := tg.ok("ethtool vmbr0"); out != "Settings for vmbr0:\n\tLink detected: yes\n" {
		t.Errorf("vmbr0:\n%s", out)
	}
	if _, errs, code := tg.run("ethtool eno9", nil); code != 1 || !strings.Contains(errs, "No such device") {
		t.Errorf("eno9: %d %q", code, errs)
	}
	// Without a lab: the reference NICs at their nominal speed.
	_, info = startSim(t, Options{})
	if out := sshAs(t, info, "z2g4a", "root").ok("ethtool cx354ap1"); !strings.Contains(out, "\tSpeed: 40000Mb/s\n") {
		t.Errorf("cx354ap1:\n%s", out)
	}
}
