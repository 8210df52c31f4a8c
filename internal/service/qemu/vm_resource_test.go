package qemu_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

const vmAddr = "pve_vm.vm100"

// newVMEnv starts the simulator; against a real cluster the tests create
// and destroy VMs, so they run only with PVE_ACC_VMS=1.
func newVMEnv(t *testing.T) *acctest.Env {
	t.Helper()
	e := acctest.NewWithOptions(t, pvesim.Options{TaskDuration: 5 * time.Millisecond})
	if e.Sim == nil && os.Getenv("PVE_ACC_VMS") == "" {
		t.Skip("creates and destroys VMs; set PVE_ACC_VMS=1 to run against a real cluster")
	}
	return e
}

// vm100 is the reference lab's VM 100 (without its disk, which is a
// pve_vm_disk), with extra attributes as given.
func vm100(node, extra string) string {
	return fmt.Sprintf(`
resource "pve_vm" "vm100" {
  node        = %q
  vmid        = 100
  name        = "vm100"
  agent       = true
  bios        = "ovmf"
  cores       = 4
  cpu         = "host"
  memory      = 8192
  numa        = false
  ostype      = "l26"
  sockets     = 1
  scsihw      = "virtio-scsi-single"
%s
}
`, node, extra)
}

func cores6x(node, extra string) string { return cores6(vm100(node, extra)) }

func cores6(hcl string) string { return strings.Replace(hcl, "cores       = 4", "cores       = 6", 1) }

const vm100Net = `
  network = {
    net0 = { bridge = "bridge0" }
  }
`

// checkVM reads VM 100 through the API and runs f on it.
func checkVM(e *acctest.Env, f func(node string, cfg *pve.VMConfig, st *pve.VMStatus) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		node, err := e.Client.FindVM(ctx, 100)
		if err != nil {
			return err
		}
		cfg, err := e.Client.VMConfig(ctx, node, 100, false)
		if err != nil {
			return err
		}
		st, err := e.Client.VMStatus(ctx, node, 100)
		if err != nil {
			return err
		}
		return f(node, cfg, st)
	}
}

// The reference VM 100: created running, imported, every attribute
// changed in place (cores and bios pending on the running VM, name and the
// NIC's VLAN live), migrated live to another node, drift from outside
// shown and reverted, destroy refused while protected, then destroyed.
func TestAccVM_reference(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0, n1 := e.Node(t, 0), e.Node(t, 1)
	var mac string
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			if _, err := e.Client.FindVM(context.Background(), 100); !pve.IsNotFound(err) {
				return fmt.Errorf("VM 100 still exists (%w)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.Config(vm100(n0, vm100Net+`
  description = <<-EOT
    reference lab VM
  EOT
  tags        = ["lab", "ceph"]
  onboot      = true
  started     = true
`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(vmAddr, "id", "100"),
					resource.TestCheckResourceAttr(vmAddr, "status", "running"),
					resource.TestCheckResourceAttr(vmAddr, "pending_changes.#", "0"),
					resource.TestCheckResourceAttr(vmAddr, "network.net0.model", "virtio"),
					resource.TestMatchResourceAttr(vmAddr, "network.net0.mac_address", errorRE(`^BC:24:11:`)),
					checkVM(e, func(node string, cfg *pve.VMConfig, st *pve.VMStatus) error {
						v := cfg.Values
						if node != n0 || !st.Running() || v["cores"] != "4" || v["cpu"] != "host" || v["memory"] != "8192" ||
							v["bios"] != "ovmf" || v["scsihw"] != "virtio-scsi-single" || v["ostype"] != "l26" || v["agent"] != "1" ||
							v["tags"] != "ceph;lab" || v["onboot"] != "1" || v["numa"] != "0" {
							return fmt.Errorf("PVE has %s %v running=%v", node, v, st.Running())
						}
						mac = cfg.Nets()[0].MAC
						return nil
					}),
				),
			},
			{
				ResourceName: vmAddr, ImportState: true, ImportStateId: "100", ImportStateVerify: true,
				// PVE strips the heredoc's final newline; an import records
				// PVE's text.
				ImportStateVerifyIgnore: []string{"timeouts", "description"},
			},
			{
				// cores and bios wait for a restart; name, tags and the NIC's
				// VLAN apply at once. The MAC stays.
				Config: e.Config(vm100(n0, `
  network = {
    net0 = { bridge = "bridge0", tag = 20 }
  }
  description = "reference lab VM"
  tags        = ["lab"]
  onboot      = true
  started     = true
`) + ""),
				ConfigPlanChecks: expectUpdate(vmAddr),
				Check:            resource.TestCheckResourceAttr(vmAddr, "pending_changes.#", "0"),
			},
			{
				Config:           e.Config(cores6(vm100(n0, vm100Net+"  onboot = true\n  started = true\n"))),
				ConfigPlanChecks: expectUpdate(vmAddr),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(vmAddr, "cores", "6"),
					resource.TestCheckResourceAttr(vmAddr, "pending_changes.#", "1"),
					resource.TestCheckResourceAttr(vmAddr, "pending_changes.0", "cores"),
					checkVM(e, func(_ string, cfg *pve.VMConfig, _ *pve.VMStatus) error {
						cur, err := e.Client.VMConfig(context.Background(), n0, 100, true)
						if err != nil {
							return err
						}
						if cfg.Values["cores"] != "6" || cur.Values["cores"] != "4" {
							return fmt.Errorf("cores: with pending %s, current %s", cfg.Values["cores"], cur.Values["cores"])
						}
						if _, ok := cur.Values["tags"]; ok || cur.Values["description"] != "" {
							return fmt.Errorf("tags/description not removed: %v", cur.Values)
						}
						if got := cfg.Nets()[0]; got.MAC != mac || got.Options["tag"] != "" {
							return fmt.Errorf("net0 %+v, MAC was %s", got, mac)
						}
						return nil
					}),
				),
			},
			{
				// A stopped VM keeps its pending changes...
				Config:           e.Config(cores6(vm100(n0, vm100Net+"  onboot = true\n  started = false\n"))),
				ConfigPlanChecks: expectUpdate(vmAddr),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(vmAddr, "status", "stopped"),
					resource.TestCheckResourceAttr(vmAddr, "pending_changes.#", "1"),
				),
			},
			{
				// ...and the next start applies them.
				Config:           e.Config(cores6(vm100(n0, vm100Net+"  onboot = true\n  started = true\n"))),
				ConfigPlanChecks: expectUpdate(vmAddr),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(vmAddr, "status", "running"),
					resource.TestCheckResourceAttr(vmAddr, "pending_changes.#", "0"),
					checkVM(e, func(_ string, _ *pve.VMConfig, _ *pve.VMStatus) error {
						cur, err := e.Client.VMConfig(context.Background(), n0, 100, true)
						if err != nil || cur.Values["cores"] != "6" {
							return fmt.Errorf("cores after the start: %v %w", cur, err)
						}
						return nil
					}),
				),
			},
			{
				// A node change migrates, live.
				Config:           e.Config(cores6x(n1, vm100Net+"  started = true\n  onboot = true\n")),
				ConfigPlanChecks: expectUpdate(vmAddr),
				Check: checkVM(e, func(node string, _ *pve.VMConfig, st *pve.VMStatus) error {
					if node != n1 || !st.Running() {
						return fmt.Errorf("after migration: node %s running %v", node, st.Running())
					}
					return nil
				}),
			},
			{
				// Drift: changed outside Terraform, shown in the plan.
				PreConfig: func() {
					err := e.Client.UpdateVMConfigSync(context.Background(), n1, 100, pve.VMConfigUpdate{Set: pve.Params{"memory": "4096", "name": "renamed"}})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:             e.Config(cores6x(n1, vm100Net+"  started = true\n  onboot = true\n")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:           e.Config(cores6x(n1, vm100Net+"  started = true\n  onboot = true\n  protection = true\n")),
				ConfigPlanChecks: expectUpdate(vmAddr),
				Check: checkVM(e, func(_ string, cfg *pve.VMConfig, _ *pve.VMStatus) error {
					if cfg.Values["name"] != "vm100" || cfg.Values["protection"] != "1" {
						return fmt.Errorf("drift not reverted: %v", cfg.Values)
					}
					return nil
				}),
			},
			{
				// Removing a protected VM fails at plan; the VM stays.
				Config:      e.Config(),
				ExpectError: errorRE(`(?s)Refusing to destroy VM \d+.*protection = false`),
			},
			{
				Config:           e.Config(cores6x(n1, vm100Net+"  started = true\n  onboot = true\n")),
				ConfigPlanChecks: expectUpdate(vmAddr),
			},
		},
	})
}

// Every attribute changes in place, proven by the plan: none replaces the
// VM. Each step changes a different set.
func TestAccVM_everyAttributeUpdatesInPlace(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	base := map[string]string{
		"name": `"a"`, "description": `"d1"`, "tags": `["t1"]`, "cores": "1", "sockets": "1", "memory": "512",
		"balloon": "256", "cpu": `"host"`, "numa": "false", "bios": `"seabios"`, "machine": `"q35"`, "ostype": `"other"`,
		"agent": "false", "scsihw": `"lsi"`, "boot_order": `["net0"]`, "network": `{ net0 = { bridge = "bridge0" } }`,
		"serial": `{ serial0 = "socket" }`, "vga": `"std"`, "onboot": "false", "started": "false", "protection": "false",
	}
	changed := map[string]string{
		"name": `"b"`, "description": `"d2"`, "tags": `["t2", "t3"]`, "cores": "2", "sockets": "2", "memory": "1024",
		"balloon": "512", "cpu": `"x86-64-v3"`, "numa": "true", "bios": `"ovmf"`, "machine": `"pc"`, "ostype": `"l26"`,
		"agent": "true", "scsihw": `"virtio-scsi-single"`, "boot_order": `["net1", "net0"]`,
		"network": `{ net0 = { bridge = "bridge0", tag = 5, firewall = true, model = "e1000" }, net1 = { bridge = "bridge0" } }`,
		"serial":  `{ serial0 = "socket", serial1 = "socket" }`, "vga": `"serial0"`, "onboot": "true", "started": "true",
		"protection": "true",
	}
	render := func(over map[string]string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "resource \"pve_vm\" \"vm100\" {\n  node = %q\n  vmid = 100\n", n0)
		for _, k := range []string{"name", "description", "tags", "cores", "sockets", "memory", "balloon", "cpu", "numa", "bios",
			"machine", "ostype", "agent", "scsihw", "boot_order", "network", "serial", "vga", "onboot", "started", "protection"} {
			v := base[k]
			if o, ok := over[k]; ok {
				v = o
			}
			if v != "" {
				fmt.Fprintf(&b, "  %s = %s\n", k, v)
			}
		}
		b.WriteString("}\n")
		return b.String()
	}
	steps := []resource.TestStep{{Config: e.Config(render(nil))}}
	over := map[string]string{}
	for _, group := range [][]string{
		{"name", "description", "tags"}, {"cores", "sockets", "memory", "balloon"}, {"cpu", "numa", "bios", "machine"},
		{"ostype", "agent", "scsihw"}, {"network", "boot_order"}, {"serial", "vga", "onboot"}, {"started"},
	} {
		for _, k := range group {
			over[k] = changed[k]
		}
		cfg := e.Config(render(over))
		steps = append(steps, resource.TestStep{Config: cfg, ConfigPlanChecks: expectUpdate(vmAddr)})
	}
	// Removing optional attributes is an update too (PVE deletes them).
	steps = append(steps, resource.TestStep{
		Config:           e.Config(fmt.Sprintf("resource \"pve_vm\" \"vm100\" {\n  node = %q\n  vmid = 100\n}\n", n0)),
		ConfigPlanChecks: expectUpdate(vmAddr),
		Check: checkVM(e, func(_ string, cfg *pve.VMConfig, st *pve.VMStatus) error {
			for _, k := range []string{"name", "description", "tags", "balloon", "cpu", "machine", "vga", "net0", "net1", "serial0"} {
				if _, ok := cfg.Values[k]; ok {
					return fmt.Errorf("%s still set: %v", k, cfg.Values)
				}
			}
			if st.Running() {
				return fmt.Errorf("started defaults to false, the VM still runs")
			}
			return nil
		}),
	})
	e.Run(t, resource.TestCase{Steps: steps})
}

// A vmid change is refused at plan, never a replacement; a vmid that is
// taken fails with PVE's text; an unset vmid is allocated.
func TestAccVM_vmid(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	cfg := func(vmid string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_vm" "vm100" {
  node = %q
  %s
}
`, n0, vmid))
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: cfg(""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(vmAddr, "vmid", "100"),
					resource.TestCheckResourceAttr(vmAddr, "id", "100"),
				),
			},
			{Config: cfg("vmid = 100"), PlanOnly: true},
			{Config: cfg("vmid = 101"), ExpectError: errorRE(`(?s)Cannot change vmid of a VM.*Keep vmid = 100`)},
			{
				Config: cfg("vmid = 100") + `
resource "pve_vm" "dup" {
  node = "` + n0 + `"
  vmid = 100
}
`,
				ExpectError: errorRE(`(?s)Unable to Create VM 100.*VM 100 already\s+exists on node`),
			},
			{
				// Destroyed outside Terraform: the refresh drops it and the
				// plan creates it again.
				PreConfig: func() {
					ctx := context.Background()
					if _, err := e.Client.AwaitVMTask(ctx, func() (string, error) { return e.Client.DeleteVM(ctx, n0, 100, true, false) }); err != nil {
						t.Fatal(err)
					}
				},
				Config:             cfg("vmid = 100"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// Destroy refuses while the VM still lists volumes (PVE would delete them
// with it) unless destroy_disks = true.
func TestAccVM_destroyKeepsVolumes(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(vm100(n0, "")),
				Check: func(*terraform.State) error {
					// A disk added outside this resource (as pve_vm_disk does).
					ctx := context.Background()
					_, err := e.Client.AwaitVMTask(ctx, func() (string, error) {
						return e.Client.UpdateVMConfig(ctx, n0, 100, pve.VMConfigUpdate{Set: pve.Params{"scsi0": pve.AllocDrive("local-lvm", 1<<30, nil).String()}})
					})
					return err
				},
			},
			{
				Config:      e.Config(),
				ExpectError: errorRE(`(?s)Unable to Delete VM 100.*scsi0 \(local-lvm:vm-100-disk-0\).*destroy_disks = true`),
			},
			{Config: e.Config(vm100(n0, "  destroy_disks = true\n")), ConfigPlanChecks: expectUpdate(vmAddr)},
			{
				Config: e.Config(),
				Check: func(*terraform.State) error {
					if _, err := e.Client.FindVM(context.Background(), 100); !pve.IsNotFound(err) {
						return fmt.Errorf("VM 100 still exists (%w)", err)
					}
					return nil
				},
			},
		},
	})
}

func TestAccVMDataSources(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(vm100(n0, vm100Net+"  tags = [\"lab\"]\n") + `
data "pve_vm" "vm100" {
  vmid = pve_vm.vm100.vmid
}

data "pve_vms" "lab" {
  tags       = ["lab"]
  depends_on = [pve_vm.vm100]
}
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.pve_vm.vm100", "node", n0),
					resource.TestCheckResourceAttr("data.pve_vm.vm100", "cores", "4"),
					resource.TestCheckResourceAttr("data.pve_vm.vm100", "scsihw", "virtio-scsi-single"),
					resource.TestCheckResourceAttr("data.pve_vm.vm100", "status", "stopped"),
					resource.TestCheckResourceAttrSet("data.pve_vm.vm100", "config.smbios1"),
					resource.TestCheckResourceAttrPair("data.pve_vm.vm100", "network.net0.mac_address", vmAddr, "network.net0.mac_address"),
					resource.TestCheckResourceAttr("data.pve_vms.lab", "vms.#", "1"),
					resource.TestCheckResourceAttr("data.pve_vms.lab", "vms.0.vmid", "100"),
					resource.TestCheckResourceAttr("data.pve_vms.lab", "vms.0.node", n0),
				),
			},
		},
	})
}
