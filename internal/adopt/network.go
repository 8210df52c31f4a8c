package adopt

import "context"

// adoptNetwork adopts bridges, bonds, VLANs and addressed NICs of every
// node: one pve_node_network_config per node, keyed by the node, with the
// interfaces its Read reports (the bridges, bonds and VLANs it owns and
// the physical NICs that carry settings).
func adoptNetwork(ctx context.Context, r *run) error {
	g := Group{File: "network.tf", Type: "pve_node_network_config", Name: "lab",
		Comment: "Each node's network in one resource (/etc/network/interfaces): it owns the node's bridges, bonds and\n" +
			"VLANs; physical NICs are listed where they carry an address, MTU or comment. What differs between\n" +
			"the nodes (addresses) comes from the locals map.",
		Split: []string{"interfaces"}}
	nodes, err := r.onlineNodes(ctx, "the network (pve_node_network_config)")
	if err != nil {
		return err
	}
	for _, node := range nodes {
		if _, err := r.add(ctx, g, node, node); err != nil {
			return err
		}
	}
	return nil
}
