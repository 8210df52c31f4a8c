package qemu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// vmWrites are the writes of VM 100's life: create, start, a config
// update, shutdown (its destroy stops it first) and destroy.
var vmWrites = []string{"POST /nodes/*/qemu", "POST /nodes/*/qemu/*/status/*", "PUT /nodes/*/qemu/*/config", "DELETE /nodes/*/qemu/*"}

// sentWrites counts the requests since from that match one of vmWrites'
// method and path shape, and those of them that met a fault.
func sentWrites(e *acctest.Env, from int) (sent, faulted map[string]int) {
	sent, faulted = map[string]int{}, map[string]int{}
	for _, r := range e.Sim.Requests()[from:] {
		var key string
		switch {
		case r.Method == "POST" && strings.Count(r.Path, "/") == 3 && strings.HasSuffix(r.Path, "/qemu"):
			key = "create"
		case r.Method == "POST" && strings.Contains(r.Path, "/status/"):
			key = r.Path[strings.LastIndex(r.Path, "/")+1:]
		case r.Method == "PUT" && strings.HasSuffix(r.Path, "/config"):
			key = "config"
		case r.Method == "DELETE" && strings.Count(r.Path, "/") == 4 && strings.Contains(r.Path, "/qemu/"):
			key = "destroy"
		default:
			continue
		}
		sent[key]++
		if r.Fault != "" {
			faulted[key]++
		}
	}
	return sent, faulted
}

// Every write of a VM's life losing its answer, before PVE acted or
// after: the provider follows the write's task or reads the config back,
// and sends it again only when PVE provably did not act. Each apply
// succeeds with one VM 100 (never a second create, never "already
// exists"), and each write is sent twice after a drop before PVE, once
// after a drop after it.
func TestAccVM_writesWhoseAnswersAreLost(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"drop-before", "drop-after"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			e := newVMEnv(t)
			if e.Sim == nil {
				t.Skip("injects dropped connections into pvesim")
			}
			node := e.Node(t, 0)
			var rules []string
			for _, w := range vmWrites {
				rules = append(rules, w+"="+when+":1x")
			}
			from := 0
			arm := func() {
				from = len(e.Sim.Requests())
				if err := e.Sim.SetFaultSpec(strings.Join(rules, "; ")); err != nil {
					t.Fatal(err)
				}
			}
			// each: the writes an apply makes, each met by one dropped answer.
			each := func(keys ...string) resource.TestCheckFunc {
				return func(*terraform.State) error {
					sent, faulted := sentWrites(e, from)
					want := 1
					if when == "drop-before" {
						want = 2
					}
					for _, k := range keys {
						if faulted[k] != 1 || sent[k] != want {
							return fmt.Errorf("%s: sent %d, faulted %d; want %d sent, 1 faulted (all: %v)", k, sent[k], faulted[k], want, sent)
						}
					}
					return nil
				}
			}
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
				PreConfig: arm,
				Config:    e.Config(vm100HCL(node, 2048)),
				Check:     resource.ComposeTestCheckFunc(checkOneVM(e), each("create", "start")),
			}, {
				PreConfig: arm,
				Config:    e.Config(vm100HCL(node, 4096)),
				// A running VM's memory change stays pending: read back as planned.
				Check: resource.ComposeTestCheckFunc(checkOneVM(e), each("config"), resource.TestCheckResourceAttr("pve_vm.vm100", "memory", "4096")),
			}, {
				PreConfig: arm,
				Config:    e.Config(),
				Check:     resource.ComposeTestCheckFunc(checkNoVMs(e), each("destroy")),
			}}})
		})
	}
}
