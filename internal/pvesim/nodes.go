package pvesim

import (
	"fmt"
	"net/http"
	"time"
)

func registerNodes(t *routeTable) {
	t.add("GET", "/nodes", &method{params: schema{}, handler: listNodes})
	t.add("GET", "/nodes/{node}", &method{params: schema{"node": nodeParam()}, handler: func(*call) (any, *apiError) {
		return subdirs("apt", "capabilities", "ceph", "certificates", "config", "disks", "dns", "network", "status", "storage", "tasks", "time", "version"), nil
	}})
	t.add("GET", "/nodes/{node}/status", &method{params: schema{"node": nodeParam()}, handler: nodeStatus})
	t.add("GET", "/cluster/resources", &method{params: schema{"type": pEnum("vm", "storage", "node", "sdn")}, handler: clusterResources})
	t.add("GET", "/nodes/{node}/version", &method{params: schema{"node": nodeParam()}, handler: func(c *call) (any, *apiError) {
		return c.s.rel.versionInfo(), nil
	}})
}

const (
	memTotal = 64 * 1024 * 1024 * 1024
	rootFS   = 100 * 1024 * 1024 * 1024
)

func listNodes(c *call) (any, *apiError) {
	out := []map[string]any{}
	now := time.Now().Unix()
	cc := c.s.clusterOf(c.listener)
	domain := c.s.st.Nodes[c.listener].Domain
	for _, name := range c.s.visibleNodeNames(c.listener) {
		ns := c.s.st.Nodes[name]
		if ns == nil || (cc != nil && !c.s.memberOnline(domain, name)) {
			// In corosync.conf but not up: PVE lists it offline.
			out = append(out, map[string]any{"node": name, "status": "offline", "type": "node", "id": "node/" + name, "level": ""})
			continue
		}
		out = append(out, map[string]any{
			"node": ns.Name, "status": "online", "type": "node", "id": "node/" + ns.Name,
			"ssl_fingerprint": certFingerprint(ns.fingerprintPEM()), "level": "",
			"uptime": now - ns.BootTime, "cpu": 0.01, "maxcpu": nodeCPUs,
			"mem": memTotal / 8, "maxmem": memTotal, "disk": rootFS / 10, "maxdisk": rootFS,
		})
	}
	return out, nil
}

func nodeStatus(c *call) (any, *apiError) {
	ns := c.node()
	rel := c.s.rel
	pveVersion, pveRepoID, kernel := rel.Version, rel.RepoID, rel.Kernel
	return map[string]any{
		"uptime":     time.Now().Unix() - ns.BootTime,
		"pveversion": fmt.Sprintf("pve-manager/%s/%s", pveVersion, pveRepoID),
		"kversion":   "Linux " + kernel + " #1 SMP PREEMPT_DYNAMIC PMX " + kernel + " x86_64",
		"cpuinfo": map[string]any{
			"model": "Intel(R) Xeon(R) E-2126G CPU @ 3.30GHz", "cpus": nodeCPUs, "cores": nodeCPUs, "sockets": 1,
			"mhz": "3300.000", "hvm": "1", "flags": "fpu vme de pse tsc msr pae mce cx8 apic sep vmx",
			"user_hz": 100,
		},
		"cpu":       0.01,
		"wait":      0,
		"loadavg":   []string{"0.10", "0.12", "0.09"},
		"memory":    map[string]any{"total": memTotal, "used": memTotal / 8, "free": memTotal - memTotal/8, "available": memTotal - memTotal/8},
		"swap":      map[string]any{"total": 0, "used": 0, "free": 0},
		"rootfs":    map[string]any{"total": rootFS, "used": rootFS / 10, "free": rootFS - rootFS/10, "avail": rootFS - rootFS/10},
		"ksm":       map[string]any{"shared": 0},
		"boot-info": map[string]any{"mode": "efi", "secureboot": 0},
		"current-kernel": map[string]any{
			"sysname": "Linux", "release": kernel, "machine": "x86_64",
			"version": "#1 SMP PREEMPT_DYNAMIC PMX " + kernel,
		},
	}, nil
}

// registerRootOnly adds methods whose schema has no `permissions`: only
// root@pam (a ticket) may call them, never a token. Their bodies are later
// work; the 403 for tokens is real now.
func registerRootOnly(t *routeTable) {
	notYet := func(c *call) (any, *apiError) {
		return nil, errf(http.StatusNotImplemented, "not implemented by pvesim yet")
	}
	// PVE validates parameters before the handler: the stubs declare them.
	for _, r := range []struct {
		m, p string
		sc   schema
	}{
		{"GET", "/cluster/backup-info", schema{}},
		{"POST", "/nodes/{node}/ceph/osd", nil},
		{"DELETE", "/nodes/{node}/ceph/osd/{osdid}", nil},
		{"PUT", "/nodes/{node}/disks/wipedisk", nil},
		{"POST", "/nodes/{node}/execute", schema{"node": nodeParam(), "commands": withFormatFn("pve-command-batch", verifyCommandBatch).req()}},
	} {
		t.add(r.m, r.p, &method{rootOnly: true, params: r.sc, handler: notYet})
	}
}

// clusterResources is GET /cluster/resources. The simulator has nodes;
// guests and storages appear here as they are modelled.
func clusterResources(c *call) (any, *apiError) {
	typ := c.params["type"]
	out := []map[string]any{}
	// PVE's order: pools, guests, nodes, storages.
	var pools map[string]map[string]any
	if typ == "" {
		var rows []map[string]any
		rows, pools = poolResourceRows(c)
		out = append(out, rows...)
	}
	if typ == "" || typ == "vm" {
		out = append(out, poolVMRows(c, vmResourceRows(c), pools)...)
	}
	if typ == "" || typ == "node" {
		nodes, aerr := listNodes(c)
		if aerr != nil {
			return nil, aerr
		}
		rows, _ := nodes.([]map[string]any)
		for _, n := range rows {
			delete(n, "ssl_fingerprint")
			n["cgroup-mode"] = 2
			out = append(out, n)
		}
	}
	if typ == "" || typ == "storage" {
		out = append(out, storageResourceRows(c)...)
	}
	out = append(out, localNetworkRows(c, typ)...)
	return out, nil
}
