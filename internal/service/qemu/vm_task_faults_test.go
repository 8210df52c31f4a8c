package qemu_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// checkOneVM checks the cluster holds exactly one VM, 100, unlocked: a
// failed create left neither a duplicate nor an orphan.
func checkOneVM(e *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		rows, err := e.Client.ClusterResources(ctx, "vm")
		if err != nil {
			return err
		}
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.VMID)
		}
		if len(ids) != 1 || ids[0] != 100 {
			return fmt.Errorf("VMs in the cluster: %v, want [100]", ids)
		}
		node, err := e.Client.FindVM(ctx, 100)
		if err != nil {
			return err
		}
		cfg, err := e.Client.VMConfig(ctx, node, 100, false)
		if err != nil {
			return err
		}
		if l := cfg.Values["lock"]; l != "" {
			return fmt.Errorf("VM 100 is locked (%s)", l)
		}
		return nil
	}
}

// A qmcreate worker that fails, early or after writing the config (PVE
// unlinks it either way), fails the first apply and the next creates the
// VM. A start that fails early fails the apply (the VM
// is tainted and replaced); one that died after the VM came up is taken
// as done. Either way one VM 100, running, and nothing left to plan.
func TestAccVM_createTaskFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, action string
		wantErr      *regexp.Regexp // nil: the started VM is taken as done
	}{
		{"early", "fail", regexp.MustCompile(`Unable to Create VM 100`)}, {"late", "fail-late", regexp.MustCompile(`Unable to Create VM 100`)},
		{"start-early", "fail", regexp.MustCompile(`Unable to Start VM 100`)}, {"start-late", "fail-late", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newVMEnv(t)
			cfg := e.Config(vm100(e.Node(t, 0), vm100Net+"  started = true\n"))
			typ := "qmcreate"
			if strings.HasPrefix(tc.name, "start") {
				typ = "qmstart"
			}
			e.Run(t, e.TaskFaultCase("task "+typ+"="+tc.action+":1x", cfg, tc.wantErr, resource.ComposeTestCheckFunc(checkOneVM(e),
				checkVM(e, func(_ string, cfg *pve.VMConfig, st *pve.VMStatus) error {
					if st.Status != "running" || cfg.Values["cores"] != "4" {
						return fmt.Errorf("VM 100: %s, cores %s", st.Status, cfg.Values["cores"])
					}
					return nil
				}))))
		})
	}
}

// A disk create (a qmconfig worker allocating the volume) that fails,
// early or after the volume was allocated and attached, converges on the
// next apply: one volume in the slot, no unused leftover.
func TestAccVMDisk_createTaskFails(t *testing.T) {
	t.Parallel()
	for i, action := range acctest.TaskActions {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			e := diskEnv(t, pvesim.Options{TaskDuration: 5 * time.Millisecond})
			node := e.Node(t, 0)
			vmid := int64(9150 + i)
			createVM(t, e, node, vmid, false)
			cfg := e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, `size = "2G"`, "delete_on_destroy = true"))
			e.Run(t, e.TaskFaultCase(fmt.Sprintf("task qmconfig/%d=%s:1x", vmid, action), cfg, acctest.ErrUnlessAdopted(action, `Unable to Create VM disk`), resource.ComposeTestCheckFunc(
				checkVolumes(e, node, vmid, map[string][]string{"local-lvm": {fmt.Sprintf("local-lvm:vm-%d-disk-0=2G", vmid)}}),
				checkNoUnused(e, node, vmid))))
		})
	}
}

// A qmcreate worker killed before it wrote the config leaves the config
// PVE reserved the id with, locked 'create': the provider removes it
// (root@pam may skip the lock) and fails the apply; the next creates the
// VM. With a token it cannot, and says how.
func TestAccVM_createTaskKilled(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	cfg := vm100(e.Node(t, 0), vm100Net)
	tc := e.TaskFaultCase("task qmcreate=kill:1x", e.RootProviderConfig()+cfg,
		regexp.MustCompile(`(?s)Unable to Create VM 100.*unexpected status.*locked 'create'.*the provider\s+removed it`), checkOneVM(e))
	tc.Steps = append([]resource.TestStep{{
		PreConfig: func() {
			if err := e.Sim.SetFaultSpec("task qmcreate=kill:1x"); err != nil {
				t.Fatal(err)
			}
		},
		Config:      e.Config(cfg),
		ExpectError: regexp.MustCompile(`(?s)locked 'create'.*only root@pam.*qm destroy 100 --skiplock`),
	}, {
		// Left locked: the token cannot create over it.
		PreConfig: func() {
			e.Sim.ClearFaults()
			node, err := e.Client.FindVM(context.Background(), 100)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.RootClient(t).CheckVMIDFree(context.Background(), 100); err == nil {
				t.Fatalf("VM 100 is gone from %s", node)
			}
			upid, err := e.RootClient(t).DeleteReservedVM(context.Background(), node, 100)
			if _, err := e.RootClient(t).Await(context.Background(), upid, err); err != nil {
				t.Fatal(err)
			}
		},
		Config: e.Config(cfg),
		Check:  checkOneVM(e),
	}, {Config: e.Config(), Check: checkNoVMs(e)}}, tc.Steps...)
	e.Run(t, tc)
}

// A create whose task failed (its worker unlinked the config, so the id
// was free again) finds VM 100 that someone else created meanwhile, still
// locked 'create' while its worker runs: the provider leaves it alone and
// fails. Before, it destroyed that VM with skiplock as the half VM of its
// own killed worker.
func TestAccVM_createTaskFailedLeavesAnotherCreate(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	node := e.Node(t, 0)
	cfg := vm100(node, vm100Net)
	ctx := context.Background()
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig: func() {
			if err := e.Sim.SetFaultSpec("task qmcreate/100=fail:1x"); err != nil {
				t.Fatal(err)
			}
			e.Sim.CreateVMOnRequest(node, 100, map[string]string{"name": "theirs"}, "GET", "/nodes/"+node+"/qemu/100/config")
		},
		Config:      e.RootProviderConfig() + cfg,
		ExpectError: regexp.MustCompile(`(?s)Unable to Create VM 100.*is not this create's and is left alone`),
	}, {
		PreConfig: func() {
			c := e.RootClient(t)
			tasks, err := c.TasksSince(ctx, node, "qmcreate", "100", time.Unix(0, 0))
			if err != nil || len(tasks) != 2 {
				t.Fatalf("qmcreate tasks of VM 100: %v, %v", tasks, err)
			}
			for _, u := range tasks {
				_, _ = c.Await(ctx, u.Raw, nil) // the failed one ends at once
			}
			if conf, at := e.Sim.VMConfig(100); conf["name"] != "theirs" || conf["lock"] != "" {
				t.Fatalf("the other create's VM 100 on %q: %v", at, conf)
			}
			upid, err := c.DeleteVM(ctx, node, 100, true, false)
			if _, err := c.Await(ctx, upid, err); err != nil {
				t.Fatal(err)
			}
		},
		Config: e.RootProviderConfig() + cfg,
		Check:  checkOneVM(e),
	}, {Config: e.Config(), Check: checkNoVMs(e)}}})
}

// withFirst puts step before tc's steps: the VM exists before the task
// that fails.
func withFirst(step resource.TestStep, tc resource.TestCase) resource.TestCase {
	tc.Steps = append([]resource.TestStep{step}, tc.Steps...)
	return tc
}

// A start, a shutdown, a migration or a destroy of VM 100 whose task
// fails, early (nothing happened) or late (it happened, then the worker
// died), fails that apply, except a start or shutdown that happened (the
// VM is as planned: a warning); the next converges on one VM 100 in the
// planned state, or none after the destroy.
func TestAccVM_taskFailsOnAnUpdateOrDestroy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, from, to string }{
		{"qmstart", "  started = false\n", "  started = true\n"},
		{"qmshutdown", "  started = true\n", "  started = false\n"},
		{"qmigrate", "  started = true\n", "  started = true\n"},
		{"qmdestroy", "  started = false\n", ""},
	} {
		for _, action := range acctest.TaskActions {
			t.Run(tc.typ+"-"+action, func(t *testing.T) {
				t.Parallel()
				e := newVMEnv(t)
				n0, to := e.Node(t, 0), e.Node(t, 0)
				if tc.typ == "qmigrate" {
					to = e.Node(t, 1)
				}
				from := e.Config(vm100(n0, vm100Net+tc.from))
				target, check := e.Config(vm100(to, vm100Net+tc.to)), resource.ComposeTestCheckFunc(checkOneVM(e),
					checkVM(e, func(node string, _ *pve.VMConfig, st *pve.VMStatus) error {
						if node != to || st.Running() != strings.Contains(tc.to, "true") {
							return fmt.Errorf("VM 100 on %s, %s; want on %s, %s", node, st.Status, to, tc.to)
						}
						return nil
					}))
				if tc.typ == "qmdestroy" {
					target, check = e.Config(), checkNoVMs(e)
				}
				wantErr := regexp.MustCompile(`Unable to`)
				if action == "fail-late" && (tc.typ == "qmstart" || tc.typ == "qmshutdown") {
					wantErr = nil // the VM is as planned: a warning
				}
				e.Run(t, withFirst(resource.TestStep{Config: from},
					e.TaskFaultCase("task "+tc.typ+"="+action+":1x", target, wantErr, check)))
			})
		}
	}
}

// checkNoVMs checks the cluster holds no VM.
func checkNoVMs(e *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		rows, err := e.Client.ClusterResources(context.Background(), "vm")
		if err != nil {
			return err
		}
		if len(rows) != 0 {
			return fmt.Errorf("VMs left: %+v", rows)
		}
		return nil
	}
}

// A disk resize or move to another storage whose task fails, early or
// late, fails the apply; the next converges on one volume of the planned
// size on the planned storage, nothing unused left.
func TestAccVMDisk_updateTaskFails(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct{ typ, storage, size string }{
		{"resize", "local-lvm", "4G"}, {"qmmove", "images", "2G"},
	} {
		for j, action := range acctest.TaskActions {
			t.Run(tc.typ+"-"+action, func(t *testing.T) {
				t.Parallel()
				e := diskEnv(t, pvesim.Options{TaskDuration: 5 * time.Millisecond})
				addDirStorage(e, "images")
				node := e.Node(t, 0)
				vmid := int64(9160 + 2*i + j)
				createVM(t, e, node, vmid, false)
				disk := func(storage, size string) string {
					return e.Config(diskHCL("this", vmid, "scsi0", fmt.Sprintf("storage = %q", storage), fmt.Sprintf("size = %q", size), "delete_on_destroy = true"))
				}
				vol := fmt.Sprintf("local-lvm:vm-%d-disk-0=%s", vmid, tc.size)
				want := map[string][]string{"local-lvm": {vol}, "images": nil}
				if tc.storage == "images" {
					want = map[string][]string{"local-lvm": nil, "images": {fmt.Sprintf("images:%d/vm-%d-disk-0.qcow2=%s", vmid, vmid, tc.size)}}
				}
				e.Run(t, withFirst(resource.TestStep{Config: disk("local-lvm", "2G")},
					e.TaskFaultCase(fmt.Sprintf("task %s/%d=%s:1x", tc.typ, vmid, action), disk(tc.storage, tc.size),
						errorRE(`Unable to Update VM disk`), resource.ComposeTestCheckFunc(checkVolumes(e, node, vmid, want), checkNoUnused(e, node, vmid)))))
			})
		}
	}
}
