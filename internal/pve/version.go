package pve

import "context"

// Version is the PVE API version. The provider uses it to feature-detect
// endpoints that only newer releases have.
type Version struct {
	Version string // e.g. "9.1.2"
	Release string // e.g. "9.1"
	RepoID  string // pve-manager git commit prefix
}

// Version reads the API version. Any authenticated user may call it, which
// makes it the cheapest "do the endpoint and credentials work" probe.
//
//pve:operation GET /version
func (c *Client) Version(ctx context.Context) (*Version, error) {
	var w struct {
		Version flexString `json:"version"`
		Release flexString `json:"release"`
		RepoID  flexString `json:"repoid"`
	}
	if err := c.Get(ctx, "/version", nil, &w); err != nil {
		return nil, err
	}
	return &Version{Version: string(w.Version), Release: string(w.Release), RepoID: string(w.RepoID)}, nil
}
