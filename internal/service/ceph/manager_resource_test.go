package ceph_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

func coreManagerHCL(nodes ...string) string {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, `
resource "pve_ceph_manager" %[1]q {
  node       = %[1]q
  depends_on = [pve_ceph_monitor.z2g4a]
}
`, n)
	}
	return b.String()
}

// coreManagers checks what PVE lists: "id=state" sorted.
func coreManagers(e *acctest.Env, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		mgrs, err := e.Client.CephMgrs(context.Background(), "z2g4a")
		if err != nil {
			return err
		}
		var got []string
		for _, m := range mgrs {
			got = append(got, m.Name+"="+m.State)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != want {
			return fmt.Errorf("PVE lists managers %v, want %s", got, want)
		}
		return nil
	}
}

// The first monitor brings a manager, which its node's pve_ceph_manager
// adopts; another is created; removing the active one lets the standby
// take over; one removed outside Terraform is planned again; the last one
// is removed on destroy (with a warning).
func TestAccCephManager_lifecycle(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	ctx := context.Background()
	mon := e.Config(coreClusterHCL, coreMonitorHCL("z2g4a"))
	forget := "\nremoved {\n  from = pve_ceph_cluster.lab\n  lifecycle { destroy = false }\n}\n" +
		"removed {\n  from = pve_ceph_monitor.z2g4a\n  lifecycle { destroy = false }\n}\n"
	e.Run(t, resource.TestCase{
		CheckDestroy: coreManagers(e, ""),
		Steps: []resource.TestStep{
			{
				Config: mon + coreManagerHCL("z2g4a", "z2g4b"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_ceph_manager.z2g4a", "id", "z2g4a"),
					resource.TestCheckResourceAttr("pve_ceph_manager.z2g4a", "state", "active"),
					resource.TestCheckResourceAttr("pve_ceph_manager.z2g4b", "state", "standby"),
					coreManagers(e, "z2g4a=active,z2g4b=standby"),
				),
			},
			{
				ResourceName:            "pve_ceph_manager.z2g4b",
				ImportState:             true,
				ImportStateId:           "z2g4b",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts", "state"},
			},
			{
				Config: mon + coreManagerHCL("z2g4b"),
				Check:  coreManagers(e, "z2g4b=active"),
			},
			{
				PreConfig: func() {
					upid, err := e.Client.DestroyCephMgr(ctx, "z2g4b", "z2g4b")
					if _, err := e.Client.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
				},
				Config:             mon + coreManagerHCL("z2g4b"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: mon + coreManagerHCL("z2g4b"),
				Check:  coreManagers(e, "z2g4b=active"),
			},
			{
				// Keep Ceph; the harness then destroys the last manager.
				Config: e.Config(forget) + `
resource "pve_ceph_manager" "z2g4b" {
  node = "z2g4b"
}
`,
			},
		},
	})
}
