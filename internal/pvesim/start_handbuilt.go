package pvesim

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The hand-built starting state (StartHandBuilt): the end of the reference
// lab's build log (reference-lab.md, "Main lab"), leftovers included, for
// adoption (issue #12). It is reached by replaying that log on the
// fresh-install (or cluster) nodes through the simulator's own API and
// shell (start_handbuilt_exec.go), step by step as the user did it:
//
//  1. network (start_handbuilt_node.go): vmbr0 removed; bond0 (802.3ad,
//     miimon 100) over two NICs; bridge0 (VLAN-aware, vids 2-4094) on
//     bond0 with the management address and gateway; bridge0.60 with
//     169.254.60.H/24; the storage NIC with 169.254.50.H/24, MTU 9000;
//     one staged change set, one reload.
//  2. cluster: created on the first node, joined by the others, link0 on
//     169.254.60.H and link1 on 169.254.50.H (from the cluster state,
//     which Start builds first, the existing cluster's links are moved
//     there as by an edit of corosync.conf); migration secure over
//     169.254.50.0/24, HA shutdown policy migrate.
//  3. node base: pve-no-subscription added, enterprise repositories
//     disabled; the internal root CA trusted; systemd-journal-upload
//     configured (journal-upload.conf, a Restart=always drop-in) and
//     enabled --now; the ACME bullet's pve-daily-update.timer drop-in
//     (OnCalendar= cleared, then 00/4:00, RandomizedDelaySec=0; the ACME
//     account and certificate order are not replayed); tuned
//     latency-performance; the storage NIC's rings
//     rx/tx 2048 set by hand with ethtool (the log persists nothing, so
//     there is no unit: a reboot would lose them).
//  4. Ceph: pveceph install (squid, no-subscription) everywhere, init on
//     169.254.50.0/24, a monitor and a manager per node, OSDs on the
//     power-loss-protected data disks, pool `ceph` (3/2, rbd) with PVE
//     storage `ceph`; ceph.conf edited by hand ([client] rbd cache
//     settings, [osd] section, a hand comment), then every node's OSDs
//     restarted one node at a time.
//  5. guests: VM 100 per the log on the first node, running; its first
//     disk was detached (unused0 = ceph:vm-100-disk-0), which is why
//     scsi0 is ceph:vm-100-disk-1; then an HA resource vm:100 (state
//     started, no group on 8.4, no rule on 9.1); VM 101 stopped on the
//     second node, without HA.
//  6. leftovers beyond the log: osd_max_backfills set in the config
//     database only (never in ceph.conf).
//
// H is the last octet of the node's management address (172.27.2.12 ->
// 169.254.60.12), as in the log. Labs with other hardware follow the same
// rules (hbPlan): the storage NIC is cx354ap1 when the node has it, else
// its fastest NIC besides the management NIC; bond0 takes the first two
// NICs in the lab's order that are not the storage NIC. A node without
// two such NICs has no bond: bridge0 bridges its management NIC itself.
// When any node lacks a bond there is no corosync VLAN (no bridge0.60):
// link0 goes on the storage network and link1 on the management address
// (as examples/labs/diskless links its cluster). OSDs go on every data
// disk (not the boot disk) with power_loss_protection when three nodes
// have one, else on every data disk ("one default OSD per disk", what a
// lab of consumer drives did); three nodes need OSDs for the pool. The
// rings (ethtool -G) are set only on a cx354ap1, the NIC the log tuned.
//
// What the hardware does not decide comes from hbRules, a table keyed by
// the lab's name, else from the reference log. The diskless lab (the
// variant of reference-lab.md): storage network 192.168.100.0/24 (Ceph's
// cluster network; its public network the management one), pveceph,
// monitors and managers only on the three nodes with OSDs, pool and
// storage testpool, none of the reference's Ceph tuning (ceph.conf edit,
// backfills leftover, rolling restart). A lab that cannot be built so is
// an error naming what is missing.

// Network facts of the build log.
const (
	hbCorosyncNet = "169.254.60"
	hbStorageNet  = "169.254.50"
	hbCorosyncVID = 60
	hbStorageMTU  = 9000
	hbCephPool    = "ceph"
)

// hbLabRules are what a lab's user chose where the hardware does not
// decide: the storage network, the pool, where Ceph's daemons and
// networks go, and whether the reference log's Ceph tuning was done.
type hbLabRules struct {
	storageNet      string // 169.254.50 (a /24 by its first three octets)
	pool            string
	cephPublicMgmt  bool // Ceph's public network is the management network, its cluster network the storage one
	cephOSDHostOnly bool // pveceph install, monitors and managers only on the nodes with OSDs
	cephTuning      bool // the reference log's ceph.conf edit, backfills leftover and rolling restart
}

// hbRules is the per-lab table of those choices, keyed by the lab's name;
// every other lab follows the reference log.
var hbRules = map[string]hbLabRules{
	// The variant of reference-lab.md: the cluster network is
	// 192.168.100.0/24, Ceph "one default OSD per disk, pool testpool",
	// its daemons on the three storage nodes (examples/labs/diskless).
	"diskless": {storageNet: "192.168.100", pool: "testpool", cephPublicMgmt: true, cephOSDHostOnly: true},
}

func hbRulesOf(lab *Lab) hbLabRules {
	if r, ok := hbRules[lab.Name]; ok {
		return r
	}
	return hbLabRules{storageNet: hbStorageNet, pool: hbCephPool, cephTuning: true}
}

// hbNode is one node's part of the build.
type hbNode struct {
	name       string
	mgmtCIDR   string // 172.27.2.12/24
	mgmtNIC    string
	gateway    string
	host       int      // the last octet of the management address
	bond       []string // bond0's slaves; none: bridge0 bridges mgmtNIC
	storageNIC string
	osdDisks   []string // /dev/sdb, /dev/sdc
	vlan       bool     // corosync link0 on bridge0.60 (every node has a bond)
	rules      *hbLabRules
}

func (n hbNode) corosyncAddr() string { return fmt.Sprintf("%s.%d", hbCorosyncNet, n.host) }
func (n hbNode) storageAddr() string  { return fmt.Sprintf("%s.%d", n.rules.storageNet, n.host) }

// links are corosync's link0 and link1: the corosync VLAN and the storage
// network, or without the VLAN the storage network and the management
// address (as examples/labs/diskless links its cluster).
func (n hbNode) links() (string, string) {
	if n.vlan {
		return n.corosyncAddr(), n.storageAddr()
	}
	return n.storageAddr(), n.mgmtAddr()
}

// bridgePort is what bridge0 bridges.
func (n hbNode) bridgePort() string {
	if len(n.bond) > 0 {
		return "bond0"
	}
	return n.mgmtNIC
}
func (n hbNode) mgmtAddr() string {
	p, _ := netip.ParsePrefix(n.mgmtCIDR)
	return p.Addr().String()
}

// hbPlan derives each node's part from the lab, or says why the lab cannot
// be hand-built.
func hbPlan(lab *Lab) ([]hbNode, error) {
	if len(lab.Nodes) < 3 {
		return nil, fmt.Errorf("lab %q: the hand-built state needs at least 3 nodes (a Ceph pool of size 3 over hosts), the lab has %d", lab.Name, len(lab.Nodes))
	}
	seen := map[int]string{}
	rules := hbRulesOf(lab)
	var out []hbNode
	for _, ln := range lab.Nodes {
		n := hbNode{name: ln.Name, mgmtCIDR: ln.Management.CIDR, mgmtNIC: ln.Management.NIC, gateway: ln.Management.Gateway, rules: &rules}
		where := fmt.Sprintf("lab %q node %s", lab.Name, ln.Name)
		p, err := netip.ParsePrefix(ln.Management.CIDR)
		if err != nil || !p.Addr().Is4() {
			return nil, fmt.Errorf("%s: the hand-built state needs an IPv4 management cidr, not %q", where, ln.Management.CIDR)
		}
		if ln.Management.Gateway == "" {
			return nil, fmt.Errorf("%s: the hand-built state needs a management gateway", where)
		}
		n.host = int(p.Addr().As4()[3])
		if n.host == 0 || n.host == 255 {
			return nil, fmt.Errorf("%s: management address %s ends in %d, which cannot be the host part of %s.0/24", where, p.Addr(), n.host, hbCorosyncNet)
		}
		if other, dup := seen[n.host]; dup {
			return nil, fmt.Errorf("%s: management address ends in %d like node %s's; the corosync and storage addresses (%s.%d) would collide", where, n.host, other, hbCorosyncNet, n.host)
		}
		seen[n.host] = ln.Name

		n.storageNIC = hbStorageNIC(ln)
		if n.storageNIC == "" {
			return nil, fmt.Errorf("%s: the hand-built state needs a storage NIC besides the management NIC %s", where, ln.Management.NIC)
		}
		var rest []string
		for _, nic := range ln.NICs {
			if nic.Name != n.storageNIC {
				rest = append(rest, nic.Name)
			}
		}
		if len(rest) >= 2 {
			n.bond = []string{rest[0], rest[1]}
		}
		out = append(out, n)
	}
	vlan := true
	for _, n := range out {
		vlan = vlan && len(n.bond) > 0
	}
	for i := range out {
		out[i].vlan = vlan
	}
	// The OSDs: on the power-loss-protected data disks when three nodes
	// have some, else on every data disk (what a lab of consumer drives
	// did: "one default OSD per disk").
	for _, plp := range []bool{true, false} {
		hosts := 0
		for i, ln := range lab.Nodes {
			out[i].osdDisks = nil
			for _, d := range ln.Disks {
				if !d.Boot && (d.PowerLossProtection || !plp) {
					out[i].osdDisks = append(out[i].osdDisks, d.Device)
				}
			}
			if len(out[i].osdDisks) > 0 {
				hosts++
			}
		}
		if hosts >= 3 {
			return out, nil
		}
	}
	var without []string
	for _, n := range out {
		if len(n.osdDisks) == 0 {
			without = append(without, n.name)
		}
	}
	return nil, fmt.Errorf("lab %q: the hand-built state puts the OSDs on the data disks (not the boot disk), "+
		"and pool %s (size 3 over hosts) needs three nodes with such disks; the lab has %d (none on %s)",
		lab.Name, rules.pool, len(out)-len(without), strings.Join(without, ", "))
}

// hbStorageNIC is cx354ap1 when the node has it (the reference lab), else
// the fastest NIC that is not the management NIC (the first of equals).
func hbStorageNIC(ln LabNode) string {
	best := -1
	for i, nic := range ln.NICs {
		if nic.Name == "cx354ap1" {
			return nic.Name
		}
		if nic.Name == ln.Management.NIC {
			continue
		}
		if best < 0 || nic.SpeedMbps > ln.NICs[best].SpeedMbps {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return ln.NICs[best].Name
}

// applyHandBuilt turns the started nodes (fresh-install or cluster) into
// the lab built by hand. Start calls it with s.mu held, before any
// listener starts; the replay releases the lock while it runs, because
// its calls and their task workers take it themselves as requests do, and
// nothing else can run yet.
func (s *Sim) applyHandBuilt(lab *Lab) error {
	s.mu.Unlock()
	defer s.mu.Lock()
	plan, err := hbPlan(lab)
	if err != nil {
		return err
	}
	for _, n := range plan {
		ns := s.st.Nodes[n.name]
		if ns == nil {
			return fmt.Errorf("lab %q: node %s was not started", lab.Name, n.name)
		}
		for _, nic := range append([]string{n.storageNIC}, n.bond...) {
			if !slices.Contains(ns.Physical, nic) {
				return fmt.Errorf("lab %q node %s: no NIC %s on the started node", lab.Name, n.name, nic)
			}
		}
		for _, dev := range n.osdDisks {
			if findDisk(s.nodeDisks(ns), dev) == nil {
				return fmt.Errorf("lab %q node %s: no disk %s on the started node", lab.Name, n.name, dev)
			}
		}
	}
	// The log's work takes hours; replayed, tasks finish at once.
	saved := s.opts.TaskDuration
	s.opts.TaskDuration = 0
	defer func() {
		s.opts.TaskDuration = saved
		// What the replay ran is no client's concurrency.
		s.mu.Lock()
		s.running, s.peak = nil, nil
		s.saveLocked()
		s.mu.Unlock()
	}()
	steps := []func([]hbNode) error{
		s.hbNetwork,
		func(p []hbNode) error { return s.hbCluster(p, cmp.Or(lab.ClusterName, "lab")) },
		func(p []hbNode) error { return s.hbNodeBase(p, cmp.Or(lab.Domain, "lab.example")) },
		s.hbCeph,
		s.hbGuests,
	}
	for _, step := range steps {
		if err := step(plan); err != nil {
			return fmt.Errorf("lab %q: %w", lab.Name, err)
		}
	}
	return nil
}

// hbCluster is "created on one node, joined by the other two" plus the
// datacenter options. Nodes already clustered with the first (the cluster
// starting state) are kept, their corosync links moved to the log's
// networks as a user does it: by editing corosync.conf, which PVE's API
// cannot change.
func (s *Sim) hbCluster(plan []hbNode, name string) error {
	first := plan[0]
	s.mu.Lock()
	clustered := s.clusterOf(first.name) != nil
	s.mu.Unlock()
	if !clustered {
		l0, l1 := first.links()
		if err := s.hbCall(first.name, "POST", "/cluster/config", map[string]string{
			"clustername": name, "link0": l0, "link1": l1,
		}); err != nil {
			return err
		}
	} else if err := s.hbRelink(plan); err != nil {
		return err
	}
	for _, n := range plan[1:] {
		s.mu.Lock()
		mns := s.st.Nodes[first.name]
		member := s.st.Nodes[n.name].Domain == mns.Domain
		fp, pw := certFingerprint(mns.CertPEM), s.st.Domains[mns.Domain].RootPassword
		s.mu.Unlock()
		if member {
			continue
		}
		l0, l1 := n.links()
		if err := s.hbCall(n.name, "POST", "/cluster/config/join", map[string]string{
			"hostname": first.mgmtAddr(), "fingerprint": fp, "password": pw,
			"link0": l0, "link1": l1,
		}); err != nil {
			return err
		}
	}
	err := s.hbCall(first.name, "PUT", "/cluster/options", map[string]string{
		"migration": "type=secure,network=" + first.rules.storageNet + ".0/24",
		"ha":        "shutdown_policy=migrate",
	})
	return err
}

// hbRelink rewrites an existing cluster's links to link0 on the corosync
// VLAN and link1 on the storage network, one config_version bump as one
// edit of corosync.conf.
func (s *Sim) hbRelink(plan []hbNode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cc := s.clusterOf(plan[0].name)
	cc.Links = map[int]int64{0: 0, 1: 0}
	for _, n := range plan {
		cn := cc.Nodes[n.name]
		if cn == nil {
			continue // joins below, with the log's links
		}
		l0, l1 := n.links()
		cn.Rings = map[int]string{0: l0, 1: l1}
	}
	cc.ConfigVersion++
	s.saveLocked()
	return nil
}

// hbCeph is the Ceph part of the log, as the GUI and the shell did it.
func (s *Sim) hbCeph(all []hbNode) error {
	rules := all[0].rules
	plan := all
	if rules.cephOSDHostOnly {
		plan = nil
		for _, n := range all {
			if len(n.osdDisks) > 0 {
				plan = append(plan, n)
			}
		}
	}
	first := plan[0].name
	initParams := map[string]string{"network": rules.storageNet + ".0/24"}
	if rules.cephPublicMgmt {
		p, _ := netip.ParsePrefix(plan[0].mgmtCIDR)
		initParams = map[string]string{"network": p.Masked().String(), "cluster-network": rules.storageNet + ".0/24"}
	}
	for _, n := range plan {
		if _, err := s.hbShell(n.name, "pveceph install --version squid --repository no-subscription", ""); err != nil {
			return err
		}
	}
	if err := s.hbCall(first, "POST", "/nodes/"+first+"/ceph/init", initParams); err != nil {
		return err
	}
	for _, n := range plan {
		if err := s.hbCall(n.name, "POST", "/nodes/"+n.name+"/ceph/mon/"+n.name, nil); err != nil {
			return err
		}
	}
	// The first monitor brought the first node's manager.
	for _, n := range plan[1:] {
		if err := s.hbCall(n.name, "POST", "/nodes/"+n.name+"/ceph/mgr/"+n.name, nil); err != nil {
			return err
		}
	}
	for _, n := range plan {
		for _, dev := range n.osdDisks {
			if err := s.hbCall(n.name, "POST", "/nodes/"+n.name+"/ceph/osd", map[string]string{"dev": dev}); err != nil {
				return err
			}
		}
	}
	// The GUI's pool dialog: its defaults (128 PGs, autoscale on) and
	// "Add as Storage".
	if err := s.hbCall(first, "POST", "/nodes/"+first+"/ceph/pool", map[string]string{
		"name": rules.pool, "size": "3", "min_size": "2", "application": "rbd", "pg_num": "128",
		"pg_autoscale_mode": "on", "add_storages": "1",
	}); err != nil {
		return err
	}
	if !rules.cephTuning {
		if err := s.hbWaitCephClean(first, "the pool's creation"); err != nil {
			return err
		}
		return s.hbCephForgetHistory(first)
	}
	if err := s.hbCephConf(first); err != nil {
		return err
	}
	// Set once while tuning recovery and forgotten: in the monitors'
	// database, not in ceph.conf.
	if _, err := s.hbShell(first, "ceph config set osd osd_max_backfills 2", ""); err != nil {
		return err
	}
	// The rolling restart: one node at a time, the next only once the
	// restarted OSDs are back up and every PG is active+clean.
	for _, n := range plan {
		if _, err := s.hbShell(n.name, "systemctl restart ceph-osd.target", ""); err != nil {
			return err
		}
		if err := s.hbWaitCephClean(first, "the restart of "+n.name+"'s OSDs"); err != nil {
			return err
		}
	}
	return s.hbCephForgetHistory(first)
}

// hbCephForgetHistory: the test history (ceph_hooks.go) starts when the
// simulator does: what the user did before is not what a client under
// test did.
func (s *Sim) hbCephForgetHistory(first string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.st.Domains[s.st.Nodes[first].Domain].Ceph
	cli := cs.cli()
	cli.MaxHostsDown, cli.MaxMonsDown, cli.DownLog, cli.DownWithoutNoout = 0, 0, nil, nil
	cs.MinSizeViolations, cs.DataLoss, cs.UnsafeDestroys = nil, nil, nil
	if r := s.realCeph; r != nil {
		r.forget()
	}
	s.saveLocked()
	return nil
}

// hbWaitCephClean lets simulated time pass (what the user waited) until
// every OSD is up and every PG active+clean.
func (s *Sim) hbWaitCephClean(node, after string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.st.Domains[s.st.Nodes[node].Domain].Ceph
	if r := s.realCeph; r != nil {
		// the user waited for the real cluster
		if err := r.waitActiveClean(3 * time.Minute); err != nil {
			return fmt.Errorf("hand-built: %w (after %s)", err, after)
		}
		return s.syncPoolsLocked(cs)
	}
	s.cephTickLocked(cs)
	const step, limit = 5.0, 3600.0
	for waited := 0.0; ; waited += step {
		up := true
		for _, o := range cs.OSDs {
			up = up && o.isUp()
		}
		if up && cs.allActiveClean() {
			s.saveLocked()
			return nil
		}
		if waited >= limit {
			return fmt.Errorf("hand-built: Ceph not active+clean an hour after %s", after)
		}
		cs.advance(step)
	}
}

// hbGuests creates VM 100 as the log lists it, running and HA-managed,
// and VM 101, stopped and without HA, with a NIC whose MAC PVE chose.
func (s *Sim) hbGuests(plan []hbNode) error {
	n1, n2, pool := plan[0].name, plan[1].name, plan[0].rules.pool
	vm := "/nodes/" + n1 + "/qemu/100"
	if err := s.hbCall(n1, "POST", "/nodes/"+n1+"/qemu", map[string]string{
		"vmid": "100", "agent": "1", "bios": "ovmf", "cores": "4", "cpu": "host", "memory": "8192", "numa": "0",
		"ostype": "l26", "sockets": "1", "scsihw": "virtio-scsi-single", "scsi0": pool + ":32",
	}); err != nil {
		return err
	}
	// The first disk, detached (it stays as unused0) and replaced by one
	// with the log's options.
	if err := s.hbCall(n1, "PUT", vm+"/config", map[string]string{"delete": "scsi0"}); err != nil {
		return err
	}
	if err := s.hbCall(n1, "POST", vm+"/config", map[string]string{
		"scsi0": pool + ":32,cache=writeback,discard=on,iothread=1,ssd=1",
		// The detach took scsi0 out of the boot order; the GUI's Boot
		// Order dialog put the new disk back.
		"boot": "order=scsi0",
	}); err != nil {
		return err
	}
	if err := s.hbCall(n1, "POST", vm+"/status/start", nil); err != nil {
		return err
	}
	// "ha-manager add vm:100 --state started": a resource without a group
	// (8.4) or a rule (9.1), so free to run on any node.
	if err := s.hbCall(n1, "POST", "/cluster/ha/resources", map[string]string{"sid": "vm:100", "state": "started"}); err != nil {
		return err
	}
	err := s.hbCall(n2, "POST", "/nodes/"+n2+"/qemu", map[string]string{
		"vmid": "101", "cores": "2", "memory": "2048", "ostype": "l26", "scsihw": "virtio-scsi-single",
		"scsi0": pool + ":8,discard=on,iothread=1,ssd=1",
		// The GUI's network tab: a virtio NIC on the guest bridge with
		// the firewall box ticked; PVE picks the MAC.
		"net0": "virtio,bridge=bridge0,firewall=1",
	})
	return err
}

// hbTime is when the hand-built lab's CA was made: a year before the
// simulator starts, so the certificate looks as old as the lab.
func hbTime() time.Time { return time.Now().AddDate(-1, 0, 0) }
