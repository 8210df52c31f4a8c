package pve

import "context"

// Node is one cluster member as listed by GET /nodes.
type Node struct {
	Node   string
	Status string // "online", "offline" or "unknown"
	// SSLFingerprint is the SHA-256 of the node's API certificate.
	SSLFingerprint string
}

// Nodes lists the cluster's nodes, so configuration can be checked against
// real node names before any /nodes/{node} call fails with a DNS lookup error.
//
//pve:operation GET /nodes
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	var w []struct {
		Node   flexString `json:"node"`
		Status flexString `json:"status"`
		FP     flexString `json:"ssl_fingerprint"`
	}
	if err := c.Get(ctx, "/nodes", nil, &w); err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(w))
	for _, n := range w {
		out = append(out, Node{Node: string(n.Node), Status: string(n.Status), SSLFingerprint: string(n.FP)})
	}
	return out, nil
}
