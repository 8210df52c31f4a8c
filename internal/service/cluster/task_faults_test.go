package cluster_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// checkLab checks the cluster lab has exactly the given members, once each.
func checkLab(e *acctest.Env, members int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		st, err := e.Client.ClusterStatus(context.Background())
		if err != nil {
			return err
		}
		if !st.Clustered || st.Name != "lab" || len(st.Nodes) != members {
			return fmt.Errorf("cluster status %+v, want lab with %d members", st, members)
		}
		nodes, err := e.Client.ClusterConfigNodes(context.Background())
		if err != nil || len(nodes) != members {
			return fmt.Errorf("corosync nodes %v (%v), want %d", nodes, err, members)
		}
		return nil
	}
}

// A cluster create or a join whose task fails, early (nothing changed) or
// late (the cluster made, the node joined, then the worker died), converges:
// an early failure fails the apply and the next one creates or joins; a
// late one is adopted by that apply.
func TestAccCluster_createJoinTaskFails(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"clustercreate", "clusterjoin"} {
		for _, action := range []string{"fail", "fail-late"} {
			t.Run(typ+"-"+action, func(t *testing.T) {
				t.Parallel()
				e := acctest.NewStandalone(t)
				labAddresses(t, e, "z2g4a", "z2g4b")
				var wantErr *regexp.Regexp
				if action == "fail" {
					wantErr = regexp.MustCompile(`Unable to (Create cluster|Join node)`)
				}
				tc := e.TaskFaultCase("task "+typ+"="+action+":1x", e.Config(clusterConfig, nodeConfig("z2g4b", 1)), wantErr, checkLab(e, 2))
				tc.Steps = append(tc.Steps, resource.TestStep{Config: e.Config(forget)})
				e.Run(t, tc)
			})
		}
	}
}
