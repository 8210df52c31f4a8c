package adopt

import "context"

// adoptCluster adopts the cluster and its members, cluster options, APT
// repositories.
func adoptCluster(ctx context.Context, r *run) error {
	if _, err := r.add(ctx, Group{File: "cluster.tf", Type: "pve_cluster_options", Name: "this",
		Comment: "Datacenter options (/etc/pve/datacenter.cfg)."}, "", "cluster"); err != nil {
		return err
	}
	return nil
}
