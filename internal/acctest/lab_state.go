package acctest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// LabResource is one resource of `terraform show -json`'s state.
type LabResource struct {
	Address string         `json:"address"`
	Type    string         `json:"type"`
	Values  map[string]any `json:"values"`
}

// stateModule is a module of show -json's state, with its child modules.
type stateModule struct {
	Resources    []LabResource `json:"resources"`
	ChildModules []stateModule `json:"child_modules"`
}

func (m stateModule) all() []LabResource {
	out := append([]LabResource(nil), m.Resources...)
	for _, c := range m.ChildModules {
		out = append(out, c.all()...)
	}
	return out
}

// State returns the resources of the work dir's state (show -json), those
// of child modules (the homelab's module.lab) included.
func (l *Lab) State() []LabResource {
	l.t.Helper()
	r := l.Run("show", "-json")
	if r.ExitCode != 0 {
		l.t.Fatalf("show -json: exit %d\n%s", r.ExitCode, r.Output)
	}
	var doc struct {
		Values struct {
			RootModule stateModule `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(r.Output), &doc); err != nil {
		l.t.Fatalf("show -json: %v", err)
	}
	return doc.Values.RootModule.all()
}

// labObjects are the objects a lab's state and pvesim are compared on,
// each as "kind id" ("vm 100", "osd 3 z2g4b", "pool ceph", "storage
// ceph", "ha vm:100"), sorted, duplicates kept.
func stateObjects(rs []LabResource) []string {
	var out []string
	for _, r := range rs {
		v := r.Values
		switch r.Type {
		case "pve_vm":
			out = append(out, fmt.Sprintf("vm %v", v["vmid"]))
		case "pve_ceph_osd":
			out = append(out, fmt.Sprintf("osd %v %v", v["osd_id"], v["node"]))
		case "pve_ceph_pool":
			out = append(out, fmt.Sprintf("pool %v", v["name"]))
		case "pve_storage":
			out = append(out, fmt.Sprintf("storage %v", v["storage"]))
		case "pve_ha_resource":
			out = append(out, fmt.Sprintf("ha %v", v["sid"]))
		}
	}
	sort.Strings(out)
	return out
}

// orphanVolumes are the guest volumes on the nodes' active storages
// whose VM id no guest has ("orphan volume <volid>", each once: a shared
// storage shows on every node), as a create that died leaves them.
func orphanVolumes(ctx context.Context, c *pve.Client, nodes []string, guests []pve.ClusterResource) ([]string, error) {
	ids := map[int64]bool{}
	for _, g := range guests {
		ids[g.VMID] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, node := range nodes {
		stores, err := c.NodeStorage(ctx, node, pve.NodeStorageQuery{Enabled: true})
		if err != nil {
			return nil, fmt.Errorf("list node %s's storage: %w", node, err)
		}
		for _, st := range stores {
			if !st.Active {
				continue
			}
			vols, err := c.StorageContent(ctx, node, st.Storage, 0)
			if err != nil {
				return nil, fmt.Errorf("list %s on %s: %w", st.Storage, node, err)
			}
			for _, v := range vols {
				if v.VMID > 0 && !ids[v.VMID] && !seen[v.VolID] {
					seen[v.VolID] = true
					out = append(out, "orphan volume "+v.VolID)
				}
			}
		}
	}
	return out, nil
}

// simObjects reads the same kinds of objects from pvesim's API, through
// the first node as root@pam. Storages it only lists when the state has
// them (the installer's local and local-lvm are nobody's resource);
// Ceph's own .mgr pool is left out.
func (l *Lab) simObjects(ctx context.Context) ([]string, error) {
	c, err := pve.NewClient(pve.Config{Endpoint: l.info.Nodes[0].Endpoint, Username: "root@pam", Password: l.rootPwd, TLSFingerprint: l.info.Nodes[0].TLSFingerprint})
	if err != nil {
		return nil, err
	}
	var out []string
	vms, err := c.ClusterResources(ctx, "vm")
	if err != nil {
		return nil, fmt.Errorf("list VMs: %w", err)
	}
	for _, r := range vms {
		out = append(out, fmt.Sprintf("vm %d", r.VMID))
	}
	node := l.Nodes[0]
	if tree, err := c.CephOSDTree(ctx, node); err == nil {
		for _, o := range tree.OSDs {
			out = append(out, fmt.Sprintf("osd %d %s", o.ID, o.Host))
		}
	} else if !pve.IsCephNotSetUp(err) {
		return nil, fmt.Errorf("list OSDs: %w", err)
	}
	if pools, err := c.CephPools(ctx, node); err == nil {
		for _, p := range pools {
			if p.Name != ".mgr" {
				out = append(out, "pool "+p.Name)
			}
		}
	} else if !pve.IsCephNotSetUp(err) {
		return nil, fmt.Errorf("list pools: %w", err)
	}
	orphans, err := orphanVolumes(ctx, c, l.Nodes, vms)
	if err != nil {
		return nil, err
	}
	out = append(out, orphans...)
	st, err := c.StorageConfigs(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list storage: %w", err)
	}
	for _, s := range st {
		out = append(out, "storage "+s.Storage)
	}
	ha, err := c.HAResources(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list HA resources: %w", err)
	}
	for _, h := range ha {
		out = append(out, "ha "+h.SID)
	}
	sort.Strings(out)
	return out, nil
}

// CheckStateMatchesSim fails the test unless every VM, OSD, pool, storage
// and HA resource of the state exists in pvesim once, and pvesim has no
// VM, OSD, pool or HA resource the state lacks, nor a guest volume of a
// VM id no guest has: no orphan, no duplicate.
func (l *Lab) CheckStateMatchesSim() {
	l.t.Helper()
	state := stateObjects(l.State())
	sim, err := l.simObjects(context.Background())
	if err != nil {
		l.t.Fatalf("read pvesim: %v", err)
	}
	var missing, extra, dup []string
	for i, o := range state {
		if i > 0 && state[i-1] == o {
			dup = append(dup, "state: "+o)
		}
		if !slices.Contains(sim, o) {
			missing = append(missing, o)
		}
	}
	for i, o := range sim {
		if i > 0 && sim[i-1] == o {
			dup = append(dup, "pvesim: "+o)
		}
		if !slices.Contains(state, o) && !strings.HasPrefix(o, "storage ") {
			extra = append(extra, o)
		}
	}
	if len(missing)+len(extra)+len(dup) > 0 {
		l.t.Errorf("state and pvesim differ:\n  in state, not in pvesim: %v\n  in pvesim, not in state (orphans): %v\n  duplicates: %v",
			missing, extra, dup)
	}
}
