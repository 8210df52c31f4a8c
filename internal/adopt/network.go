package adopt

import "context"

// adoptNetwork adopts bridges, bonds, VLANs and addressed NICs of every node (pve_node_network_config).
func adoptNetwork(ctx context.Context, r *run) error {
	_ = ctx
	_ = r
	return nil
}
