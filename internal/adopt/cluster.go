package adopt

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/service/apt"
)

// adoptCluster adopts the cluster and its members, cluster options, APT
// repositories.
func adoptCluster(ctx context.Context, r *run) error {
	if _, err := r.add(ctx, Group{File: "cluster.tf", Type: "pve_cluster_options", Name: "lab",
		Comment:   "Datacenter options (/etc/pve/datacenter.cfg).",
		DependsOn: []string{"pve_cluster_node.member"}}, "", "cluster"); err != nil {
		return err
	}
	if err := adoptClusterMembers(ctx, r); err != nil {
		return err
	}
	return adoptAPT(ctx, r)
}

// adoptClusterMembers adopts the cluster by its name and every other
// member as pve_cluster_node. The founder is what pve_cluster's Read
// makes it: the node the endpoint answers from (PVE's corosync.conf keeps
// no record of which node created the cluster). A standalone node has no
// cluster to adopt.
func adoptClusterMembers(ctx context.Context, r *run) error {
	st, err := r.api.ClusterStatus(ctx)
	if err != nil {
		return fmt.Errorf("read the cluster status (GET /cluster/status): %w", err)
	}
	if !st.Clustered {
		return nil
	}
	cl, err := r.add(ctx, Group{File: "cluster.tf", Type: "pve_cluster", Name: "lab",
		Comment: fmt.Sprintf("The cluster %s, as seen from the node the provider's endpoint answers from (its founding node for\nTerraform), with that node's corosync links.", st.Name)},
		"", st.Name)
	if err != nil {
		return err
	}
	if cl == nil {
		return fmt.Errorf("pve_cluster %s: PVE reports the cluster but the resource's Read does not find it", st.Name)
	}
	// nodeid 1 and one vote are the founder's defaults (pvecm create).
	omitAt(r, "pve_cluster.lab", "nodeid", 1)
	omitAt(r, "pve_cluster.lab", "votes", 1)
	founder := cl.String("node")
	members := make([]string, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		if n.Name != founder {
			members = append(members, n.Name)
		}
	}
	sort.Strings(members)
	for _, n := range members {
		if _, err := r.add(ctx, Group{File: "cluster.tf", Type: "pve_cluster_node", Name: "member",
			Comment:   "The other members, joined with their corosync links.",
			DependsOn: []string{"pve_cluster.lab"}}, n, n); err != nil {
			return err
		}
	}
	// One vote is a joining node's default; its nodeid stays written (PVE
	// gave it the lowest free one at the join, which the configuration
	// cannot know otherwise).
	omitAt(r, "pve_cluster_node.member", "votes", 1)
	return nil
}

// omitAt leaves attribute name of the group at addr out of the
// configuration when every instance has value def, PVE's default for it
// where the schema has none (Optional and Computed: left out, the plan
// keeps the state's value).
func omitAt(r *run, addr, name string, def int64) {
	g, ok := r.byAddr[addr]
	if !ok {
		return
	}
	for _, in := range g.instances {
		if in.state.Int(name) != def {
			return
		}
	}
	g.Omit = append(g.Omit, name)
}

// adoptAPT adopts every standard repository (by handle) that PVE reports
// configured on a node: standard-repos with a status. A handle without a
// status is in no file; pve_apt_repository's Read finds no object for it,
// and a configuration naming it would add it. Other entries (Debian's,
// custom lines) are listed as not adopted: the resource can only toggle an
// existing entry by path and index, not write one, so a configuration
// would not describe them.
func adoptAPT(ctx context.Context, r *run) error {
	g := Group{File: "cluster.tf", Type: "pve_apt_repository", Name: "lab",
		Comment: "The standard Proxmox repositories each node has, enabled or not, by handle.",
		// With handle, path and index are computed (the entry found for
		// the handle); the resource refuses handle and path together.
		Omit:      []string{"path", "index"},
		DependsOn: []string{"pve_node_network_config.lab"}}
	nodes, err := r.onlineNodes(ctx, "the APT repositories (pve_apt_repository)")
	if err != nil {
		return err
	}
	for _, node := range nodes {
		repos, err := r.api.APTRepositories(ctx, node)
		if err != nil {
			return fmt.Errorf("read node %s's APT repositories (GET /nodes/%s/apt/repositories): %w", node, node, err)
		}
		var handles []string
		for _, s := range repos.StandardRepos {
			if s.Status == nil {
				continue
			}
			handles = append(handles, s.Handle)
			if _, err := r.add(ctx, g, node+"/"+s.Handle, node+"/"+s.Handle); err != nil {
				return err
			}
		}
		for _, f := range repos.Files {
			for i, e := range f.Repositories {
				if apt.HandleOf(e, handles) != "" {
					continue
				}
				state := "enabled"
				if !e.Enabled {
					state = "disabled"
				}
				r.skip(fmt.Sprintf("APT repository %s %s:%d (%s %s %s %s, %s)", node, f.Path, i,
					strings.Join(e.Types, " "), strings.Join(e.URIs, " "), strings.Join(e.Suites, " "), strings.Join(e.Components, " "), state),
					"not a standard Proxmox repository: pve_apt_repository can only enable or disable an existing entry by path and index, "+
						"not write its line, so a configuration would not describe it; it stays as it is")
			}
		}
	}
	return nil
}
