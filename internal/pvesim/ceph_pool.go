package pvesim

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// Ceph pools after pve-manager PVE/API2/Ceph/Pool.pm: list, create, set,
// destroy and status. The rules they apply are in ceph_pool_model.go.

// poolStoragesLocked lists the RBD storages on a pool as node's
// storage.cfg has them (Pool.pm $get_storages: pool, default rbd, or
// data-pool), sorted.
func (s *Sim) poolStoragesLocked(node, pool string) []string {
	_, ids := s.parsedStorageCfg(node)
	var out []string
	for id, e := range ids {
		if e.Type == "rbd" && (cmp.Or(e.Opts["pool"], "rbd") == pool || e.Opts["data-pool"] == pool) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func registerCephPool(t *routeTable) {
	node := schema{"node": nodeParam()}
	t.add("GET", "/nodes/{node}/ceph/pool", &method{params: node, handler: cephListPools})
	t.add("POST", "/nodes/{node}/ceph/pool", &method{params: poolSchema(true), handler: cephCreatePool})
	t.add("GET", "/nodes/{node}/ceph/pool/{name}", &method{params: schema{"node": nodeParam(), "name": pStr().req()}, handler: func(c *call) (any, *apiError) {
		if _, err := c.s.cephLocked(c); err != nil {
			return nil, err
		}
		return []map[string]any{{"name": "status"}}, nil
	}})
	t.add("PUT", "/nodes/{node}/ceph/pool/{name}", &method{params: poolSchema(false), handler: cephSetPool})
	t.add("DELETE", "/nodes/{node}/ceph/pool/{name}", &method{params: schema{
		"node": nodeParam(), "name": pStr().req(), "force": pBool(), "remove_storages": pBool(), "remove_ecprofile": pBool(),
	}, handler: cephDestroyPool})
	t.add("GET", "/nodes/{node}/ceph/pool/{name}/status", &method{params: schema{"node": nodeParam(), "name": pStr().req(), "verbose": pBool()}, handler: cephPoolStatus})
	t.add("GET", "/nodes/{node}/ceph/rules", &method{params: node, handler: func(c *call) (any, *apiError) {
		if _, err := c.s.cephLocked(c); err != nil {
			return nil, err
		}
		out := []map[string]any{}
		for _, r := range cephCrushRules {
			out = append(out, map[string]any{"name": r})
		}
		return out, nil
	}})
}

// cephCrushRules are the CRUSH rules `osd crush rule ls` lists: a new
// cluster has only Ceph's default, and the simulator creates no others.
var cephCrushRules = []string{"replicated_rule"}

func poolSchema(create bool) schema {
	sc := schema{
		"node": nodeParam(), "name": pPattern(cephPoolRE).req(),
		"size": pInt(i64(1), i64(7)), "min_size": pInt(i64(1), i64(7)), "pg_num": pInt(i64(1), i64(32768)),
		"pg_num_min": pInt(nil, i64(32768)), "pg_autoscale_mode": pEnum("on", "off", "warn"),
		"application": pEnum("rbd", "cephfs", "rgw"), "crush_rule": pStr(),
		"target_size": pPattern(`^(\d+(\.\d+)?)([KMGT])?$`), "target_size_ratio": {typ: tNumber, optional: true},
	}
	if create {
		sc["add_storages"] = pBool()
		sc["erasure-coding"] = psParam(cephECFormat, "erasure-coding")
	}
	return sc
}

func cephListPools(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	if aerr := c.s.realPoolsLocked(cs); aerr != nil {
		return nil, aerr
	}
	total := cs.rawCapacity()
	out := []map[string]any{}
	for _, p := range cs.Pools {
		e := map[string]any{
			"pool": p.ID, "pool_name": p.Name, "size": p.Size, "min_size": p.MinSize, "pg_num": p.PGNum,
			"pg_autoscale_mode": p.Autoscale, "crush_rule": 0, "crush_rule_name": "replicated_rule", "type": "replicated",
			"bytes_used": p.Stored * int64(p.Size), "percent_used": cs.percentUsed(p, total),
			"application_metadata": map[string]any{p.Application: map[string]any{}},
		}
		as := cs.autoscaleStatus(p)
		e["autoscale_status"], e["pg_num_final"] = as, as["pg_num_final"]
		if p.PGNumMin > 0 {
			e["pg_num_min"] = p.PGNumMin
		}
		if p.TargetSize > 0 {
			e["target_size"] = p.TargetSize
		}
		if p.TargetRatio > 0 {
			e["target_size_ratio"] = p.TargetRatio
		}
		out = append(out, e)
	}
	return out, nil
}

func (cs *cephState) rawCapacity() int64 {
	var total int64
	for _, o := range cs.OSDs {
		if o.In {
			total += o.Size
		}
	}
	return total
}

func (cs *cephState) percentUsed(p *cephPool, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(p.Stored*int64(p.Size)) / float64(total)
}

func (cs *cephState) autoscaleStatus(p *cephPool) map[string]any {
	final, adjust := cs.autoscaleTarget(p)
	return map[string]any{
		"pool_name": p.Name, "pool_id": p.ID, "logical_used": p.Stored, "raw_used": p.Stored * int64(p.Size),
		"target_bytes": p.TargetSize, "target_ratio": p.TargetRatio, "pg_num_target": p.target(), "pg_num_final": final,
		"pg_autoscale_mode": p.Autoscale, "would_adjust": adjust, "crush_root_id": -1, "raw_used_rate": float64(p.Size),
	}
}

func parseTargetSize(v string) int64 {
	m := targetSizeRE.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[3]]
	return int64(f * mult)
}

// cephCreatePool is createpool: PVE fills in its defaults, `osd pool
// create` makes the pool with Ceph's (osd_pool_default_size, autoscale
// mode on), then set_pool applies the parameters and add_storages adds
// the RBD storage.
func cephCreatePool(c *call) (any, *apiError) {
	s := c.s
	d := s.cephDomain(c)
	if d.Cluster != nil && !s.quorate(s.st.Nodes[c.params["node"]].Domain, d.Cluster) {
		return nil, die("cluster not ready - no quorum?")
	}
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	if aerr := cephECPool(c.params["erasure-coding"]); aerr != nil {
		return nil, aerr
	}
	name := c.params["name"]
	if c.params["add_storages"] == "1" && !configIDRE.MatchString(name) {
		return nil, die("pool name contains characters which are illegal for storage naming")
	}
	params := poolParams(c.params)
	for k, v := range map[string]string{"pg_num": "128", "size": "3", "min_size": "2", "application": "rbd", "pg_autoscale_mode": "warn"} {
		if _, ok := params[k]; !ok {
			params[k] = v
		}
	}
	addStorage := c.params["add_storages"] == "1"
	return s.startTaskLocked(c, "cephcreatepool", name, func(t *task) (int, error) {
		s.cephTickLocked(cs)
		if s.realCeph != nil {
			if err := s.realCreatePoolLocked(cs, name, params, &t.Log); err != nil {
				return 0, err
			}
			return 0, s.addPoolStorageLocked(t.Node, name, addStorage)
		}
		// `osd pool create` answers "already exists" with success, so
		// PVE goes on to apply the settings to the existing pool.
		p := cs.pool(name)
		if p == nil {
			size, _ := strconv.Atoi(cs.configValue("global", "osd_pool_default_size"))
			if size <= 0 {
				size = 3
			}
			pgNum, _ := strconv.Atoi(params["pg_num"])
			p = &cephPool{ID: cs.NextPoolID, Name: name, Size: size, MinSize: cs.defaultMinSize(size), PGNum: pgNum, Autoscale: "on",
				CrushRule: "replicated_rule", Stored: cephDefaultStored}
			cs.NextPoolID++
			cs.addPool(p)
			if cs.AutoscaleInCreate {
				cs.autoscale()
			}
		}
		if err := cs.pveSetPool(p, params, &t.Log); err != nil {
			return 0, err
		}
		return 0, s.addPoolStorageLocked(t.Node, name, addStorage)
	}), nil
}

// addPoolStorageLocked is Pool.pm's $add_storage through
// Storage::Config->create, when add_storages asks for it.
func (s *Sim) addPoolStorageLocked(node, name string, add bool) error {
	if !add {
		return nil
	}
	err := s.addStorageLocked(node, "rbd", name, map[string]string{"pool": name, "krbd": "0", "content": "rootdir,images"})
	if err != nil {
		return fmt.Errorf("adding PVE storage for ceph pool '%s' failed: %w", name, err)
	}
	return nil
}

func cephSetPool(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	name := c.params["name"]
	params := poolParams(c.params)
	return s.startTaskLocked(c, "cephsetpool", name, func(t *task) (int, error) {
		s.cephTickLocked(cs)
		if s.realCeph != nil {
			return 0, s.realSetPoolLocked(cs, name, params, &t.Log)
		}
		p := cs.pool(name)
		if p == nil {
			return 0, fmt.Errorf("mon_command failed - unrecognized pool '%s'", name)
		}
		return 0, cs.pveSetPool(p, params, &t.Log)
	}), nil
}

// cephDestroyPool is destroypool: unless forced, a storage on the pool
// that still lists images (guest disks) stops it; remove_storages also
// removes those storages afterwards.
func cephDestroyPool(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	name := c.params["name"]
	removeStorages := c.params["remove_storages"] == "1"
	force := c.params["force"] == "1"
	return s.startTaskLocked(c, "cephdestroypool", name, func(t *task) (int, error) {
		s.cephTickLocked(cs)
		idx := -1
		for i, p := range cs.Pools {
			if p.Name == name {
				idx = i
			}
		}
		storages := s.poolStoragesLocked(t.Node, name)
		if !force {
			for _, id := range storages {
				t.Log = append(t.Log, fmt.Sprintf("checking storage '%s' for RBD images..", id))
				if idx >= 0 && len(cs.Pools[idx].Images) > 0 {
					return 0, fmt.Errorf("ceph pool '%s' still in use by storage '%s'", name, id)
				}
			}
		}
		switch {
		case s.realCeph != nil:
			if err := s.realDestroyPoolLocked(cs, name); err != nil {
				return 0, err
			}
		case idx < 0:
			return 0, fmt.Errorf("mon_command failed - unrecognized pool '%s'", name)
		case cs.Conf["global"]["mon_allow_pool_delete"] != "true":
			return 0, fmt.Errorf("mon_command failed - pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true before you can destroy a pool")
		default:
			cs.Pools = append(cs.Pools[:idx], cs.Pools[idx+1:]...)
		}
		if removeStorages {
			order, ids := s.parsedStorageCfg(t.Node)
			for _, id := range storages {
				if ids[id].Opts["monhost"] != "" {
					continue // external cluster, not managed by pveceph
				}
				delete(ids, id)
				order = slices.DeleteFunc(order, func(o string) bool { return o == id })
			}
			s.writeStorageCfg(t.Node, order, ids)
		}
		cs.Epoch++
		cs.settle()
		return 0, nil
	}), nil
}

func cephPoolStatus(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	if aerr := c.s.realPoolsLocked(cs); aerr != nil {
		return nil, aerr
	}
	p := cs.pool(c.params["name"])
	if p == nil {
		return nil, die("mon_command failed - unrecognized pool '%s'", c.params["name"])
	}
	out := map[string]any{
		"id": p.ID, "name": p.Name, "size": p.Size, "min_size": p.MinSize, "pg_num": p.PGNum, "pgp_num": p.PGNum,
		"crush_rule": p.CrushRule, "pg_autoscale_mode": p.Autoscale,
		"noscrub": false, "nodeep-scrub": false, "nodelete": false, "nopgchange": false, "nosizechange": false,
		"write_fadvise_dontneed": false, "hashpspool": true, "use_gmt_hitset": true, "fast_read": false,
	}
	if p.PGNumMin > 0 {
		out["pg_num_min"] = p.PGNumMin
	}
	if p.TargetSize > 0 {
		out["target_size"] = p.TargetSize
	}
	if p.TargetRatio > 0 {
		out["target_size_ratio"] = p.TargetRatio
	}
	if c.params["verbose"] == "1" {
		total := cs.rawCapacity()
		out["application_list"] = []string{p.Application}
		out["autoscale_status"] = cs.autoscaleStatus(p)
		out["statistics"] = map[string]any{"stored": p.Stored, "objects": p.pgObjects() * int64(p.PGNum),
			"bytes_used": p.Stored * int64(p.Size), "percent_used": cs.percentUsed(p, total), "max_avail": (total - cs.usedRaw()) / int64(max(p.Size, 1))}
	}
	return out, nil
}

func (cs *cephState) usedRaw() int64 {
	var n int64
	for _, p := range cs.Pools {
		n += p.Stored * int64(p.Size)
	}
	return n
}
