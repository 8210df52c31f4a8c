package adopt_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// The reference lab's Ceph adopted: every object imported, nothing else
// planned, nothing written (steps); the hand-edited ceph.conf sections and
// the config database's leftover become pve_ceph_config, those whose
// daemons restart imported with apply = "rolling_restart".
func TestAccAdoptCeph(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "ceph")
	nodes := a.env.Nodes
	want := map[string]string{
		`pve_ceph_cluster.lab`:               nodes[0],
		`pve_ceph_pool.ceph`:                 nodes[0] + "/ceph",
		`pve_ceph_flags.lab`:                 "cluster",
		`pve_ceph_config.client_conf`:        nodes[0] + "/ceph_conf/client?keys=rbd_cache,rbd_cache_writethrough_until_flush",
		`pve_ceph_config.osd_conf`:           nodes[0] + "/ceph_conf/osd?apply=rolling_restart&keys=bdev_enable_discard,osd_memory_target",
		`pve_ceph_config.osd_db`:             nodes[0] + "/config_db/osd?apply=rolling_restart",
		`pve_ceph_osd.lab["z2g4b/sdc"]`:      "z2g4b/sdc",
		`pve_ceph_install.lab["z2g4c"]`:      "z2g4c",
		`pve_ceph_monitor.lab["z2g4b"]`:      "z2g4b",
		`pve_ceph_manager.lab["z2g4a"]`:      "z2g4a",
		`pve_ceph_osd.lab["z2g4a/sdb"]`:      "z2g4a/sdb",
		`pve_ceph_install.lab["z2g4a"]`:      "z2g4a",
		`pve_ceph_config.global_conf`:        "",
		`pve_ceph_config.mon_z2g4a_conf`:     "",
		`pve_ceph_pool.pool__mgr`:            "",
		`pve_ceph_config.client_crash_conf`:  "",
		`pve_ceph_osd.lab["z2g4a/nvme0n1"]`:  "",
		`pve_ceph_osd.lab["z2g4a/sda"]`:      "",
		`pve_ceph_install.lab["not-a-node"]`: "",
	}
	checkImports(t, a.res, want)
	checkImportCount(t, a.res, 3*3+6+1+1+1+3)
	cephTF := string(a.files["ceph.tf"])
	t.Logf("ceph.tf:\n%s\nskipped: %v", cephTF, a.res.Skipped)
	for _, s := range []string{"depends_on = [pve_ceph_cluster.lab]", "depends_on        = [pve_ceph_osd.lab]", "for_each = local.ceph_osd_lab"} {
		if !strings.Contains(cephTF, s) {
			t.Errorf("ceph.tf lacks %q:\n%s", s, cephTF)
		}
	}
	// The autoscaler owns pg_num (the GUI's default "on").
	if regexp.MustCompile(`(?m)^\s*pg_num\s*=`).MatchString(cephTF) {
		t.Errorf("ceph.tf sets pg_num of an autoscaled pool:\n%s", cephTF)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// The diskless lab: Ceph on the three storage nodes only (no install,
// monitor, manager or OSD on jpl-proxmox6), pool testpool, no hand-edited
// ceph.conf sections (its [client] holds PVE's keyring only).
func TestAccAdoptCeph_diskless(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "diskless", "ceph")
	want := map[string]string{
		`pve_ceph_cluster.lab`:                 "jpl-proxmox7",
		`pve_ceph_pool.testpool`:               "jpl-proxmox7/testpool",
		`pve_ceph_install.lab["jpl-proxmox9"]`: "jpl-proxmox9",
		`pve_ceph_monitor.lab["jpl-proxmox8"]`: "jpl-proxmox8",
		`pve_ceph_manager.lab["jpl-proxmox7"]`: "jpl-proxmox7",
		`pve_ceph_osd.lab["jpl-proxmox7/sdb"]`: "jpl-proxmox7/sdb",
		// [client] holds only the keyring PVE's init wrote.
		`pve_ceph_config.client_conf`:           "",
		`pve_ceph_install.lab["jpl-proxmox6"]`:  "",
		`pve_ceph_monitor.lab["jpl-proxmox6"]`:  "",
		`pve_ceph_manager.lab["jpl-proxmox6"]`:  "",
		`pve_ceph_config.osd_conf`:              "",
		`pve_ceph_config.osd_db`:                "",
		`pve_ceph_osd.lab["jpl-proxmox6/sda"]`:  "",
		`pve_ceph_osd.lab["jpl-proxmox7/sda"]`:  "",
		`pve_ceph_config.global_conf`:           "",
		`pve_ceph_config.mon_jpl_proxmox7_conf`: "",
	}
	t.Logf("ceph.tf:\n%s\nskipped: %v", a.files["ceph.tf"], a.res.Skipped)
	checkImports(t, a.res, want)
	checkImportCount(t, a.res, 3*3+3+2)
	// The provider's endpoint is jpl-proxmox6, which has no Ceph: PVE
	// answers /cluster/ceph/flags there with "binary not installed".
	checkSkipped(t, a.res, "pve_ceph_flags (the cluster's OSD flags)", "", 1)
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// A cluster without Ceph (a fresh install has the Ceph client only)
// adopts nothing: no ceph.tf, no import, and only reads.
func TestAccAdoptCeph_noCeph(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim")
	}
	lab, err := pvesim.ShippedLab("reference")
	if err != nil {
		t.Fatal(err)
	}
	e := acctest.NewWithOptions(t, pvesim.Options{Lab: lab})
	sshFrom := len(e.Sim.SSHCommands())
	res := runAdoption(t, e, true, "ceph")
	// The node (a fresh install is a standalone node) was asked whether
	// it has Ceph's daemons, and nothing else was run.
	cmds := e.Sim.SSHCommands()[sshFrom:]
	if len(cmds) != 1 || !strings.HasPrefix(cmds[0].Line, "dpkg-query ") {
		t.Errorf("SSH commands %v, want one dpkg-query", cmds)
	}
	if len(res.Imports) != 0 || res.Files["ceph.tf"] != nil {
		t.Errorf("adopted from a cluster without Ceph: %v", res.Imports)
	}
}

// After the adoption, the one-line edit of osd_memory_target in the
// generated [osd] pve_ceph_config plans exactly that update, and its apply
// restarts every OSD, one host at a time (ceph.conf is read when a daemon
// starts): what the build log's user forgot to do by hand (issue #12).
func TestAccAdoptCeph_editRestarts(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLabWith(t, "reference", pvesim.Options{CephTimeScale: 10})
	a := adoptEnv(t, e, "ceph")
	line := regexp.MustCompile(`osd_memory_target(\s*)= "8589934592"`)
	if n := len(line.FindAllString(a.config, -1)); n != 1 {
		t.Fatalf("the generated configuration has %d osd_memory_target lines, want 1:\n%s", n, a.config)
	}
	edited := line.ReplaceAllString(a.config, `osd_memory_target$1= "6442450944"`)
	if diff := cephLineDiff(a.config, edited); diff != 1 {
		t.Fatalf("the edit changes %d lines, want 1", diff)
	}
	const addr = "pve_ceph_config.osd_conf"
	steps := a.steps(t)
	var start time.Time
	var confBefore string
	check := func() error {
		if got, want := e.CephRestartsSince(start), []string{"osd.0", "osd.1", "osd.2", "osd.3", "osd.4", "osd.5"}; !reflect.DeepEqual(got, want) {
			return fmt.Errorf("restarted %v, want %v", got, want)
		}
		if n := e.Sim.CephMaxHostsDownAtOnce(); n != 1 {
			return fmt.Errorf("%d hosts had OSDs down at once, want exactly 1 (%v)", n, e.Sim.CephDownHistory())
		}
		if err := e.CheckSafeRestart(); err != nil {
			return err
		}
		// Only that line of ceph.conf changed; the hand comment stays.
		after := cephConfOf(t, e)
		if want := strings.Replace(confBefore, "osd_memory_target = 8589934592", "osd_memory_target = 6442450944", 1); after != want || after == confBefore {
			return fmt.Errorf("ceph.conf after the edit:\n%s\nwant:\n%s", after, want)
		}
		if !strings.Contains(after, "# 8 GiB per OSD") {
			return fmt.Errorf("the hand comment is gone:\n%s", after)
		}
		return nil
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		steps[0], steps[1],
		{
			PreConfig: func() { start, confBefore = time.Now(), cephConfOf(t, e) },
			Config:    edited,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				cephOnlyUpdate{addr: addr, attr: "settings", want: map[string]any{"osd_memory_target": "6442450944", "bdev_enable_discard": "true"}},
			}},
		},
		{
			// Checked here: Check's terraform.State cannot hold for_each keys.
			PreConfig: func() {
				if err := check(); err != nil {
					t.Error(err)
				}
			},
			Config: edited, PlanOnly: true,
		},
		steps[2],
	}})
}

// cephOnlyUpdate passes when the plan updates addr, with attr becoming want,
// and plans nothing else.
type cephOnlyUpdate struct {
	addr, attr string
	want       any
}

func (o cephOnlyUpdate) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	var msgs []string
	seen := false
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Change == nil {
			continue
		}
		if rc.Address != o.addr {
			if !rc.Change.Actions.NoOp() {
				msgs = append(msgs, fmt.Sprintf("%s: %v", rc.Address, rc.Change.Actions))
			}
			continue
		}
		seen = true
		after, _ := rc.Change.After.(map[string]any)
		before, _ := rc.Change.Before.(map[string]any)
		if !rc.Change.Actions.Update() || !reflect.DeepEqual(after[o.attr], o.want) {
			msgs = append(msgs, fmt.Sprintf("%s: %v, %s %v, want an update to %v", o.addr, rc.Change.Actions, o.attr, after[o.attr], o.want))
		}
		for k, v := range after {
			if k != o.attr && k != "pending_restart" && !reflect.DeepEqual(before[k], v) {
				msgs = append(msgs, fmt.Sprintf("%s: %s changes from %v to %v", o.addr, k, before[k], v))
			}
		}
	}
	if !seen {
		msgs = append(msgs, o.addr+" is not in the plan")
	}
	if len(msgs) > 0 {
		resp.Error = fmt.Errorf("want exactly one update:\n%s", strings.Join(msgs, "\n"))
	}
}

// cephLineDiff counts the lines that differ between a and b (same length).
func cephLineDiff(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(al) != len(bl) {
		return -1
	}
	n := 0
	for i := range al {
		if al[i] != bl[i] {
			n++
		}
	}
	return n
}

// cephConfOf is /etc/pve/ceph.conf as PVE's API returns it.
func cephConfOf(t *testing.T, e *acctest.Env) string {
	t.Helper()
	s, err := e.ReadOnlyClient(t).CephConfigRaw(context.Background(), e.Nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Which ceph.conf sections become pve_ceph_config: of [global] (a
// section PVE writes itself, fsid and mon_host included) only the keys set
// by hand, [client.crash] with only its keyring is PVE's, and a
// hand-written [mgr] is adopted with rolling restarts.
func TestAccAdoptCeph_confSections(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	node := e.Nodes[0]
	ex := e.NodeExec(t)
	raw, err := ex.ReadFile(context.Background(), node, "/etc/pve/ceph.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.Replace(string(raw), "[global]\n", "[global]\n\tmon_max_pg_per_osd = 300\n", 1) +
		"[client.crash]\n\tkeyring = /etc/pve/ceph/$cluster.$name.keyring\n[mgr]\n\tmgr_stats_period = 10\n"
	if err := ex.WriteFile(context.Background(), node, nodeexec.File{Path: "/etc/pve/ceph.conf", Mode: 0o640, Owner: "root", Group: "www-data",
		Content: []byte(conf)}); err != nil {
		t.Fatal(err)
	}
	a := adoptEnv(t, e, "ceph")
	t.Logf("ceph.tf:\n%s", a.files["ceph.tf"])
	checkImports(t, a.res, map[string]string{
		`pve_ceph_config.mgr_conf`:          node + "/ceph_conf/mgr?apply=rolling_restart&keys=mgr_stats_period",
		`pve_ceph_config.client_crash_conf`: "",
		`pve_ceph_config.global_conf`:       node + "/ceph_conf/global?apply=rolling_restart&keys=mon_max_pg_per_osd",
	})
	checkImportCount(t, a.res, 3*3+6+1+1+1+5)
	if tf := string(a.files["ceph.tf"]); regexp.MustCompile(`fsid\s*=`).MatchString(tf) || !regexp.MustCompile(`mon_max_pg_per_osd\s*= "300"`).MatchString(tf) {
		t.Errorf("[global] adopted as:\n%s", tf)
	}
	e.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// Without SSH the packages and the configuration sections cannot be read
// (dpkg, ceph.conf, ceph config dump): they are listed as not adopted,
// and the rest is adopted through the API alone.
func TestAccAdoptCeph_noSSH(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	res := runAdoption(t, e, false, "ceph") // checks that it ran no SSH command
	checkImports(t, res, map[string]string{
		`pve_ceph_cluster.lab`:          e.Nodes[0],
		`pve_ceph_install.lab["z2g4a"]`: "",
		`pve_ceph_config.osd_conf`:      "",
	})
	checkImportCount(t, res, 1+3+3+6+1+1)
	checkSkipped(t, res, "pve_ceph_install and pve_ceph_config (ceph.conf, config database)", "", 1)
}

// The consumer lab: an OSD on every data disk (no power-loss-protected
// ones), imported and planned like the others.
func TestAccAdoptCeph_consumer(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "consumer", "ceph")
	t.Logf("ceph.tf:\n%s\nskipped: %v", a.files["ceph.tf"], a.res.Skipped)
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
