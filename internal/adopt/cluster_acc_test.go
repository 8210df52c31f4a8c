package adopt_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The reference lab's cluster z2g4 (founded on z2g4a, whose API the
// provider talks to), its other two members, the datacenter options and
// the standard repositories each node has: imports only, nothing written,
// empty plan after.
func TestAccAdoptCluster(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "cluster")
	want := map[string]string{
		"pve_cluster_options.lab":          "cluster",
		"pve_cluster.lab":                  "z2g4",
		`pve_cluster_node.member["z2g4b"]`: "z2g4b",
		`pve_cluster_node.member["z2g4c"]`: "z2g4c",
	}
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		// pve-no-subscription added, the enterprise repository disabled,
		// Ceph Squid from pveceph install.
		for _, h := range []string{"no-subscription", "enterprise", "ceph-squid-no-subscription"} {
			want[`pve_apt_repository.lab["`+n+"/"+h+`"]`] = n + "/" + h
		}
	}
	checkImports(t, a.res, want)
	// Handles PVE reports but no file has (pvetest, Ceph's enterprise
	// repository after pveceph install rewrote ceph.sources) are not adopted:
	// Read finds no object, and a configuration naming one would add it.
	for _, im := range a.res.Imports {
		if strings.HasSuffix(im.ID, "/test") || strings.HasSuffix(im.ID, "/ceph-squid-enterprise") {
			t.Errorf("unconfigured handle adopted: %s", im.ID)
		}
	}
	checkSkipped(t, a.res, "/etc/apt/sources.list.d/debian.sources:0", "", 3)
	for _, want := range []string{
		"links = [\n    { address = \"169.254.60.10\" },\n    { address = \"169.254.50.10\" },\n  ]",
		"enabled = false",
		"depends_on = [pve_cluster.lab]",
	} {
		if !strings.Contains(string(a.files["cluster.tf"]), want) {
			t.Errorf("cluster.tf lacks %q:\n%s", want, a.files["cluster.tf"])
		}
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// The diskless lab's cluster jpl of four nodes: founded on jpl-proxmox6
// (the endpoint), three members, links on 192.168.100.0/24 and the
// management network; jpl-proxmox6 has no Ceph, so it keeps the
// installer's (disabled) Ceph enterprise repository and no Ceph
// no-subscription one.
func TestAccAdoptClusterDiskless(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "diskless", "cluster")
	want := map[string]string{
		"pve_cluster.lab": "jpl",
		`pve_apt_repository.lab["jpl-proxmox6/ceph-squid-enterprise"]`:      "jpl-proxmox6/ceph-squid-enterprise",
		`pve_apt_repository.lab["jpl-proxmox7/ceph-squid-no-subscription"]`: "jpl-proxmox7/ceph-squid-no-subscription",
	}
	for _, n := range []string{"jpl-proxmox7", "jpl-proxmox8", "jpl-proxmox9"} {
		want[`pve_cluster_node.member["`+n+`"]`] = n
	}
	checkImports(t, a.res, want)
	for _, im := range a.res.Imports {
		if im.ID == "jpl-proxmox6" || im.ID == "jpl-proxmox6/ceph-squid-no-subscription" {
			t.Errorf("adopted %s: the founder is pve_cluster, and jpl-proxmox6 has no Ceph repository but the installer's", im.ID)
		}
	}
	if !strings.Contains(string(a.files["cluster.tf"]), `{ address = "192.168.100.19" },`) {
		t.Errorf("cluster.tf lacks jpl-proxmox9's link0:\n%s", a.files["cluster.tf"])
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// A standalone node (fresh install, no cluster) adopts no pve_cluster and
// no member; its repositories are as the installer left them (enterprise
// on).
func TestAccAdoptClusterStandalone(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	a := adoptEnv(t, e, "cluster")
	node := e.Node(t, 0)
	checkImports(t, a.res, map[string]string{`pve_apt_repository.lab["` + node + `/enterprise"]`: node + "/enterprise"})
	for _, im := range a.res.Imports {
		if strings.HasPrefix(im.To, "pve_cluster.") || strings.HasPrefix(im.To, "pve_cluster_node.") {
			t.Errorf("a standalone node adopted %s", im.To)
		}
		if !strings.HasPrefix(im.ID, node+"/") && strings.HasPrefix(im.To, "pve_apt_repository.") {
			t.Errorf("adopted another node's repository: %s", im.ID)
		}
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
