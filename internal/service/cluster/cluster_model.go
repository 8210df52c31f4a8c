// Package cluster manages PVE clusters: pve_cluster (create), pve_cluster_node
// (join/remove) and the data sources pve_nodes, pve_cluster_status,
// pve_cluster_join_info and pve_version.
package cluster

import (
	"context"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const maxLinks = 8

// rootOnlyDetail explains why a call needs a root@pam ticket.
const rootOnlyDetail = "PVE reserves creating and joining clusters for root@pam logged in with a password: " +
	"it refuses API tokens for these calls, even root's own (403 \"Permission check failed (user != root@pam)\"). " +
	"Set username = \"root@pam\" and password in the provider block (or PVE_USERNAME/PVE_PASSWORD) instead of api_token."

// linkModel is one corosync link of pve_cluster.
type linkModel struct {
	Address  types.String `tfsdk:"address"`
	Priority types.Int64  `tfsdk:"priority"`
}

var linkAttrTypes = map[string]attr.Type{"address": types.StringType, "priority": types.Int64Type}

// nodeLinkModel is one corosync link of pve_cluster_node.
type nodeLinkModel struct {
	Address types.String `tfsdk:"address"`
}

var nodeLinkAttrTypes = map[string]attr.Type{"address": types.StringType}

// linksFromAPI turns link number -> address into a list indexed by link
// number. A gap (link0 and link2 without link1) cannot be expressed as a
// list; ok is false then.
func linksFromAPI(m map[int]string) ([]string, bool) {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := make([]string, 0, len(keys))
	for i, k := range keys {
		if k != i {
			return nil, false
		}
		out = append(out, m[k])
	}
	return out, true
}

// onlineMember reports whether the cluster lists node online now.
func onlineMember(ctx context.Context, c *pve.Client, node string) bool {
	st, err := c.ClusterStatus(ctx)
	if err != nil {
		return false
	}
	n := st.Node(node)
	return n != nil && n.Online
}
