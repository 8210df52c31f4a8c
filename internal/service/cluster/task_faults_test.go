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
		if err != nil {
			return err
		}
		if len(nodes) != members {
			return fmt.Errorf("corosync nodes %v, want %d", nodes, members)
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
	acctest.EachTaskFault(t, []string{"clustercreate", "clusterjoin"}, func(t *testing.T, typ, action string) {
		e := acctest.NewStandalone(t)
		labAddresses(t, e, "z2g4a", "z2g4b")
		tc := e.TaskFaultCase("task "+typ+"="+action+":1x", e.Config(clusterConfig, nodeConfig("z2g4b", 1)),
			acctest.ErrUnlessAdopted(action, `Unable to (Create cluster|Join node)`), checkLab(e, 2))
		tc.Steps = append(tc.Steps, resource.TestStep{Config: e.Config(forget)})
		e.Run(t, tc)
	})
}

// A join worker killed after the member's addnode leaves the node in the
// cluster's corosync.conf but standalone: the provider removes it from
// corosync.conf (the cluster keeps quorum with two members up) and fails;
// the next apply joins it. In a cluster of one it cannot (no quorum: the
// half-joined node is an expected vote) and says what to run.
func TestAccClusterNode_joinTaskKilled(t *testing.T) {
	t.Parallel()
	for _, members := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d-members", members), func(t *testing.T) {
			t.Parallel()
			e := acctest.NewStandalone(t)
			labAddresses(t, e, "z2g4a", "z2g4b", "z2g4c")
			first := e.Config(clusterConfig, nodeConfig("z2g4b", 1))
			cfg := e.Config(clusterConfig, nodeConfig("z2g4b", 1), nodeConfig("z2g4c", 2))
			if members == 1 {
				first, cfg = e.Config(clusterConfig), first
				e.Run(t, resource.TestCase{Steps: []resource.TestStep{{Config: first}, {
					PreConfig:   func() { _ = e.Sim.SetFaultSpec("task clusterjoin=kill:1x") },
					Config:      cfg,
					ExpectError: regexp.MustCompile(`(?s)never\s+switched\s+to\s+the\s+cluster;\s+removing\s+it\s+failed.*no\s+quorum.*pvecm\s+delnode\s+z2g4b`),
				}, {Config: e.Config(forget)}}})
				return
			}
			tc := e.TaskFaultCase("task clusterjoin=kill:1x", cfg,
				regexp.MustCompile(`(?s)Unable to Join node z2g4c.*unexpected status.*the\s+provider\s+removed\s+it\s+from\s+corosync.conf`), checkLab(e, 3))
			tc.Steps = append([]resource.TestStep{{Config: first}}, append(tc.Steps, resource.TestStep{Config: e.Config(forget)})...)
			e.Run(t, tc)
		})
	}
}

// A cluster create or join whose answer is lost, before PVE acted or
// after, converges in that apply: the provider follows the task the POST
// started (a finished join is found through the cluster: the node's own
// credentials and certificate are gone) or, with none, sends it again.
// The reference lab failed "Unable to Join node z2g4b ... EOF", and the
// next join "no quorum" on the half-known node.
func TestAccCluster_createJoinAnswerLost(t *testing.T) {
	t.Parallel()
	// One create, a join per member.
	for path, want := range map[string]int{"/cluster/config": 1, "/cluster/config/join": 2} {
		t.Run(path[1:], func(t *testing.T) {
			t.Parallel()
			acctest.EachDrop(t, func(t *testing.T, drop string) {
				e := acctest.NewStandalone(t)
				labAddresses(t, e, "z2g4a", "z2g4b", "z2g4c")
				cfg := e.Config(clusterConfig, nodeConfig("z2g4b", 1), nodeConfig("z2g4c", 2))
				tc := e.LostAnswerCase("POST", path, drop, want, cfg, checkLab(e, 3))
				tc.Steps = append(tc.Steps, resource.TestStep{Config: e.Config(forget)})
				e.Run(t, tc)
			})
		})
	}
}
