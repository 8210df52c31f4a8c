package adopt_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// One member of the diskless lab shut down: its network and repositories
// cannot be read (only the node reports them) and are listed as not
// adopted; it stays a cluster member (corosync.conf has it), and the rest
// is adopted as usual.
func TestAccAdoptClusterNetworkNodeOffline(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "diskless")
	const off = "jpl-proxmox9"
	e.Sim.PowerOff(off)
	a := adoptEnv(t, e, "cluster", "network")
	checkImports(t, a.res, map[string]string{
		`pve_cluster_node.member["` + off + `"]`:                            off,
		`pve_node_network_config.lab["jpl-proxmox8"]`:                       "jpl-proxmox8",
		`pve_apt_repository.lab["jpl-proxmox8/ceph-squid-no-subscription"]`: "jpl-proxmox8/ceph-squid-no-subscription",
	})
	for _, im := range a.res.Imports {
		if strings.HasPrefix(im.ID, off+"/") || im.To == `pve_node_network_config.lab["`+off+`"]` {
			t.Errorf("adopted %s of the offline node", im.To)
		}
	}
	checkSkipped(t, a.res, "node "+off, "", 2)
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
