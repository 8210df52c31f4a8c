package pvesim

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Resource pools after pve-manager PVE/API2/Pool.pm and
// pve-access-control PVE::AccessControl (user.cfg's pools, add_vm_to_pool,
// remove_vm_access): pools of guests and storages, nested up to three
// levels. Both releases serve the query-parameter forms (GET/PUT/DELETE
// /pools?poolid=) and the deprecated /pools/{poolid} ones.

// poolsCfg is the pool part of /etc/pve/user.cfg.
type poolsCfg struct {
	Pools map[string]*simPool `json:"pools,omitempty"`
	// Pending are VM creations with `pool` whose worker has not ended yet:
	// qemu-server adds the VM to the pool once the config is written.
	Pending []pendingPoolAdd `json:"pending,omitempty"`
}

type simPool struct {
	Comment string `json:"comment,omitempty"`
	// Members by vmid / storage id; the value is whether the guest or
	// storage has been seen to exist since it joined (one that then
	// disappears was destroyed, and destroy takes it out of the pool).
	VMs     map[int]bool    `json:"vms,omitempty"`
	Storage map[string]bool `json:"storage,omitempty"`
}

type pendingPoolAdd struct {
	VMID int    `json:"vmid"`
	Pool string `json:"pool"`
	Node string `json:"node"`
	UPID string `json:"upid"`
}

func poolIDParam() param { return pFmt("pve-poolid").req() }

func poolUpdateSchema() schema {
	return schema{
		"poolid": poolIDParam(), "comment": pStr(), "vms": pFmt("pve-vmid-list"), "storage": pFmt("pve-storage-id-list"),
		"allow-move": pBool(), "delete": pBool(),
	}
}

func registerPools(t *routeTable) {
	typ := pEnum("qemu", "lxc", "storage")
	optPool := poolIDParam()
	optPool.optional = true
	t.add("GET", "/pools", &method{params: schema{"poolid": optPool, "type": typ.needs("poolid")}, handler: listPools})
	t.add("POST", "/pools", &method{params: schema{"poolid": poolIDParam(), "comment": pStr()}, handler: createPool})
	t.add("PUT", "/pools", &method{params: poolUpdateSchema(), handler: updatePool})
	t.add("DELETE", "/pools", &method{params: schema{"poolid": poolIDParam()}, handler: deletePool})
	t.add("GET", "/pools/{poolid}", &method{params: schema{"poolid": poolIDParam(), "type": typ}, handler: func(c *call) (any, *apiError) {
		res, err := listPools(c)
		if err != nil {
			return nil, err
		}
		rows, ok := res.([]map[string]any)
		if !ok || len(rows) == 0 {
			return nil, die("pool '%s' does not exist", c.params["poolid"])
		}
		return rows[0], nil
	}})
	t.add("PUT", "/pools/{poolid}", &method{params: poolUpdateSchema(), handler: updatePool})
	t.add("DELETE", "/pools/{poolid}", &method{params: schema{"poolid": poolIDParam()}, handler: deletePool})
}

// addToPoolWhenCreatedLocked makes vmid a member of pool once its create
// worker upid has written the config (add_vm_to_pool at the worker's end).
func (s *Sim) addToPoolWhenCreatedLocked(listener, pool, node string, vmid int, upid string) {
	pc := s.poolsLocked(listener)
	pc.Pending = append(pc.Pending, pendingPoolAdd{VMID: vmid, Pool: pool, Node: node, UPID: upid})
	s.saveLocked()
}

// poolsLocked is the listener's user.cfg pools, brought up to date with
// ended create workers and destroyed guests. Caller holds s.mu.
func (s *Sim) poolsLocked(listener string) *poolsCfg {
	d := s.st.Domains[s.st.Nodes[listener].Domain]
	if d.Pools == nil {
		d.Pools = &poolsCfg{}
	}
	pc := d.Pools
	if pc.Pools == nil {
		pc.Pools = map[string]*simPool{}
	}
	var still []pendingPoolAdd
	for _, p := range pc.Pending {
		status, exit := s.taskOutcome(p.Node, p.UPID)
		if status == "running" {
			still = append(still, p)
			continue
		}
		// add_vm_to_pool: a pool deleted meanwhile is left alone.
		if exit == "OK" {
			if sp := pc.Pools[p.Pool]; sp != nil {
				for _, other := range pc.Pools {
					delete(other.VMs, p.VMID)
				}
				if sp.VMs == nil {
					sp.VMs = map[int]bool{}
				}
				sp.VMs[p.VMID] = true
			}
		}
	}
	pc.Pending = still
	_, ids := s.parsedStorageCfg(listener)
	for _, sp := range pc.Pools {
		for vmid, seen := range sp.VMs {
			node, _ := s.guestNodeLocked(listener, vmid)
			switch {
			case node != "":
				sp.VMs[vmid] = true
			case seen:
				delete(sp.VMs, vmid) // destroyed: remove_vm_access
			}
		}
		for id, seen := range sp.Storage {
			switch {
			case ids[id] != nil:
				sp.Storage[id] = true
			case seen:
				delete(sp.Storage, id) // storage removed: remove_storage_access
			}
		}
	}
	return pc
}

// memberVMIDs are the pool's guests in Perl's order: vmids sorted as
// strings.
func (sp *simPool) memberVMIDs() []int {
	ids := slices.Collect(maps.Keys(sp.VMs))
	slices.SortFunc(ids, func(a, b int) int { return strings.Compare(strconv.Itoa(a), strconv.Itoa(b)) })
	return ids
}

// taskOutcome is a task's status and exit status ("" when unknown).
func (s *Sim) taskOutcome(node, upid string) (string, string) {
	if ns := s.st.Nodes[node]; ns != nil {
		for _, t := range ns.Tasks {
			if t.UPID == upid {
				return t.Status, t.ExitStatus
			}
		}
	}
	return "stopped", ""
}

// poolOfVM is user.cfg's vms map: the pool a guest belongs to.
func (pc *poolsCfg) poolOfVM(vmid int) string {
	for name, sp := range pc.Pools {
		if _, ok := sp.VMs[vmid]; ok {
			return name
		}
	}
	return ""
}

func sortedPoolNames(pc *poolsCfg) []string {
	names := make([]string, 0, len(pc.Pools))
	for n := range pc.Pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func listPools(c *call) (any, *apiError) {
	s := c.s
	pc := s.poolsLocked(c.listener)
	out := []map[string]any{}
	poolid := c.params["poolid"]
	if poolid == "" {
		for _, name := range sortedPoolNames(pc) {
			e := map[string]any{"poolid": name}
			if cm := pc.Pools[name].Comment; cm != "" {
				e["comment"] = cm
			}
			out = append(out, e)
		}
		return out, nil
	}
	sp := pc.Pools[poolid]
	if sp == nil {
		return nil, die("pool '%s' does not exist", poolid)
	}
	typ := c.params["type"]
	members := []map[string]any{}
	rows := map[int]map[string]any{}
	for _, r := range vmResourceRows(c) {
		if id, ok := r["vmid"].(int); ok {
			rows[id] = r
		}
	}
	for _, id := range sp.memberVMIDs() {
		r := rows[id]
		if r == nil || (typ != "" && typ != r["type"]) {
			continue
		}
		// extract_vm_stats only: no lock, tags or HA state.
		delete(r, "lock")
		delete(r, "tags")
		delete(r, "hastate")
		members = append(members, r)
	}
	if typ == "" || typ == "storage" {
		_, ids := s.parsedStorageCfg(c.listener)
		for _, id := range slices.Sorted(maps.Keys(sp.Storage)) {
			e := ids[id]
			if e == nil {
				continue
			}
			// The local node when the storage is there, else the first of
			// its nodes.
			node := c.listener
			if !e.onNode(node) {
				nodes := splitList(e.Opts["nodes"])
				sort.Strings(nodes)
				node = nodes[0]
			}
			var info map[string]any
			if s.st.Nodes[node] != nil && (s.clusterOf(c.listener) == nil || s.memberOnline(s.st.Nodes[c.listener].Domain, node)) {
				info = s.storageInfo(node, "")[id]
			}
			members = append(members, storageStatsRow(id, e, node, info))
		}
	}
	info := map[string]any{"members": members, "poolid": poolid}
	if sp.Comment != "" {
		info["comment"] = sp.Comment
	}
	return append(out, info), nil
}

func createPool(c *call) (any, *apiError) {
	pc := c.s.poolsLocked(c.listener)
	pool := c.params["poolid"]
	fail := func(format string, args ...any) *apiError {
		return die("create pool failed: "+format, args...)
	}
	if pc.Pools[pool] != nil {
		return nil, fail("pool '%s' already exists", pool)
	}
	leaf := pool
	if i := strings.LastIndex(pool, "/"); i >= 0 {
		parent := pool[:i]
		leaf = pool[i+1:]
		if pc.Pools[parent] == nil {
			return nil, fail("parent '%s' of pool '%s' does not exist", parent, pool)
		}
	}
	if leaf == "" || !isASCIILetter(leaf[0]) {
		return nil, fail("pool name must start with a letter")
	}
	pc.Pools[pool] = &simPool{Comment: c.params["comment"]}
	c.s.saveLocked()
	return nil, nil
}

func isASCIILetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func updatePool(c *call) (any, *apiError) {
	pc := c.s.poolsLocked(c.listener)
	pool := c.params["poolid"]
	fail := func(format string, args ...any) *apiError {
		return die("update pools failed: "+format, args...)
	}
	sp := pc.Pools[pool]
	if sp == nil {
		return nil, fail("pool '%s' does not exist", pool)
	}
	// user.cfg is written only at the end: a failure changes nothing.
	next := &simPool{Comment: sp.Comment, VMs: map[int]bool{}, Storage: map[string]bool{}}
	for k, v := range sp.VMs {
		next.VMs[k] = v
	}
	for k, v := range sp.Storage {
		next.Storage[k] = v
	}
	moved := map[int]string{}
	if cm, ok := c.params["comment"]; ok {
		next.Comment = cm
	}
	del := c.params["delete"] == "1"
	if _, ok := c.params["vms"]; ok {
		for _, v := range splitList(c.params["vms"]) {
			vmid, _ := strconv.Atoi(v)
			if del {
				if _, member := next.VMs[vmid]; !member {
					return nil, fail("VM %d is not a pool member", vmid)
				}
				delete(next.VMs, vmid)
				continue
			}
			if _, member := next.VMs[vmid]; member {
				return nil, fail("VM %d is already a pool member", vmid)
			}
			if other := pc.poolOfVM(vmid); other != "" && other != pool {
				if c.params["allow-move"] != "1" {
					return nil, fail("VM %d belongs already to pool '%s' and 'allow-move' is not set", vmid, other)
				}
				moved[vmid] = other
			}
			node, _ := c.s.guestNodeLocked(c.listener, vmid)
			next.VMs[vmid] = node != ""
		}
	}
	if _, ok := c.params["storage"]; ok {
		_, ids := c.s.parsedStorageCfg(c.listener)
		for _, id := range splitList(c.params["storage"]) {
			if del {
				if _, member := next.Storage[id]; !member {
					return nil, fail("Storage '%s' is not a pool member", id)
				}
				delete(next.Storage, id)
				continue
			}
			if _, member := next.Storage[id]; member {
				return nil, fail("Storage '%s' is already a pool member", id)
			}
			next.Storage[id] = ids[id] != nil
		}
	}
	for vmid, other := range moved {
		delete(pc.Pools[other].VMs, vmid)
	}
	pc.Pools[pool] = next
	c.s.saveLocked()
	return nil, nil
}

func deletePool(c *call) (any, *apiError) {
	pc := c.s.poolsLocked(c.listener)
	pool := c.params["poolid"]
	fail := func(format string, args ...any) *apiError {
		return die("delete pool failed: "+format, args...)
	}
	sp := pc.Pools[pool]
	if sp == nil {
		return nil, fail("pool '%s' does not exist", pool)
	}
	// user.cfg's parser lists a pool's direct children as its pools.
	for _, name := range sortedPoolNames(pc) {
		if i := strings.LastIndex(name, "/"); i >= 0 && name[:i] == pool {
			return nil, fail("pool '%s' is not empty (contains pool '%s')", pool, name)
		}
	}
	for _, id := range sp.memberVMIDs() {
		if node, _ := c.s.guestNodeLocked(c.listener, id); node != "" {
			return nil, fail("pool '%s' is not empty (contains VM %d)", pool, id)
		}
	}
	_, ids := c.s.parsedStorageCfg(c.listener)
	for _, id := range slices.Sorted(maps.Keys(sp.Storage)) {
		if ids[id] != nil {
			return nil, fail("pool '%s' is not empty (contains storage '%s')", pool, id)
		}
	}
	delete(pc.Pools, pool)
	c.s.saveLocked()
	return nil, nil
}

// poolResourceRows are /cluster/resources' pool rows (untyped listing
// only), by name for poolVMRows to add their running guests to.
func poolResourceRows(c *call) ([]map[string]any, map[string]map[string]any) {
	pc := c.s.poolsLocked(c.listener)
	var out []map[string]any
	byName := map[string]map[string]any{}
	for _, name := range sortedPoolNames(pc) {
		e := map[string]any{"id": "/pool/" + name, "pool": name, "type": "pool"}
		byName[name] = e
		out = append(out, e)
	}
	return out, byName
}

// poolVMRows adds `pool` to guest rows and, for running guests, their
// uptime, memory and CPU to the pool's row, as Cluster.pm resources does.
func poolVMRows(c *call, rows []map[string]any, pools map[string]map[string]any) []map[string]any {
	pc := c.s.poolsLocked(c.listener)
	for _, r := range rows {
		id, _ := r["vmid"].(int)
		pool := pc.poolOfVM(id)
		if pool == "" {
			continue
		}
		r["pool"] = pool
		pe := pools[pool]
		up := toFloat(r["uptime"])
		if pe == nil || up == 0 {
			continue
		}
		if up > toFloat(pe["uptime"]) {
			pe["uptime"] = r["uptime"]
		}
		pe["mem"] = toFloat(pe["mem"]) + toFloat(r["mem"])
		pe["maxmem"] = toFloat(pe["maxmem"]) + toFloat(r["maxmem"])
		pmax, emax := toFloat(pe["maxcpu"]), toFloat(r["maxcpu"])
		if pmax+emax > 0 {
			pe["cpu"] = (toFloat(pe["cpu"])*pmax + toFloat(r["cpu"])*emax) / (pmax + emax)
		}
		pe["maxcpu"] = pmax + emax
	}
	return rows
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}
