package qemu_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

const diskAddr = "pve_vm_disk.this"

func expectUpdate(addr string) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}}
}

func wantOpts(want map[string]string) func(pve.Drive) error {
	return func(d pve.Drive) error {
		for k, v := range want {
			if got := d.Options[k]; got != v {
				return fmt.Errorf("drive %s: %s = %q, want %q", d.String(), k, got, v)
			}
		}
		return nil
	}
}

func pendingIs(want ...string) statecheck.StateCheck {
	vals := make([]knownvalue.Check, 0, len(want))
	for _, w := range want {
		vals = append(vals, knownvalue.StringExact(w))
	}
	return statecheck.ExpectKnownValue(diskAddr, tfjsonpath.New("pending"), knownvalue.ListExact(vals))
}

// TestAccVMDisk_reference walks the reference lab's disk (scsi0 on Ceph
// RBD, writeback, iothread, ssd, discard, 32G) through grow, move to
// local-lvm and back, a slot change, a cache change on the running VM
// (pending, then applied by a reboot) and a destroy that keeps the volume;
// every change is an in-place update and the one volume survives each
// (same size, no new empty volume).
func TestAccVMDisk_reference(t *testing.T) {
	e := diskEnv(t, pvesim.Options{CephTimeScale: -1})
	setupCephStorage(t, e)
	node := e.Node(t, 0)
	const vmid = 9101
	createVM(t, e, node, vmid, false)
	rbd := "ceph:vm-9101-disk-0"
	hcl := func(slot, storage, size, cache string, extra ...string) string {
		return e.Config(diskHCL("this", vmid, slot, append([]string{
			fmt.Sprintf("storage = %q", storage), fmt.Sprintf("size = %q", size), fmt.Sprintf("cache = %q", cache),
			"iothread = true", "ssd = true", `discard = "on"`,
		}, extra...)...))
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: hcl("scsi0", "ceph", "32G", "writeback"),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi0", func(d pve.Drive) error {
					if d.Volume != rbd {
						return fmt.Errorf("scsi0 volume %s, want %s", d.Volume, rbd)
					}
					return wantOpts(map[string]string{"cache": "writeback", "iothread": "1", "ssd": "1", "discard": "on", "size": "32G"})(d)
				}),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": {rbd + "=32G"}, "local-lvm": nil}),
				resource.TestCheckResourceAttr(diskAddr, "volume", rbd),
				resource.TestCheckResourceAttr(diskAddr, "node", node),
				resource.TestCheckResourceAttr(diskAddr, "id", "9101/scsi0"),
			),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
		},
		{ResourceName: diskAddr, ImportState: true, ImportStateId: "9101/scsi0", ImportStateVerify: true},
		{
			Config:           hcl("scsi0", "ceph", "48G", "writeback"),
			ConfigPlanChecks: expectUpdate(diskAddr),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi0", wantOpts(map[string]string{"size": "48G"})),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": {rbd + "=48G"}, "local-lvm": nil}),
			),
		},
		{
			Config:           hcl("scsi0", "local-lvm", "48G", "writeback"),
			ConfigPlanChecks: expectUpdate(diskAddr),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi0", func(d pve.Drive) error {
					if d.Volume != "local-lvm:vm-9101-disk-0" {
						return fmt.Errorf("scsi0 after the move: %s", d.String())
					}
					return wantOpts(map[string]string{"size": "48G", "cache": "writeback", "iothread": "1"})(d)
				}),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": nil, "local-lvm": {"local-lvm:vm-9101-disk-0=48G"}}),
				checkNoUnused(e, node, vmid),
				resource.TestCheckResourceAttr(diskAddr, "volume", "local-lvm:vm-9101-disk-0"),
			),
		},
		{
			Config:           hcl("scsi0", "ceph", "48G", "writeback"),
			ConfigPlanChecks: expectUpdate(diskAddr),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi0", wantOpts(map[string]string{"size": "48G"})),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": {rbd + "=48G"}, "local-lvm": nil}),
				checkNoUnused(e, node, vmid),
			),
		},
		{
			// The same volume under another slot: nothing allocated or
			// freed, and the boot order follows the disk.
			PreConfig: func() {
				c := e.RootClient(t)
				if _, err := c.AwaitVMTask(context.Background(), func() (string, error) {
					return c.UpdateVMConfig(context.Background(), node, vmid, pve.VMConfigUpdate{Set: pve.Params{"boot": "order=scsi0;net0"}})
				}); err != nil {
					t.Fatal(err)
				}
			},
			Config:           hcl("scsi1", "ceph", "48G", "writeback"),
			ConfigPlanChecks: expectUpdate(diskAddr),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi1", func(d pve.Drive) error {
					if d.Volume != rbd {
						return fmt.Errorf("scsi1 = %s, want volume %s", d.String(), rbd)
					}
					return wantOpts(map[string]string{"size": "48G", "cache": "writeback", "ssd": "1"})(d)
				}),
				checkSlotGone(e, node, vmid, "scsi0"),
				checkNoUnused(e, node, vmid),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": {rbd + "=48G"}, "local-lvm": nil}),
				func(*terraform.State) error {
					conf, err := vmConfig(e, node, vmid, false)
					if err != nil {
						return err
					}
					if b, _ := conf.Get("boot"); b != "order=scsi1;net0" {
						return fmt.Errorf("boot after the slot change: %q, want order=scsi1;net0", b)
					}
					return nil
				},
				resource.TestCheckResourceAttr(diskAddr, "id", "9101/scsi1"),
			),
		},
		{
			// On the running VM the cache mode waits for a restart.
			PreConfig:         func() { startVM(t, e, node, vmid) },
			Config:            hcl("scsi1", "ceph", "48G", "none"),
			ConfigPlanChecks:  expectUpdate(diskAddr),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs("cache")},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi1", wantOpts(map[string]string{"cache": "writeback"})),
				checkPendingDrive(e, node, vmid, "scsi1", "cache", "none"),
				resource.TestCheckResourceAttr(diskAddr, "cache", "none"),
			),
		},
		{
			// reboot_if_needed plans the reboot that applies it.
			Config:            hcl("scsi1", "ceph", "48G", "none", "reboot_if_needed = true"),
			ConfigPlanChecks:  expectUpdate(diskAddr),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "scsi1", wantOpts(map[string]string{"cache": "none", "size": "48G"})),
				checkPendingDrive(e, node, vmid, "scsi1", "", ""),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": {rbd + "=48G"}}),
				func(*terraform.State) error {
					st, err := e.Client.VMStatus(context.Background(), node, vmid)
					if err != nil {
						return fmt.Errorf("VM status after the reboot: %w", err)
					}
					if !st.Running() {
						return fmt.Errorf("VM after the reboot: %+v", st)
					}
					return nil
				},
			),
		},
		{
			// Destroying detaches: the volume stays as unusedN.
			Config: e.Config(),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(diskAddr, plancheck.ResourceActionDestroy),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkSlotGone(e, node, vmid, "scsi1"),
				checkUnused(e, node, vmid, rbd),
				checkVolumes(e, node, vmid, map[string][]string{"ceph": {rbd + "=48G"}}),
			),
		},
	}})
}

func checkNoUnused(e *acctest.Env, node string, vmid int64) func(*terraform.State) error {
	return func(*terraform.State) error {
		conf, err := vmConfig(e, node, vmid, false)
		if err != nil {
			return err
		}
		if u := conf.Unused(); len(u) > 0 {
			return fmt.Errorf("VM %d has unused volumes %v", vmid, u)
		}
		return nil
	}
}

func checkUnused(e *acctest.Env, node string, vmid int64, volid string) func(*terraform.State) error {
	return func(*terraform.State) error {
		conf, err := vmConfig(e, node, vmid, false)
		if err != nil {
			return err
		}
		for _, v := range conf.Unused() {
			if v == volid {
				return nil
			}
		}
		return fmt.Errorf("VM %d: %s is not an unusedN: %v", vmid, volid, conf.Values)
	}
}

func checkSlotGone(e *acctest.Env, node string, vmid int64, slot string) func(*terraform.State) error {
	return func(*terraform.State) error {
		conf, err := vmConfig(e, node, vmid, false)
		if err != nil {
			return err
		}
		if v, ok := conf.Get(slot); ok {
			return fmt.Errorf("VM %d still has %s = %s", vmid, slot, v)
		}
		return nil
	}
}

// checkPendingDrive asserts the [PENDING] drive of slot has key = want
// ("" key: nothing pending for the slot).
func checkPendingDrive(e *acctest.Env, node string, vmid int64, slot, key, want string) func(*terraform.State) error {
	return func(*terraform.State) error {
		items, err := e.Client.VMPending(context.Background(), node, vmid)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.Key != slot {
				continue
			}
			if key == "" {
				if it.IsPending() {
					return fmt.Errorf("%s still pending: %+v", slot, it)
				}
				return nil
			}
			d, err := pve.ParseDrive(it.Pending)
			if !it.HasPending || err != nil {
				return fmt.Errorf("%s has no pending drive: %+v", slot, it)
			}
			if d.Options[key] != want {
				return fmt.Errorf("pending %s: %s = %q, want %q", slot, key, d.Options[key], want)
			}
			return nil
		}
		return fmt.Errorf("VM %d has no %s", vmid, slot)
	}
}

// TestAccVMDisk_everyAttributeInPlace changes every attribute in turn and
// proves each is an in-place update that PVE applies to the same volume,
// then removes the options (PVE drops the keys), shows drift and
// import.
func TestAccVMDisk_everyAttributeInPlace(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9102
	addDirStorage(e, "images")
	createVM(t, e, node, vmid, false)
	type change struct{ attr, from, to, key, pveValue string }
	changes := []change{
		{"cache", `"writeback"`, `"writethrough"`, "cache", "writethrough"},
		{"iothread", "true", "false", "iothread", "0"},
		{"ssd", "true", "false", "ssd", "0"},
		{"discard", `"on"`, `"ignore"`, "discard", "ignore"},
		{"aio", `"io_uring"`, `"native"`, "aio", "native"},
		{"backup", "true", "false", "backup", "0"},
		{"replicate", "true", "false", "replicate", "0"},
		{"ro", "false", "true", "ro", "1"},
		// PVE keeps the serial url-encoded; the attribute is the plain text.
		{"serial", `"DISK1"`, `"WD 2"`, "serial", "WD%202"},
		{"mbps_rd", "100", "150.5", "mbps_rd", "150.5"},
		{"mbps_rd_max", "200", "250", "mbps_rd_max", "250"},
		{"mbps_wr", "100", "120", "mbps_wr", "120"},
		{"mbps_wr_max", "200", "220", "mbps_wr_max", "220"},
		{"iops_rd", "1000", "1100", "iops_rd", "1100"},
		{"iops_rd_max", "2000", "2100", "iops_rd_max", "2100"},
		{"iops_wr", "1000", "1200", "iops_wr", "1200"},
		{"iops_wr_max", "2000", "2200", "iops_wr_max", "2200"},
		{"size", `"4G"`, `"6G"`, "size", "6G"},
		{"delete_on_destroy", "false", "true", "", ""},
		{"reboot_if_needed", "false", "true", "", ""},
		{"storage", `"local-lvm"`, `"images"`, "", ""},
		{"slot", "", "", "", ""},
	}
	cur := map[string]string{}
	for _, c := range changes {
		if c.from != "" {
			cur[c.attr] = c.from
		}
	}
	render := func(slot string, m map[string]string) string {
		var lines []string
		for _, c := range changes {
			if v, ok := m[c.attr]; ok {
				lines = append(lines, c.attr+" = "+v)
			}
		}
		return e.Config(diskHCL("this", vmid, slot, lines...))
	}
	steps := []resource.TestStep{{
		Config: render("scsi0", cur),
		Check: resource.ComposeAggregateTestCheckFunc(
			checkDrive(e, node, vmid, "scsi0", wantOpts(map[string]string{"cache": "writeback", "aio": "io_uring", "mbps_rd": "100", "iops_wr_max": "2000", "ro": "0", "size": "4G"})),
			checkVolumes(e, node, vmid, map[string][]string{"local-lvm": {"local-lvm:vm-9102-disk-0=4G"}}),
		),
	}}
	slot := "scsi0"
	for _, c := range changes {
		next := map[string]string{}
		for k, v := range cur {
			next[k] = v
		}
		var check resource.TestCheckFunc
		switch c.attr {
		case "slot":
			slot = "virtio3"
			delete(next, "ssd") // VirtIO has no ssd
			check = resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "virtio3", func(d pve.Drive) error {
					if d.Volume != "images:9102/vm-9102-disk-0.qcow2" {
						return fmt.Errorf("virtio3 = %s", d.String())
					}
					return nil
				}),
				checkSlotGone(e, node, vmid, "scsi0"), checkNoUnused(e, node, vmid))
		case "storage":
			next[c.attr] = c.to
			check = resource.ComposeAggregateTestCheckFunc(
				checkVolumes(e, node, vmid, map[string][]string{"local-lvm": nil, "images": {"images:9102/vm-9102-disk-0.qcow2=6G"}}),
				checkNoUnused(e, node, vmid))
		default:
			next[c.attr] = c.to
			if c.key != "" {
				check = checkDrive(e, node, vmid, "scsi0", wantOpts(map[string]string{c.key: c.pveValue}))
			} else {
				check = resource.TestCheckResourceAttr(diskAddr, c.attr, strings.Trim(c.to, `"`))
			}
		}
		steps = append(steps, resource.TestStep{Config: render(slot, next), ConfigPlanChecks: expectUpdate(diskAddr), Check: check})
		cur = next
	}
	// Options removed from the configuration are removed in PVE.
	bare := map[string]string{"storage": cur["storage"], "size": cur["size"]}
	steps = append(steps,
		resource.TestStep{
			Config: render(slot, bare), ConfigPlanChecks: expectUpdate(diskAddr),
			Check: checkDrive(e, node, vmid, slot, func(d pve.Drive) error {
				for _, k := range []string{"cache", "iothread", "ssd", "discard", "aio", "backup", "replicate", "ro", "serial", "mbps_rd", "iops_wr_max"} {
					if v, ok := d.Options[k]; ok {
						return fmt.Errorf("%s still has %s=%s: %s", slot, k, v, d.String())
					}
				}
				return nil
			}),
		},
		resource.TestStep{ResourceName: diskAddr, ImportState: true, ImportStateId: "9102/" + slot, ImportStateVerify: true},
		// Drift: an option changed in PVE shows in the plan.
		resource.TestStep{
			PreConfig: func() {
				c := e.RootClient(t)
				conf, err := c.VMConfig(context.Background(), node, vmid, false)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := conf.Get(slot)
				d, _ := pve.ParseDrive(v)
				if _, err := c.AwaitVMTask(context.Background(), func() (string, error) {
					return c.UpdateVMConfig(context.Background(), node, vmid, pve.VMConfigUpdate{Set: pve.Params{slot: d.With("cache", "unsafe").String()}})
				}); err != nil {
					t.Fatal(err)
				}
			},
			Config: render(slot, bare), PlanOnly: true, ExpectNonEmptyPlan: true,
		},
		resource.TestStep{
			Config: render(slot, bare), ConfigPlanChecks: expectUpdate(diskAddr),
			Check: checkDrive(e, node, vmid, slot, func(d pve.Drive) error {
				if _, ok := d.Options["cache"]; ok {
					return fmt.Errorf("drifted cache not removed: %s", d.String())
				}
				return nil
			}),
		},
		// Drift: the slot detached in PVE removes the resource; the plan
		// creates it again.
		resource.TestStep{
			PreConfig: func() {
				if err := e.RootClient(t).UnlinkVMDisks(context.Background(), node, vmid, []string{slot}, false); err != nil {
					t.Fatal(err)
				}
			},
			Config: render(slot, bare), PlanOnly: true, ExpectNonEmptyPlan: true,
		},
	)
	e.Run(t, resource.TestCase{Steps: steps})
}

// TestAccVMDisk_parallelDisksOneVM creates 10 disks of one VM in one
// apply while another client keeps writing the VM's config: the
// provider's per-VM lock and the retries on PVE's config lock keep lock
// errors from the user, and all 10 volumes exist.
func TestAccVMDisk_parallelDisksOneVM(t *testing.T) {
	e := diskEnv(t, pvesim.Options{QemuLockTimeout: 40 * time.Millisecond}) // shorter than a task (50 ms)
	node := e.Node(t, 0)
	const vmid = 9103
	createVM(t, e, node, vmid, false)
	cfg := e.Config(fmt.Sprintf(`
resource "pve_vm_disk" "d" {
  count   = 10
  vm_id   = %d
  slot    = "scsi${count.index}"
  storage = "local-lvm"
  size    = "1G"
  cache   = "writeback"
}
`, vmid))
	var want []string
	for i := 0; i < 10; i++ {
		want = append(want, fmt.Sprintf("local-lvm:vm-%d-disk-%d=1G", vmid, i))
	}
	// Another writer of the VM's config (the GUI, pve_vm) keeps PVE's
	// config lock busy during the apply, so the provider's own tasks meet
	// "can't lock file ... got timeout" and must start them again.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	busy := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.RootClient(t)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				upid, err := c.UpdateVMConfig(context.Background(), node, vmid, pve.VMConfigUpdate{Set: pve.Params{"description": fmt.Sprintf("busy %d", i)}})
				_, _ = c.Await(context.Background(), upid, err)
			}
		}()
	}
	quiet := func(*terraform.State) error { close(stop); wg.Wait(); return nil }
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig: busy,
		Config:    cfg,
		Check: resource.ComposeAggregateTestCheckFunc(
			quiet,
			checkVolumes(e, node, vmid, map[string][]string{"local-lvm": sortedVolumes(want)}),
			func(*terraform.State) error {
				conf, err := vmConfig(e, node, vmid, true)
				if err != nil {
					return err
				}
				if n := len(conf.Drives()); n != 10 {
					return fmt.Errorf("VM %d has %d drives, want 10: %v", vmid, n, conf.Values)
				}
				return nil
			},
		),
	}}})
}

func sortedVolumes(v []string) []string {
	out := append([]string(nil), v...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestAccVMDisk_shrinkRefused: a smaller size fails at plan and the disk
// keeps its size.
func TestAccVMDisk_shrinkRefused(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9104
	createVM(t, e, node, vmid, false)
	cfg := func(size string) string {
		return e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, fmt.Sprintf("size = %q", size)))
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: cfg("32G")},
		{Config: cfg("16G"), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change size of a VM disk to a smaller size.*shrinking disks is not supported`)},
		{
			Config: cfg("32768M"), PlanOnly: false,
			Check: checkVolumes(e, node, vmid, map[string][]string{"local-lvm": {"local-lvm:vm-9104-disk-0=32G"}}),
		},
	}})
}

// TestAccVMDisk_deleteOnDestroy: with delete_on_destroy the volume is
// deleted with the resource, and no unusedN remains.
func TestAccVMDisk_deleteOnDestroy(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9105
	createVM(t, e, node, vmid, false)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: e.Config(diskHCL("this", vmid, "virtio0", `storage = "local-lvm"`, `size = "2G"`, "delete_on_destroy = true")),
			Check:  checkVolumes(e, node, vmid, map[string][]string{"local-lvm": {"local-lvm:vm-9105-disk-0=2G"}}),
		},
		{
			Config: e.Config(),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkVolumes(e, node, vmid, map[string][]string{"local-lvm": nil}),
				checkSlotGone(e, node, vmid, "virtio0"),
				checkNoUnused(e, node, vmid),
			),
		},
	}})
}

// TestAccVMDisk_runningVM: on a running VM a SCSI disk is hot-plugged at
// once and its slot can move to VirtIO live (same volume), a SATA disk
// waits for a restart (pending "attach"), a slot change a running VM
// cannot hot-plug is refused, and after a migration the disk follows the
// VM to its new node.
func TestAccVMDisk_runningVM(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node, other := e.Node(t, 0), e.Node(t, 1)
	const vmid = 9106
	createVM(t, e, node, vmid, true)
	const sataAddr = "pve_vm_disk.sata"
	addDirStorage(e, "images")
	cfgWith := func(slot string, attrs ...string) string {
		return e.Config(
			diskHCL("this", vmid, slot, append([]string{`size = "2G"`}, attrs...)...),
			diskHCL("sata", vmid, "sata1", `storage = "local-lvm"`, `size = "1G"`),
		)
	}
	cfg := func(slot string) string { return cfgWith(slot, `storage = "local-lvm"`) }
	vol0 := "local-lvm:vm-9106-disk-0"
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config:            e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, `size = "2G"`)),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
			Check:             checkDrive(e, node, vmid, "scsi0", func(d pve.Drive) error { return wantVolume(d, vol0) }),
		},
		{
			Config:           cfg("virtio1"),
			ConfigPlanChecks: expectUpdate(diskAddr),
			ConfigStateChecks: []statecheck.StateCheck{
				pendingIs(),
				statecheck.ExpectKnownValue(sataAddr, tfjsonpath.New("pending"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("attach")})),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "virtio1", func(d pve.Drive) error { return wantVolume(d, vol0) }),
				checkSlotGone(e, node, vmid, "scsi0"),
				checkNoUnused(e, node, vmid),
			),
		},
		{
			Config:      cfg("sata2"),
			ExpectError: errorRE(`Slot cannot change on the running VM`),
		},
		{
			Config:            cfgWith("virtio1", `storage = "local-lvm"`, `cache = "writeback"`),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs("cache")},
		},
		{
			// A move would leave the pending drive on the deleted volume.
			Config:      cfgWith("virtio1", `storage = "images"`, `cache = "writeback"`),
			ExpectError: errorRE(`changes waiting for a restart \(cache\)`),
		},
		{
			Config:            cfgWith("virtio1", `storage = "images"`, `cache = "writeback"`, "reboot_if_needed = true"),
			ConfigPlanChecks:  expectUpdate(diskAddr),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDrive(e, node, vmid, "virtio1", func(d pve.Drive) error {
					if err := wantVolume(d, "images:9106/vm-9106-disk-0.qcow2"); err != nil {
						return err
					}
					return wantOpts(map[string]string{"cache": "writeback", "size": "2G"})(d)
				}),
				checkPendingDrive(e, node, vmid, "virtio1", "", ""),
				checkVolumes(e, node, vmid, map[string][]string{"images": {"images:9106/vm-9106-disk-0.qcow2=2G"}}),
			),
		},
		{Config: cfgWith("virtio1", `storage = "local-lvm"`, `cache = "writeback"`)},
		{
			// Migrated (offline, with its local disks): the disk follows.
			PreConfig: func() {
				c := e.RootClient(t)
				ctx := context.Background()
				upid, err := c.StopVM(ctx, node, vmid)
				if _, err := c.Await(ctx, upid, err); err != nil {
					t.Fatal(err)
				}
				upid, err = c.MigrateVM(ctx, node, vmid, pve.MigrateVMRequest{Target: other})
				if _, err := c.Await(ctx, upid, err); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg("virtio1"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(diskAddr, tfjsonpath.New("node"), knownvalue.StringExact(other)),
				statecheck.ExpectKnownValue(sataAddr, tfjsonpath.New("node"), knownvalue.StringExact(other)),
			},
		},
		{
			// PVE applies the pending attach when the VM starts.
			PreConfig: func() { startVM(t, e, other, vmid) },
			Config:    cfg("virtio1"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(sataAddr, tfjsonpath.New("pending"), knownvalue.ListExact(nil)),
			},
			Check: checkDrive(e, other, vmid, "sata1", func(d pve.Drive) error { return wantVolume(d, "local-lvm:vm-9106-disk-1") }),
		},
		{
			Config: cfgWith("virtio1", `storage = "local-lvm"`, `cache = "writeback"`, "reboot_if_needed = true"),
		},
		{
			// Pending from outside with nothing else to change: the plan
			// holds the reboot that applies it.
			PreConfig: func() {
				c := e.RootClient(t)
				ctx := context.Background()
				set := func(cache string) {
					conf, err := c.VMConfig(ctx, other, vmid, false)
					if err != nil {
						t.Fatal(err)
					}
					v, _ := conf.Get("virtio1")
					d, _ := pve.ParseDrive(v)
					if _, err := c.AwaitVMTask(ctx, func() (string, error) {
						return c.UpdateVMConfig(ctx, other, vmid, pve.VMConfigUpdate{Set: pve.Params{"virtio1": d.With("cache", cache).String()}})
					}); err != nil {
						t.Fatal(err)
					}
				}
				upid, err := c.StopVM(ctx, other, vmid)
				if _, err := c.Await(ctx, upid, err); err != nil {
					t.Fatal(err)
				}
				set("none")
				startVM(t, e, other, vmid)
				set("writeback") // pending: current none
			},
			Config:            cfgWith("virtio1", `storage = "local-lvm"`, `cache = "writeback"`, "reboot_if_needed = true"),
			ConfigPlanChecks:  expectUpdate(diskAddr),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
			Check:             checkDrive(e, other, vmid, "virtio1", wantOpts(map[string]string{"cache": "writeback"})),
		},
	}})
}

func wantVolume(d pve.Drive, vol string) error {
	if d.Volume != vol {
		return fmt.Errorf("drive %s, want volume %s", d.String(), vol)
	}
	return nil
}

// TestAccVMDisk_validation: options the slot's bus lacks and sizes PVE
// cannot allocate are refused at plan, naming the attribute.
func TestAccVMDisk_validation(t *testing.T) {
	e := acctest.New(t)
	for _, tc := range []struct{ slot, attrs, want string }{
		{"virtio0", `ssd = true`, `PVE has no ssd option for VirtIO`},
		{"sata0", `iothread = true`, `PVE has iothread only for SCSI and VirtIO`},
		{"ide0", `ro = true`, `PVE has ro only for SCSI and VirtIO`},
		{"scsi31", ``, `slot.*must be scsi0-30`},
		{"scsi0", `cache = "fast"`, `cache.*value must be one of`},
		{"sata0", `model = "Samsung SSD 870 EVO"`, `PVE has model only for IDE disks; sata0 is SATA`},
		{"ide0", `model = "` + strings.Repeat("x", 41) + `"`, `model = "x+" is 41 bytes; PVE takes up to 40`},
	} {
		t.Run(tc.slot, func(t *testing.T) {
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
				Config:      e.Config(diskHCL("this", 100, tc.slot, `storage = "local-lvm"`, `size = "1G"`, tc.attrs)),
				PlanOnly:    true,
				ExpectError: errorRE("(?s)" + tc.want),
			}}})
		})
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config:      e.Config(diskHCL("this", 100, "scsi0", `storage = "local-lvm"`, `size = "100K"`)),
		PlanOnly:    true,
		ExpectError: errorRE(`PVE allocates disks in whole MiB`),
	}}})
}

// TestAccVMDisk_bootOrder: PVE does not put a disk added after the VM into
// its boot order (the VM would boot from its NIC); boot = true does, in the
// write that attaches the disk, so one apply converges; the slot follows a
// slot change; boot = false takes it out again.
func TestAccVMDisk_bootOrder(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9107
	createVM(t, e, node, vmid, false)
	const addr = "pve_vm_disk.this"
	// checkBootOrder asserts the VM's boot order in PVE (config as it will
	// be after a restart).
	checkBootOrder := func(want string) func(*terraform.State) error {
		return func(*terraform.State) error {
			conf, err := vmConfig(e, node, vmid, false)
			if err != nil {
				return err
			}
			if got, _ := conf.Get("boot"); got != want {
				return fmt.Errorf("VM %d boot = %q, want %q", vmid, got, want)
			}
			return nil
		}
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, `size = "2G"`, "boot = true")),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkBootOrder("order=scsi0;net0"),
				resource.TestCheckResourceAttr(addr, "boot", "true"),
			),
		},
		{
			Config:           e.Config(diskHCL("this", vmid, "scsi1", `storage = "local-lvm"`, `size = "2G"`, "boot = true")),
			ConfigPlanChecks: expectUpdate(addr),
			Check:            checkBootOrder("order=scsi1;net0"),
		},
		{
			Config:           e.Config(diskHCL("this", vmid, "scsi1", `storage = "local-lvm"`, `size = "2G"`, "boot = false")),
			ConfigPlanChecks: expectUpdate(addr),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkBootOrder("order=net0"),
				resource.TestCheckResourceAttr(addr, "boot", "false"),
			),
		},
		{
			// Drift: put back into the order from outside.
			PreConfig: func() {
				c := e.RootClient(t)
				if err := c.UpdateVMConfigSync(context.Background(), node, vmid, pve.VMConfigUpdate{Set: pve.Params{"boot": "order=net0;scsi1"}}); err != nil {
					t.Fatal(err)
				}
			},
			RefreshState:       true,
			ExpectNonEmptyPlan: true,
		},
		{
			Config: e.Config(diskHCL("this", vmid, "scsi1", `storage = "local-lvm"`, `size = "2G"`, "boot = false")),
			Check:  checkBootOrder("order=net0"),
		},
	}})
}

// TestAccVMDisk_bootOrderRunningVM: on a running VM the new boot order
// waits for a restart (pending "boot"); with reboot_if_needed the provider
// reboots, so PVE's current config boots from the disk after one apply.
func TestAccVMDisk_bootOrderRunningVM(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9108
	createVM(t, e, node, vmid, true)
	disk := func(reboot bool) string {
		return e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, `size = "2G"`, "boot = true",
			fmt.Sprintf("reboot_if_needed = %t", reboot)))
	}
	current := func(want string) func(*terraform.State) error {
		return func(*terraform.State) error {
			conf, err := vmConfig(e, node, vmid, true)
			if err != nil {
				return err
			}
			if got, _ := conf.Get("boot"); got != want {
				return fmt.Errorf("VM %d runs with boot = %q, want %q", vmid, got, want)
			}
			return nil
		}
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config:            disk(false),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs("boot")},
			Check:             current("order=net0"),
		},
		{
			Config:            disk(true),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
			Check:             current("order=scsi0;net0"),
		},
	}})
}
