package ha

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// Shared by pve_ha_rule (PVE 9) and pve_ha_group (PVE 8): node lists with
// priorities, and the release check.

// encodeNodes writes a node -> priority map as PVE's node list: sorted by
// node, ":priority" only where it is not 0 (as PVE writes it back).
func encodeNodes(ctx context.Context, m types.Map) (string, diag.Diagnostics) {
	var nodes map[string]int64
	diags := m.ElementsAs(ctx, &nodes, false)
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if p := nodes[n]; p != 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", n, p))
		} else {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, ","), diags
}

// decodeNodes reads PVE's node list into a node -> priority map.
func decodeNodes(s string) (types.Map, diag.Diagnostics) {
	elems := map[string]int64{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		n, p, _ := strings.Cut(item, ":")
		prio, _ := strconv.ParseInt(p, 10, 64)
		elems[n] = prio
	}
	return types.MapValueFrom(context.Background(), types.Int64Type, elems)
}

// releaseIs9 reports whether the cluster runs PVE 9 or later (one cached
// GET /version per command).
func releaseIs9(ctx context.Context, pd *framework.ProviderData) (bool, string, error) {
	v, err := framework.CachedRead(ctx, pd.Reads, "version", pd.Client.Version)
	if err != nil {
		return false, "", err
	}
	return !strings.HasPrefix(v.Release, "8.") && !strings.HasPrefix(v.Release, "7."), v.Release, nil
}
