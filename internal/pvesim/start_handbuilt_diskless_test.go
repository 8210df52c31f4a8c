package pvesim

import (
	"fmt"
	"strings"
	"testing"
)

// The shipped four-node lab with one diskless node, built by hand: no
// bond (two NICs per node), bridge0 on the management NIC, the cluster
// network 192.168.100.0/24 on the other NIC, corosync link0 there and
// link1 on the public network, Ceph's daemons and one OSD per 850 EVO on
// the three storage nodes (no PLP disks, so every data disk), pool and
// storage testpool.
func TestHandBuiltDisklessLab(t *testing.T) {
	lab, err := ShippedLab("diskless")
	if err != nil {
		t.Fatal(err)
	}
	lab.Start = StartHandBuilt
	_, info := startHandBuiltForTest(t, lab)
	c := newClient(t, info, "")

	quorate, members := false, 0
	for _, e := range c.ok("GET", "/cluster/status", nil).data().([]any) {
		m := e.(map[string]any)
		switch m["type"] {
		case "cluster":
			quorate = m["quorate"] == float64(1) && m["nodes"] == float64(4)
		case "node":
			members++
		}
	}
	if !quorate || members != 4 {
		t.Errorf("cluster quorate of 4: %v, %d members", quorate, members)
	}
	for _, e := range c.ok("GET", "/cluster/config/nodes", nil).data().([]any) {
		m := e.(map[string]any)
		if !strings.HasPrefix(m["ring0_addr"].(string), "192.168.100.") || !strings.HasPrefix(m["ring1_addr"].(string), "10.33.80.") {
			t.Errorf("corosync node %v: want link0 on 192.168.100.0/24, link1 on 10.33.80.0/24", m)
		}
	}

	for _, n := range lab.Nodes {
		host := strings.TrimPrefix(strings.Split(n.Management.CIDR, "/")[0], "10.33.80.")
		net := c.ok("GET", "/nodes/"+n.Name+"/network", nil).data()
		if m := findIface(net, "bridge0"); m == nil || m["bridge_ports"] != "enp1s0f0" || m["cidr"] != n.Management.CIDR || m["gateway"] != "10.33.80.1" {
			t.Errorf("%s bridge0 = %v, want on enp1s0f0 with %s", n.Name, m, n.Management.CIDR)
		}
		if m := findIface(net, "enp1s0f1"); m == nil || m["cidr"] != "192.168.100."+host+"/24" || fmt.Sprint(m["mtu"]) != "9000" {
			t.Errorf("%s enp1s0f1 = %v, want 192.168.100.%s/24, MTU 9000", n.Name, m, host)
		}
		for _, gone := range []string{"vmbr0", "bond0", "bridge0.60"} {
			if m := findIface(net, gone); m != nil {
				t.Errorf("%s has %s: %v", n.Name, gone, m)
			}
		}
	}

	st := c.ok("GET", "/nodes/jpl-proxmox7/ceph/status", nil).data().(map[string]any)
	if osdmap := st["osdmap"].(map[string]any); osdmap["num_osds"] != float64(3) || osdmap["num_up_osds"] != float64(3) {
		t.Errorf("osdmap %v, want 3 OSDs up", osdmap)
	}
	if q := st["quorum_names"].([]any); fmt.Sprint(q) != "[jpl-proxmox7 jpl-proxmox8 jpl-proxmox9]" {
		t.Errorf("monitors %v, want the three storage nodes", q)
	}
	// Consumer drives without PLP are no health check of Ceph's.
	if h := st["health"].(map[string]any); h["status"] != "HEALTH_OK" {
		t.Errorf("health %v, want HEALTH_OK", h)
	}
	tree := fmt.Sprint(c.ok("GET", "/nodes/jpl-proxmox7/ceph/osd", nil).data())
	if strings.Contains(tree, "jpl-proxmox6") {
		t.Errorf("OSD tree names the diskless node: %s", tree)
	}
	pools := fmt.Sprint(c.ok("GET", "/nodes/jpl-proxmox7/ceph/pool", nil).data())
	if !strings.Contains(pools, "pool_name:testpool") {
		t.Errorf("pools %s, want testpool", pools)
	}
	if cfg := c.ok("GET", "/storage/testpool", nil).data().(map[string]any); cfg["type"] != "rbd" || cfg["pool"] != "testpool" {
		t.Errorf("storage testpool %v", cfg)
	}
	conf := sshAs(t, info, "jpl-proxmox6", "root").ok("cat /etc/pve/ceph.conf")
	for _, want := range []string{"public_network = 10.33.80.0/24", "cluster_network = 192.168.100.0/24"} {
		if !strings.Contains(conf, want) {
			t.Errorf("ceph.conf lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "[osd]") {
		t.Errorf("ceph.conf has the reference log's [osd] edit:\n%s", conf)
	}
	if st := c.ok("GET", "/nodes/jpl-proxmox6/qemu/100/status/current", nil).data().(map[string]any); st["status"] != "running" {
		t.Errorf("VM 100 on the diskless node %v, want running", st["status"])
	}
	if cfg := c.ok("GET", "/nodes/jpl-proxmox6/qemu/100/config", nil).data().(map[string]any); !strings.HasPrefix(fmt.Sprint(cfg["scsi0"]), "testpool:vm-100-disk-1,") {
		t.Errorf("VM 100 scsi0 %v, want on testpool", cfg["scsi0"])
	}
}

// A lab without power-loss-protected data disks (consumer) gets an OSD on
// every data disk, with the reference log's networks (it has a bond).
func TestHandBuiltConsumerLabOSDsOnEveryDataDisk(t *testing.T) {
	lab, err := ShippedLab("consumer")
	if err != nil {
		t.Fatal(err)
	}
	lab.Start = StartHandBuilt
	data := 0
	for _, n := range lab.Nodes {
		for _, d := range n.Disks {
			if d.PowerLossProtection {
				t.Fatalf("%s %s has PLP; the test wants a lab without", n.Name, d.Device)
			}
			if !d.Boot {
				data++
			}
		}
	}
	_, info := startHandBuiltForTest(t, lab)
	c := newClient(t, info, "")
	st := c.ok("GET", "/nodes/cons1/ceph/status", nil).data().(map[string]any)
	if n := st["osdmap"].(map[string]any)["num_osds"]; n != float64(data) {
		t.Errorf("num_osds %v, want one per data disk (%d)", n, data)
	}
	if m := findIface(c.ok("GET", "/nodes/cons1/network", nil).data(), "bridge0"); m == nil || m["bridge_ports"] != "bond0" {
		t.Errorf("cons1 bridge0 = %v, want on bond0", m)
	}
}
