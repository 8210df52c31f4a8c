package adopt

import (
	"context"
	"fmt"
)

// onlineNodes are the nodes (sorted) whose own API can answer: GET /nodes
// reports them online. What only a node itself reports (its network, its
// APT files) cannot be read from one that is offline; each such node is
// listed as not adopted for what, so that one shut-down member does not
// stop the adoption of the rest.
func (r *run) onlineNodes(ctx context.Context, what string) ([]string, error) {
	nodes, err := r.api.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the nodes (GET /nodes): %w", err)
	}
	status := map[string]string{}
	for _, n := range nodes {
		status[n.Node] = n.Status
	}
	var out []string
	for _, n := range r.nodes {
		if st := status[n]; st != "online" {
			r.skip(fmt.Sprintf("%s of node %s", what, n), fmt.Sprintf("the node is %s (GET /nodes), so it cannot be read; adopt again once it is back", st))
			continue
		}
		out = append(out, n)
	}
	return out, nil
}
