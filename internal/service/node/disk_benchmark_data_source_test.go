package node_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func benchDevice(name, node, dev, extra string) string {
	return fmt.Sprintf(`
data "pve_node_disk_benchmark" %q {
  node             = %q
  device           = %q
  overwrite_device = true
  runtime          = 5
%s}
`, name, node, dev, extra)
}

// simOnly skips device benchmarks against a real cluster: they destroy
// the disk's content.
func simOnly(t *testing.T, e *acctest.Env) {
	t.Helper()
	if e.Sim == nil {
		t.Skip("device benchmarks overwrite disks; they run against the simulator only")
	}
}

// fioRuns lists the fio commands the simulated nodes received.
func fioRuns(e *acctest.Env) []pvesim.SSHCommand {
	var out []pvesim.SSHCommand
	for _, c := range e.Sim.SSHCommands() {
		argv := c.Argv
		if len(argv) > 3 && argv[0] == "sudo" {
			argv = argv[3:]
		}
		if len(argv) > 0 && argv[0] == "fio" {
			out = append(out, c)
		}
	}
	return out
}

// between checks that a numeric attribute lies in [lo, hi].
func between(addr, attr string, lo, hi float64) resource.TestCheckFunc {
	return resource.TestCheckResourceAttrWith(addr, attr, func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < lo || f > hi {
			return fmt.Errorf("%s = %q, want %g to %g", attr, v, lo, hi)
		}
		return nil
	})
}

// The datacenter SSDs sustain thousands of sync writes per second, the
// consumer QLC NVMe under a thousand; fio runs with the sync-write
// options, and nothing is recorded as overwritten.
func TestAccNodeDiskBenchmark_datacenterSSDvsQLC(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	a, c := e.Node(t, 0), e.Node(t, 2)
	const dc, qlc, pm, four = "data.pve_node_disk_benchmark.dc", "data.pve_node_disk_benchmark.qlc",
		"data.pve_node_disk_benchmark.pm981a", "data.pve_node_disk_benchmark.four_jobs"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: e.Config(
				benchDevice("dc", a, "/dev/sdb", ""),
				benchDevice("qlc", a, "/dev/nvme0n1", ""),
				benchDevice("pm981a", c, "/dev/nvme0n1", ""),
				benchDevice("four_jobs", a, "/dev/sdc", "  jobs = 4\n"),
			),
			Check: resource.ComposeAggregateTestCheckFunc(
				between(dc, "write_iops", 3000, 15000),
				between(dc, "latency_p50_us", 50, 400),
				resource.TestCheckResourceAttr(dc, "model", "INTEL_SSDSC2BB480G4"),
				resource.TestCheckResourceAttr(dc, "skipped", "false"),
				resource.TestCheckResourceAttr(dc, "in_use", ""),
				resource.TestCheckResourceAttr(dc, "block_size", "4k"),
				resource.TestCheckResourceAttr(dc, "jobs", "1"),
				between(qlc, "write_iops", 100, 999),
				between(qlc, "latency_p50_us", 1000, 5000),
				resource.TestCheckResourceAttr(qlc, "model", "INTEL SSDPEKNW512G8"),
				between(pm, "write_iops", 100, 999),
				between(four, "write_iops", 12000, 40000),
				// bandwidth = IOPS x 4 KiB; percentiles in order.
				func(s *terraform.State) error {
					for _, addr := range []string{dc, qlc, pm, four} {
						at := s.RootModule().Resources[addr].Primary.Attributes
						iops, _ := strconv.ParseFloat(at["write_iops"], 64)
						bw, _ := strconv.ParseFloat(at["bandwidth_bytes_per_second"], 64)
						if bw < iops*4096*0.99 || bw > iops*4096*1.01 {
							return fmt.Errorf("%s: %v B/s for %v IOPS", addr, bw, iops)
						}
						var prev float64
						for _, k := range []string{"latency_p50_us", "latency_p95_us", "latency_p99_us", "latency_p999_us"} {
							v, _ := strconv.ParseFloat(at[k], 64)
							if v <= prev {
								return fmt.Errorf("%s: %s = %v not above %v", addr, k, v, prev)
							}
							prev = v
						}
					}
					return nil
				},
			),
		}},
	})
	runs := fioRuns(e)
	if len(runs) < 4 {
		t.Fatalf("fio ran %d times", len(runs))
	}
	for _, r := range runs {
		for _, want := range []string{"--rw=randwrite", "--bs=4k", "--iodepth=1", "--direct=1", "--sync=1", "--runtime=5", "--time_based",
			"--output-format=json", "--group_reporting", "--size=1g"} {
			if !strings.Contains(r.Line, " "+want) {
				t.Errorf("fio without %s: %s", want, r.Line)
			}
		}
	}
	if got := e.Sim.DiskOverwrites(); len(got) != 0 {
		t.Errorf("overwrote in-use devices: %+v", got)
	}
}

// cephOSD makes /dev/<dev> of node an OSD through the API, as
// pve_ceph_osd would.
func cephOSD(t *testing.T, e *acctest.Env, node, dev string) {
	t.Helper()
	ctx := context.Background()
	c := e.RootClient(t)
	if err := c.InitCeph(ctx, node, pve.CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatal(err)
	}
	if mons, _ := c.CephMons(ctx, node); len(mons) == 0 {
		upid, err := c.CreateCephMon(ctx, node, node)
		if _, err := c.Await(ctx, upid, err); err != nil {
			t.Fatal(err)
		}
	}
	upid, err := c.CreateCephOSD(ctx, node, pve.CephOSDCreateRequest{Dev: dev})
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
}

// In-use devices are refused with what holds them, and fio never touches
// them: the boot disk, an OSD disk (also through its by-id link), a
// partition; with if_in_use = "skip" the OSD disk is left alone quietly.
func TestAccNodeDiskBenchmark_refusesInUse(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	node := e.Node(t, 0)
	cephOSD(t, e, node, "/dev/sdb")
	disks, err := e.Client.Disks(context.Background(), node, false)
	if err != nil {
		t.Fatal(err)
	}
	byID := ""
	for _, d := range disks {
		if d.DevPath == "/dev/sdb" {
			byID = "/dev/disk/by-id/ata-" + d.Model + "_" + d.Serial
		}
	}
	const skip = "data.pve_node_disk_benchmark.skip"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: e.Config(benchDevice("boot", node, "/dev/sda", "")),
				ExpectError: regexp.MustCompile(`(?s)Refusing to benchmark /dev/sda on node ` + node + `: it is in use.*holds\s+/dev/sda1.*/dev/sda2\s+\(part,\s+vfat,\s+mounted\s+at\s+/boot/efi\).*PVE: used by BIOS\s+boot`)},
			{Config: e.Config(benchDevice("osd", node, "/dev/sdb", "")),
				ExpectError: regexp.MustCompile(`(?s)Refusing to benchmark /dev/sdb.*LVM2_member.*ceph_bluestore.*PVE: holds Ceph OSD 0.*destroy`)},
			{Config: e.Config(benchDevice("osd", node, byID, "")),
				ExpectError: regexp.MustCompile(`(?s)Refusing to benchmark /dev/disk/by-id/.*/dev/sdb is in use.*Ceph OSD 0`)},
			{Config: e.Config(benchDevice("part", node, "/dev/sda2", "")),
				ExpectError: regexp.MustCompile(`(?s)/dev/sda2 is /dev/sda2 \(type part\), not a whole disk`)},
			{Config: e.Config(benchDevice("missing", node, "/dev/sdz", "")),
				ExpectError: regexp.MustCompile(`/dev/sdz is not a block device on node ` + node)},
			{Config: e.Config(strings.Replace(benchDevice("unconfirmed", node, "/dev/sdc", ""), "overwrite_device = true", "", 1)),
				ExpectError: regexp.MustCompile(`(?s)Device benchmark not confirmed.*overwrite_device = true`)},
			{Config: e.Config(benchDevice("skip", node, "/dev/sdb", "  if_in_use = \"skip\"\n")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(skip, "skipped", "true"),
					resource.TestMatchResourceAttr(skip, "in_use", regexp.MustCompile(`PVE: holds Ceph OSD 0`)),
					resource.TestCheckNoResourceAttr(skip, "write_iops"),
					resource.TestCheckNoResourceAttr(skip, "fio_command"),
				)},
		},
	})
	if runs := fioRuns(e); len(runs) != 0 {
		t.Errorf("fio ran: %+v", runs)
	}
	if got := e.Sim.DiskOverwrites(); len(got) != 0 {
		t.Errorf("overwrites: %+v", got)
	}
	if loss := e.Sim.CephDataLoss(); len(loss) != 0 {
		t.Errorf("data loss: %v", loss)
	}
}

// A scratch file in a directory: measured and removed; memory and pmxcfs
// are refused; a node without fio says how to get it.
func TestAccNodeDiskBenchmark_scratchFile(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil && os.Getenv("PVE_TEST_DISK_BENCHMARK") == "" {
		t.Skip("runs fio on a node: set PVE_TEST_DISK_BENCHMARK=1 to write a scratch file in /var/lib/vz of the first node")
	}
	node := e.Node(t, 1)
	dir := func(d, extra string) string {
		return fmt.Sprintf("data \"pve_node_disk_benchmark\" \"scratch\" {\n  node      = %q\n  directory = %q\n  runtime   = 5\n%s}\n", node, d, extra)
	}
	const addr = "data.pve_node_disk_benchmark.scratch"
	steps := []resource.TestStep{
		{Config: e.Config(dir("/var/lib/vz", "  jobs = 2\n  size = \"64m\"\n")),
			Check: resource.ComposeAggregateTestCheckFunc(
				between(addr, "write_iops", 1, 1e7),
				resource.TestCheckResourceAttrSet(addr, "latency_p99_us"),
				resource.TestMatchResourceAttr(addr, "filesystem", regexp.MustCompile(`^\S+ on /dev/`)),
				resource.TestMatchResourceAttr(addr, "fio_command", regexp.MustCompile(`--filename=/var/lib/vz/\.pve-disk-benchmark-[0-9a-f]{12}\.fio .*--numjobs=2 .*--size=64m .*--unlink=1`)),
				resource.TestCheckNoResourceAttr(addr, "model"),
			)},
		{Config: e.Config(dir("/etc/pve", "")), ExpectError: regexp.MustCompile(`(?s)/etc/pve on node ` + node + ` is on PVE's cluster\s+filesystem`)},
		{Config: e.Config(dir("/var/lib/vz/does-not-exist", "")), ExpectError: regexp.MustCompile(`directory /var/lib/vz/does-not-exist does not exist on node`)},
		{Config: e.Config(dir("relative/dir", "")), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid directory.*not absolute`)},
		{Config: e.Config(dir("/var/lib/vz", "  block_size = \"3000\"\n")), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid block_size.*multiple of 512`)},
	}
	if e.Sim != nil {
		steps = append(steps, resource.TestStep{
			PreConfig:   func() { e.Sim.SetFioInstalled(node, false) },
			Config:      e.Config(dir("/var/lib/vz", "")),
			ExpectError: regexp.MustCompile(`(?s)fio is not installed on node ` + node + `: install it with\s+.apt install fio`),
		})
	}
	e.Run(t, resource.TestCase{Steps: steps})
	if e.Sim == nil {
		return
	}
	// The scratch files are gone: fio unlinked them and the provider
	// removed them again in any case.
	runs := fioRuns(e)
	if len(runs) == 0 {
		t.Fatal("fio never ran")
	}
	for _, r := range runs {
		file := ""
		for _, a := range r.Argv {
			if strings.HasPrefix(a, "--filename=") {
				file = strings.TrimPrefix(a, "--filename=")
			}
		}
		if _, ok := e.Sim.NodeFile(node, file); ok {
			t.Errorf("scratch file %s left on the node", file)
		}
		removed := false
		for _, c := range e.Sim.SSHCommands() {
			if c.Line == "rm -f -- "+file {
				removed = true
			}
		}
		if !removed {
			t.Errorf("no rm -f -- %s", file)
		}
	}
}

const gateConfig = `
data "pve_node_disk_benchmark" "candidate" {
  node             = %[1]q
  device           = %[2]q
  overwrite_device = true
  runtime          = 10
  if_in_use        = "skip"
}

# Stands in for pve_ceph_osd: the gate is the precondition.
resource "terraform_data" "osd" {
  input = data.pve_node_disk_benchmark.candidate.device

  lifecycle {
    precondition {
      condition     = data.pve_node_disk_benchmark.candidate.skipped || coalesce(data.pve_node_disk_benchmark.candidate.write_iops, 0) >= 2000
      error_message = "${data.pve_node_disk_benchmark.candidate.device} sustains only ${floor(coalesce(data.pve_node_disk_benchmark.candidate.write_iops, 0))} sync-write IOPS; an OSD needs 2000."
    }
  }
}
`

// The example's gate: a QLC NVMe drive cannot become an OSD, a datacenter
// SSD can; once the OSD holds the disk, the skipped benchmark keeps the
// configuration valid and fio never writes the OSD's disk.
func TestAccNodeDiskBenchmark_gatesOSD(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	node := e.Node(t, 2)
	fioOn := func(dev string) int {
		n := 0
		for _, r := range fioRuns(e) {
			if r.Node == node && strings.Contains(r.Line, "--filename="+dev+" ") {
				n++
			}
		}
		return n
	}
	before := 0
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: e.Config(fmt.Sprintf(gateConfig, node, "/dev/nvme0n1")),
				ExpectError: regexp.MustCompile(`(?s)Resource precondition failed.*/dev/nvme0n1 sustains only \d{3} sync-write IOPS; an OSD\s+needs 2000`)},
			{Config: e.Config(fmt.Sprintf(gateConfig, node, "/dev/sdc")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("terraform_data.osd", plancheck.ResourceActionCreate),
				}}},
			// The "OSD" is created on the disk; the next plans skip it.
			{
				PreConfig: func() {
					cephOSD(t, e, node, "/dev/sdc")
					before = fioOn("/dev/sdc")
				},
				Config: e.Config(fmt.Sprintf(gateConfig, node, "/dev/sdc")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.pve_node_disk_benchmark.candidate", "skipped", "true"),
					resource.TestMatchResourceAttr("data.pve_node_disk_benchmark.candidate", "in_use", regexp.MustCompile(`Ceph OSD`)),
				),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
	if after := fioOn("/dev/sdc"); after != before {
		t.Errorf("fio ran on the OSD's disk %d times after the OSD was created", after-before)
	}
	if got := e.Sim.DiskOverwrites(); len(got) != 0 {
		t.Errorf("overwrites: %+v", got)
	}
	if loss := e.Sim.CephDataLoss(); len(loss) != 0 {
		t.Errorf("data loss: %v", loss)
	}
}
