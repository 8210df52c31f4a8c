package network_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// A no-change plan over N interfaces of one node reads the node's interface
// list once per Terraform command, not once per interface.
func TestAccNodeNetwork_noChangePlanReadsListOnce(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("counts requests in the simulator's log")
	}
	node := e.Node(t, 0)
	const n = 8
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `
resource "pve_node_network" "br%[2]d" {
  node  = %[1]q
  iface = "vmbr%[2]d"
  type  = "bridge"
  cidr  = "10.60.%[2]d.1/24"
}
`, node, i+1)
	}
	config := e.Config(b.String())
	listPath := "/nodes/" + node + "/network"
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: config},
		{
			PreConfig: func() { e.Sim.ResetRequests() },
			Config:    config,
			PlanOnly:  true,
		},
		{
			PreConfig: func() {
				var lists, commands int
				for _, r := range e.Sim.Requests() {
					switch {
					case r.Method == "GET" && r.Path == listPath:
						lists++
					case r.Method == "GET" && r.Path == "/version":
						commands++ // every command configures the provider once
					case r.Method != "GET":
						t.Errorf("a no-change plan wrote to PVE: %s %s", r.Method, r.Path)
					}
				}
				t.Logf("no-change plan over %d interfaces: %d GET %s over %d provider runs", n, lists, listPath, commands)
				// Not every provider run refreshes (some only validate), so a run
				// reads the list at most once; N interfaces must never mean N reads.
				if lists == 0 || lists > commands {
					t.Errorf("want between 1 and %d (one per provider run) GET %s for %d interfaces, got %d", commands, listPath, n, lists)
				}
			},
			Config:   config,
			PlanOnly: true,
		},
	}})
}
