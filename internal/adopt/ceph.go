package adopt

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/service/ceph"
)

const cephFile = "ceph.tf"

// adoptCeph adopts Ceph: install, cluster, monitors, managers, OSDs, pools, flags, ceph.conf and the config database.
// A cluster without Ceph adopts nothing.
func adoptCeph(ctx context.Context, r *run) error {
	// Which nodes have Ceph: pve_ceph_install's own Read (dpkg over SSH)
	// drops nodes without the daemons' packages (a fresh PVE has only the
	// client).
	var installed []string
	if r.src.SSH == nil {
		r.skip("pve_ceph_install and pve_ceph_config (ceph.conf, config database)", errNoSSH.Error())
		// Without SSH, a node whose Ceph API answers has Ceph.
		for _, n := range r.nodes {
			if _, err := r.api.CephMons(ctx, n); err == nil {
				installed = append(installed, n)
			}
		}
	} else {
		for _, n := range r.nodes {
			st, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_install", Name: "lab",
				Comment: "Ceph's packages (pveceph install) on the nodes that run Ceph daemons."}, n, n)
			if err != nil {
				return err
			}
			if st != nil {
				installed = append(installed, n)
			}
		}
	}
	if len(installed) == 0 {
		return nil
	}
	node := installed[0] // the node whose API (and ceph commands) the resources use

	cl, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_cluster", Name: "lab",
		Comment:   "The Ceph cluster (pveceph init): /etc/pve/ceph.conf and its networks.",
		DependsOn: []string{"pve_ceph_install.lab"}}, "", node)
	if err != nil {
		return err
	}
	if cl == nil {
		return nil // installed, never initialised
	}
	if cl.String("cluster_network") == cl.String("network") {
		// What PVE does when no separate cluster network is given.
		cephOmit(r, "pve_ceph_cluster.lab", "cluster_network")
	}

	mons, err := r.api.CephMons(ctx, node)
	if err != nil {
		return fmt.Errorf("list the Ceph monitors (GET /nodes/%s/ceph/mon): %w", node, err)
	}
	sort.Slice(mons, func(i, j int) bool { return mons[i].Host < mons[j].Host })
	single := true
	for _, m := range mons {
		st, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_monitor", Name: "lab",
			Comment: "A monitor per node that has one.", DependsOn: []string{"pve_ceph_cluster.lab"}}, m.Host, m.Name)
		if err != nil {
			return err
		}
		if st != nil && len(cephList(st, "addresses")) != 1 {
			single = false
		}
	}
	if single {
		// One address each: the one PVE picks itself in the public network.
		cephOmit(r, "pve_ceph_monitor.lab", "addresses")
	}
	mgrs, err := r.api.CephMgrs(ctx, node)
	if err != nil {
		return fmt.Errorf("list the Ceph managers (GET /nodes/%s/ceph/mgr): %w", node, err)
	}
	sort.Slice(mgrs, func(i, j int) bool { return mgrs[i].Host < mgrs[j].Host })
	for _, m := range mgrs {
		if _, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_manager", Name: "lab",
			Comment: "A manager per node that has one.", DependsOn: []string{"pve_ceph_monitor.lab"}}, m.Host, m.Name); err != nil {
			return err
		}
	}

	if err := adoptCephOSDs(ctx, r, node); err != nil {
		return err
	}
	if err := adoptCephPools(ctx, r, node); err != nil {
		return err
	}
	if _, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_flags", Name: "lab",
		Comment: "The cluster-wide OSD flags: the ones set now are managed as set; a flag set later\n" +
			"shows in the plan only once it is written here.",
		DependsOn: []string{"pve_ceph_cluster.lab"}}, "", "cluster"); err != nil {
		// PVE answers /cluster/ceph/flags on the node asked only, and
		// only where ceph-mon is installed (PVE/Ceph/Tools.pm
		// check_ceph_inited): not through a node without Ceph.
		if !strings.Contains(err.Error(), "binary not installed") {
			return err
		}
		r.skip("pve_ceph_flags (the cluster's OSD flags)", "the node the provider's endpoint is has no Ceph installed, and PVE "+
			"reads and sets the flags (/cluster/ceph/flags) only on a node with Ceph: point the endpoint at one of "+
			strings.Join(installed, ", ")+" to manage them")
	}
	if r.src.SSH != nil {
		if err := adoptCephConfig(ctx, r, node); err != nil {
			return err
		}
	}
	return nil
}

// adoptCephOSDs adds an OSD per disk that holds one, keyed <node>/<disk>
// (such as z2g4a/sdb) and imported by device as a for_each over disks
// would be written by hand: the OSD ids Ceph gave are not part of it.
func adoptCephOSDs(ctx context.Context, r *run, node string) error {
	tree, err := r.api.CephOSDTree(ctx, node)
	if err != nil {
		return fmt.Errorf("read the OSD tree (GET /nodes/%s/ceph/osd): %w", node, err)
	}
	byHost := map[string][]pve.CephOSD{}
	var hosts []string
	for _, o := range tree.OSDs {
		if _, ok := byHost[o.Host]; !ok {
			hosts = append(hosts, o.Host)
		}
		byHost[o.Host] = append(byHost[o.Host], o)
	}
	sort.Strings(hosts)
	classesDetected := true // every OSD has the class Ceph gives its kind of disk
	for _, h := range hosts {
		disks, err := r.api.Disks(ctx, h, false)
		if err != nil {
			return fmt.Errorf("list the disks of %s (GET /nodes/%s/disks/list): %w", h, h, err)
		}
		sort.Slice(disks, func(i, j int) bool { return disks[i].DevPath < disks[j].DevPath })
		found := map[int64]bool{}
		for _, d := range disks {
			detected := map[string]string{"ssd": "ssd", "hdd": "hdd", "nvme": "nvme"}[d.Type]
			var ids []int64
			for _, o := range byHost[h] {
				if d.HasOSD(o.ID) {
					ids = append(ids, o.ID)
				}
			}
			if len(ids) == 0 {
				continue
			}
			dev := strings.TrimPrefix(d.DevPath, "/dev/")
			key := h + "/" + dev
			st, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_osd", Name: "lab",
				Comment:   "An OSD per disk, keyed <node>/<disk>.",
				DependsOn: []string{"pve_ceph_manager.lab"}}, key, key)
			if err != nil {
				return err
			}
			if st != nil && st.String("crush_device_class") != detected {
				classesDetected = false
			}
			for _, id := range ids {
				found[id] = true
			}
		}
		for _, o := range byHost[h] {
			if !found[o.ID] {
				r.skip(fmt.Sprintf("Ceph OSD osd.%d on %s", o.ID, h),
					"PVE's disk list of the node shows it on no whole disk (a partition or logical volume): pve_ceph_osd creates and imports OSDs by disk")
			}
		}
	}
	if classesDetected {
		cephOmit(r, "pve_ceph_osd.lab", "crush_device_class")
	}
	return nil
}

// cephOmit leaves attrs out of a group's block once its objects are read:
// values PVE or Ceph chose themselves, which a person would not write.
func cephOmit(r *run, addr string, attrs ...string) {
	if g, ok := r.byAddr[addr]; ok {
		g.Omit = append(g.Omit, attrs...)
	}
}

// cephList returns a list attribute's strings.
func cephList(st State, name string) []string {
	v, ok := st[name]
	if !ok || v.IsNull() || !v.IsKnown() {
		return nil
	}
	var elems []tftypes.Value
	if v.As(&elems) != nil {
		return nil
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if e.As(&s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// adoptCephPools adds one block per pool, named after it as a person
// would (pve_ceph_pool.ceph); Ceph's own .mgr pool is not one of them.
func adoptCephPools(ctx context.Context, r *run, node string) error {
	pools, err := r.api.CephPools(ctx, node)
	if err != nil {
		return fmt.Errorf("list the Ceph pools (GET /nodes/%s/ceph/pool): %w", node, err)
	}
	sort.Slice(pools, func(i, j int) bool { return pools[i].Name < pools[j].Name })
	used := map[string]bool{}
	for _, p := range pools {
		if p.Name == ".mgr" || p.Application == "mgr" {
			r.skip("Ceph pool "+p.Name, "Ceph's own pool for the managers' data, created with the first manager: "+
				"pve_ceph_pool manages pools for guests (rbd, cephfs, rgw)")
			continue
		}
		name := cephTFName(p.Name)
		for used[name] {
			name += "_"
		}
		used[name] = true
		g := Group{File: cephFile, Type: "pve_ceph_pool", Name: name,
			Comment:   fmt.Sprintf("Pool %s (its PVE storage, if any, is a pve_storage).", p.Name),
			DependsOn: []string{"pve_ceph_osd.lab"}}
		if p.PGAutoscaleMode == "on" {
			// The autoscaler owns pg_num: writing today's value would
			// fight it.
			g.Omit = append(g.Omit, "pg_num")
		}
		if p.CrushRule == "replicated_rule" {
			g.Omit = append(g.Omit, "crush_rule") // Ceph's default rule
		}
		if _, err := r.add(ctx, g, "", node+"/"+p.Name); err != nil {
			return err
		}
	}
	return nil
}

// cephPVEKeys are the [global] keys PVE writes itself (pveceph init,
// monitor create; PVE/API2/Ceph.pm, PVE/Ceph/Services.pm): pve_ceph_cluster
// and pve_ceph_monitor manage them.
var cephPVEKeys = map[string]bool{
	"fsid": true, "auth_cluster_required": true, "auth_service_required": true, "auth_client_required": true,
	"osd_pool_default_size": true, "osd_pool_default_min_size": true, "mon_allow_pool_delete": true,
	"public_network": true, "cluster_network": true, "mon_host": true, "ms_bind_ipv4": true, "ms_bind_ipv6": true,
	"public_addr": true, "cluster_addr": true, "host": true, "keyring": true, "mds_standby_for_name": true,
}

// cephRestarts reports whether the provider restarts the daemons of a
// section (who): monitors, managers and OSDs, and everything for global.
// Clients read their settings when they connect, metadata servers are not
// restarted by pve_ceph_config.
func cephRestarts(who string) bool {
	kind, _, _ := strings.Cut(who, ".")
	switch kind {
	case "global", "mon", "mgr", "osd":
		return true
	}
	return false
}

// adoptCephConfig adds a pve_ceph_config per ceph.conf section that holds
// settings of the user's, and per section of the config database.
func adoptCephConfig(ctx context.Context, r *run, node string) error {
	raw, err := r.api.CephConfigRaw(ctx, node)
	if err != nil {
		return fmt.Errorf("read ceph.conf (GET /nodes/%s/ceph/cfg/raw): %w", node, err)
	}
	secs, order := ceph.ConfKeys(raw)
	for _, who := range order {
		// Only the keys set by hand are imported (keys=), in every
		// section: PVE's own (fsid and mon_host in [global], the keyring
		// lines of [client] and [mds]) stay unmanaged, so that removing or
		// destroying the pve_ceph_config never deletes them (a [client]
		// without its keyring cuts every client off Ceph).
		var own []string
		for _, k := range secs[who] {
			if !cephPVEKeys[k] && !contains(own, k) {
				own = append(own, k)
			}
		}
		if len(own) == 0 {
			continue // such as [client] keyring = ...: what pveceph init wrote
		}
		if !cephWhoRE.MatchString(who) {
			r.skip("ceph.conf ["+who+"]", "pve_ceph_config manages global, mon, mgr, osd, mds and client sections (with .<id>)")
			continue
		}
		sort.Strings(own)
		comment := fmt.Sprintf("The options set by hand in [%s] of /etc/pve/ceph.conf; PVE's own (keyring, ...) and every\n"+
			"other line of the file, comments included, stay as they are.", who)
		if who == "global" || strings.HasPrefix(who, "mon.") || strings.HasPrefix(who, "mds.") {
			comment = fmt.Sprintf("The options set by hand in [%s] of /etc/pve/ceph.conf; PVE's own (fsid, networks, mon_host, ...)\n"+
				"are left to pve_ceph_cluster and pve_ceph_monitor.", who)
		}
		if err := addCephConfig(ctx, r, node, "ceph_conf", who, strings.Join(own, ","), comment); err != nil {
			return err
		}
	}

	db, err := r.api.CephConfigDB(ctx, node)
	if err != nil {
		return fmt.Errorf("read the Ceph config database (GET /nodes/%s/ceph/cfg/db): %w", node, err)
	}
	var whos []string
	seen := map[string]bool{}
	for _, e := range db {
		if e.Mask != "" {
			r.skip(fmt.Sprintf("Ceph config database %s/%s %s", e.Section, e.Mask, e.Name),
				"an option with a mask (ceph config set <who>/<mask>): pve_ceph_config manages options of a section without one")
			continue
		}
		if !seen[e.Section] {
			seen[e.Section] = true
			whos = append(whos, e.Section)
		}
	}
	sort.Strings(whos)
	for _, who := range whos {
		if !cephWhoRE.MatchString(who) {
			r.skip("Ceph config database section "+who, "pve_ceph_config manages global, mon, mgr, osd, mds and client sections (with .<id>)")
			continue
		}
		if err := addCephConfig(ctx, r, node, "config_db", who, "",
			fmt.Sprintf("Section %s of the monitors' configuration database (ceph config set %s ...).", who, who)); err != nil {
			return err
		}
	}
	return nil
}

// addCephConfig adds the pve_ceph_config of section who of target; keys
// (comma-separated) limits it to those options.
func addCephConfig(ctx context.Context, r *run, node, target, who, keys, comment string) error {
	suffix := map[string]string{"ceph_conf": "_conf", "config_db": "_db"}[target]
	var opts []string
	if cephRestarts(who) {
		// The daemons read ceph.conf (and some options) only when they
		// start: a change adopted here restarts them, host by host.
		opts = append(opts, "apply=rolling_restart")
		comment += "\nDaemons that must restart for a change are restarted one host at a time."
	}
	if keys != "" {
		opts = append(opts, "keys="+keys)
	}
	id := node + "/" + target + "/" + who
	if len(opts) > 0 {
		id += "?" + strings.Join(opts, "&")
	}
	deps := []string{"pve_ceph_cluster.lab"}
	if kind, _, _ := strings.Cut(who, "."); kind == "osd" {
		deps = []string{"pve_ceph_osd.lab"} // the OSDs it configures (and restarts)
	}
	_, err := r.add(ctx, Group{File: cephFile, Type: "pve_ceph_config", Name: cephTFName(who) + suffix, Comment: comment,
		DependsOn: deps}, "", id)
	return err
}

// cephWhoRE is pve_ceph_config's `who`.
var cephWhoRE = regexp.MustCompile(`^(global|(mon|mgr|osd|mds|client)(\.[A-Za-z0-9_.-]+)?)$`)

// tfName makes a Terraform name of s: letters, digits and underscores,
// starting with a letter.
func cephTFName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	out := string(b)
	if out == "" || out[0] < 'a' || out[0] > 'z' {
		out = "pool_" + out
	}
	return out
}
