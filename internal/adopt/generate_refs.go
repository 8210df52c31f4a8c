package adopt

import (
	"sort"
	"strings"
)

// linkGroups, once every area has run, replaces values that name another
// adopted object with references to it, and narrows dependencies to the
// objects actually used, as a person writes them (examples/modules/pve-ceph-cluster):
//   - an rbd storage's options.pool becomes pve_ceph_pool.<name>.name
//     (which orders the storage after the pool, no depends_on needed);
//   - the VMs' disks depend on the storages they use only (vm_id, a
//     reference to pve_vm, already orders them after their VMs).
func (r *run) linkGroups() {
	pools := map[string]string{} // Ceph pool name -> its block's address
	for _, g := range r.groups {
		if g.Type == "pve_ceph_pool" && len(g.instances) == 1 {
			pools[g.instances[0].state.String("name")] = g.address()
		}
	}
	storages := map[string]string{} // storage id -> its block's address
	for _, g := range r.groups {
		if g.Type != "pve_storage" || len(g.instances) != 1 {
			continue
		}
		st := g.instances[0].state
		storages[st.String("storage")] = g.address()
		if st.String("type") != "rbd" {
			continue
		}
		if addr, ok := pools[stateMapString(st, "options", "pool")]; ok {
			g.refs = map[string]map[string]Expr{"options": {"pool": Expr(addr + ".name")}}
		}
	}
	for _, g := range r.groups {
		if g.Type != "pve_vm_disk" {
			continue
		}
		used := map[string]bool{}
		for _, in := range g.instances {
			if a, ok := storages[in.state.String("storage")]; ok {
				used[a] = true
			}
		}
		var deps []string
		for _, d := range g.DependsOn {
			if used[d] || (!strings.HasPrefix(d, "pve_storage.") && d != "pve_vm.lab") {
				deps = append(deps, d)
			}
		}
		sort.Strings(deps)
		g.DependsOn = deps
	}
}

// applyRefs puts a group's references (linkGroups) into its objects'
// configuration: a map attribute's entry written as an expression.
func applyRefs(g *group, objs []map[string]any) {
	for attr, keys := range g.refs {
		for _, o := range objs {
			m, ok := o[attr].(map[string]any)
			if !ok {
				continue
			}
			for k, e := range keys {
				if _, has := m[k]; has {
					m[k] = e
				}
			}
		}
	}
}

// stateMapString is entry key of map attribute attr ("" when absent).
func stateMapString(st State, attr, key string) string {
	v, ok := st[attr]
	if !ok || v.IsNull() || !v.IsKnown() {
		return ""
	}
	m, ok := goOf(v, nil).(map[string]any)
	if !ok {
		return ""
	}
	s, _ := m[key].(string)
	return s
}
