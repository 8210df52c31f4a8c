package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// /cluster/resources rows of storages, after pve-manager
// PVE/API2/Cluster.pm resources and PVE::API2Tools::extract_storage_stats:
// one row per storage of PVE::Storage::config() and cluster node where the
// storage is enabled. Sizes come from the node's rrd data, which pvestatd
// only sends for storages it could activate; without it the row is
// `unknown` and has no sizes.

func storageResourceRows(c *call) []map[string]any {
	s := c.s
	order, ids := s.parsedStorageCfg(c.listener)
	cc := s.clusterOf(c.listener)
	domain := s.st.Nodes[c.listener].Domain
	nodes := s.visibleNodeNames(c.listener)
	// Each node's storage_info once, not once per storage.
	infos := map[string]map[string]map[string]any{}
	for _, node := range nodes {
		if ns := s.st.Nodes[node]; ns != nil && (cc == nil || s.memberOnline(domain, node)) {
			infos[node] = s.storageInfo(node, "")
		}
	}
	var out []map[string]any
	for _, id := range order {
		e := ids[id]
		for _, node := range nodes {
			if e.checkUsable(node) != nil {
				continue
			}
			out = append(out, storageStatsRow(id, e, node, infos[node][id]))
		}
	}
	return out
}

// storageStatsRow is extract_storage_stats; info is the node's
// storage_info entry (nil when the node sent none).
func storageStatsRow(id string, e *storageEntry, node string, info map[string]any) map[string]any {
	cts := splitList(strings.ReplaceAll(e.Opts["content"], ",", " "))
	sort.Strings(cts)
	row := map[string]any{
		"id": "storage/" + node + "/" + id, "storage": id, "node": node, "type": "storage",
		"plugintype": e.Type, "status": "unknown", "shared": boolInt(e.Opts["shared"] == "1"),
		"content": strings.Join(cts, ","),
	}
	if info != nil && info["active"] == 1 {
		row["maxdisk"], row["disk"], row["status"] = info["total"], info["used"], "available"
	}
	return row
}

// localNetworkRows are the default "localnetwork" SDN zone of every
// cluster node, which Cluster.pm adds itself (the simulator has no other
// zones). PVE 9 lists it as a `network` row in the untyped listing only,
// and no `sdn` rows (every node sends network status instead); PVE 8 as
// an `sdn` row.
func localNetworkRows(c *call, typ string) []map[string]any {
	var out []map[string]any
	nine := c.s.rel.atLeast9()
	if (nine && typ != "") || (!nine && typ != "" && typ != "sdn") {
		return nil
	}
	for _, node := range c.s.visibleNodeNames(c.listener) {
		if nine {
			out = append(out, map[string]any{"id": "network/" + node + "/zone/localnetwork", "type": "network",
				"network-type": "zone", "network": "localnetwork", "node": node, "status": "ok"})
		} else {
			out = append(out, map[string]any{"id": "sdn/" + node + "/localnetwork", "sdn": "localnetwork",
				"node": node, "type": "sdn", "status": "ok"})
		}
	}
	return out
}

func nextID(c *call) (any, *apiError) {
	s := c.s
	if v := c.params["vmid"]; v != "" {
		id, _ := strconv.Atoi(v)
		if n, _ := s.guestNodeLocked(c.listener, id); n != "" {
			return nil, paramErr1("vmid", fmt.Sprintf("VM %d already exists", id))
		}
		// PVE returns the parameter as it came: a string.
		return v, nil
	}
	lower, upper := 100, 1000*1000
	if dc := s.st.Domains[s.st.Nodes[c.listener].Domain].Datacenter; dc != nil {
		if ni := dc.Values["next-id"]; ni != "" {
			for _, kv := range strings.Split(ni, ",") {
				k, v, _ := strings.Cut(kv, "=")
				n, err := strconv.Atoi(v)
				if err != nil {
					continue
				}
				switch k {
				case "lower":
					lower = n
				case "upper":
					upper = n
				}
			}
		}
	}
	used := map[int]bool{}
	for _, id := range s.guestIDsLocked(c.listener) {
		used[id] = true
	}
	for i := lower; i < upper; i++ {
		if !used[i] {
			return strconv.Itoa(i), nil // PVE's answer is a JSON string ("101")
		}
	}
	return nil, die("unable to get any free VMID in range [%d, %d]", lower, upper)
}

// vmResourceRows are /cluster/resources' type=vm rows of the listener's
// trust domain, with `hastate` when HA manages the VM.
func vmResourceRows(c *call) []map[string]any {
	s := c.s
	var out []map[string]any
	for _, id := range s.guestIDsLocked(c.listener) {
		node, vm := s.guestNodeLocked(c.listener, id)
		if vm == nil {
			continue
		}
		vm.normalize()
		r := vm.statusRow()
		r["id"] = fmt.Sprintf("qemu/%d", id)
		r["type"] = "qemu"
		r["node"] = node
		r["maxcpu"] = r["cpus"]
		delete(r, "cpus")
		if _, ok := r["template"]; !ok {
			r["template"] = 0
		}
		if st := s.haStateLocked(node, id); st != "" {
			r["hastate"] = st
		}
		delete(r, "pid")
		out = append(out, r)
	}
	return out
}
