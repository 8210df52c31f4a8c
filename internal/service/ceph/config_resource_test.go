package ceph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
	"github.com/pvelab/terraform-provider-pve/internal/service/ceph"
)

// cephConfigEnv builds the reference lab's Ceph through the client: init,
// a monitor and a manager on every node, OSDs on /dev/sdb and /dev/sdc of
// each node (osd.0/1 on z2g4a, osd.2/3 on z2g4b, osd.4/5 on z2g4c) and a
// 64-PG pool with 8 GiB. scale is simulated Ceph seconds per real second
// (restarted OSDs boot in 15 simulated seconds). Against a real cluster
// the tests change Ceph's configuration, which PVE_ACC_CEPH_CONFIG=1
// allows; restarting daemons needs PVE_ACC_CEPH_RESTART=1 as well.
func cephConfigEnv(t *testing.T, scale float64, restarts bool) *acctest.Env {
	t.Helper()
	if acctest.Live() {
		if os.Getenv("PVE_ACC_CEPH_CONFIG") == "" || (restarts && os.Getenv("PVE_ACC_CEPH_RESTART") == "") {
			t.Skip("changes the Ceph configuration (PVE_ACC_CEPH_CONFIG=1) and restarts OSDs host by host (PVE_ACC_CEPH_RESTART=1)")
		}
		return acctest.New(t)
	}
	e := acctest.NewWithOptions(t, pvesim.Options{CephTimeScale: scale})
	root := setupCeph(t, e)
	ctx := context.Background()
	for _, n := range e.Nodes {
		for _, dev := range labDisks {
			upid, err := root.CreateCephOSD(ctx, n, pve.CephOSDCreateRequest{Dev: dev})
			if _, err := root.Await(ctx, upid, err); err != nil {
				t.Fatalf("OSD on %s %s: %v", n, dev, err)
			}
		}
	}
	createPool(t, e, "rbd", 64, 8<<30)
	return e
}

// cephConfigHCL is one pve_ceph_config; extra goes inside the block.
func cephConfigHCL(name, node, who, target string, settings map[string]string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resource \"pve_ceph_config\" %q {\n  node   = %q\n  who    = %q\n", name, node, who)
	if target != "" {
		fmt.Fprintf(&b, "  target = %q\n", target)
	}
	b.WriteString("  settings = {\n")
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    %q = %q\n", k, settings[k])
	}
	b.WriteString("  }\n" + extra + "}\n")
	return b.String()
}

// dumpOf reads `ceph config dump` over SSH: section -> option -> value.
func dumpOf(t *testing.T, ex *nodeexec.Pool, node string) (map[string]map[string]string, error) {
	t.Helper()
	res, err := ex.Run(context.Background(), node, nodeexec.Cmd("ceph", "config", "dump", "--format", "json"))
	if err != nil {
		return nil, err
	}
	var entries []struct{ Section, Name, Value string }
	if err := json.Unmarshal(res.Stdout, &entries); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, e := range entries {
		if out[e.Section] == nil {
			out[e.Section] = map[string]string{}
		}
		out[e.Section][e.Name] = e.Value
	}
	return out, nil
}

// waitOSDUp waits (at most a minute) until the OSD is up in the OSD map.
func waitOSDUp(t *testing.T, e *acctest.Env, node string, id int) {
	t.Helper()
	ex := e.NodeExec(t)
	for deadline := time.Now().Add(time.Minute); ; {
		res, err := ex.Run(context.Background(), node, nodeexec.Cmd("ceph", "osd", "dump", "--format", "json"))
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			OSDs []struct{ OSD, Up int } `json:"osds"`
		}
		if err := json.Unmarshal(res.Stdout, &d); err != nil {
			t.Fatal(err)
		}
		for _, o := range d.OSDs {
			if o.OSD == id && o.Up == 1 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("osd.%d not up after a minute", id)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkDB asserts what Ceph's config database holds for who: each key's
// value, "" meaning the key is absent.
func checkDB(t *testing.T, e *acctest.Env, who string, want map[string]string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		dump, err := dumpOf(t, ex, e.Nodes[1])
		if err != nil {
			return err
		}
		for k, v := range want {
			if got := dump[who][k]; got != v {
				return fmt.Errorf("ceph config dump: %s %s = %q, want %q (section: %v)", who, k, got, v, dump[who])
			}
		}
		return nil
	}
}

// checkConfAPI asserts what PVE's API reads from /etc/pve/ceph.conf
// (GET cfg/value): each key of section, "" meaning absent.
func checkConfAPI(e *acctest.Env, section string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var keys []string
		for k := range want {
			keys = append(keys, section+":"+k)
		}
		sort.Strings(keys)
		vals, err := e.Client.CephConfigValues(context.Background(), e.Nodes[2], keys...)
		if err != nil {
			return err
		}
		for k, v := range want {
			if got := vals[section][k]; got != v {
				return fmt.Errorf("PVE reads [%s] %s = %q from ceph.conf, want %q", section, k, got, v)
			}
		}
		return nil
	}
}

// sshRun runs a command on a node behind Terraform's back.
func sshRun(t *testing.T, e *acctest.Env, node string, args ...string) {
	t.Helper()
	if _, err := e.NodeExec(t).Run(context.Background(), node, nodeexec.Cmd(args[0], args[1:]...)); err != nil {
		t.Fatal(err)
	}
}

const osdAddrCfg = "pve_ceph_config.osd"

// The config database: set, normalized values kept as configured, import,
// drift (changed and removed outside), unset keys removed, and destroy
// removing only the managed keys.
func TestAccCephConfig_configDB(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, false)
	node := e.Node(t, 0)
	cfg := func(settings map[string]string) string {
		return e.Config(cephConfigHCL("osd", node, "osd", "", settings, ""))
	}
	both := cfg(map[string]string{"osd_max_backfills": "2", "osd_memory_target": "8589934592"})
	e.Run(t, resource.TestCase{
		CheckDestroy: checkDB(t, e, "osd", map[string]string{"osd_memory_target": "", "osd_max_backfills": "", "osd_recovery_sleep_hdd": "0.200000"}),
		Steps: []resource.TestStep{
			{
				Config: both,
				Check:  checkDB(t, e, "osd", map[string]string{"osd_max_backfills": "2", "osd_memory_target": "8589934592"}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(osdAddrCfg, tfjsonpath.New("id"), knownvalue.StringExact("config_db/osd")),
					statecheck.ExpectKnownValue(osdAddrCfg, tfjsonpath.New("target"), knownvalue.StringExact("config_db")),
					// Both options are applied at runtime: nothing to restart.
					statecheck.ExpectKnownValue(osdAddrCfg, tfjsonpath.New("pending_restart"), knownvalue.ListSizeExact(0)),
				},
			},
			{ResourceName: osdAddrCfg, ImportState: true, ImportStateId: node + "/config_db/osd", ImportStateVerify: true},
			{
				// 8G is what Ceph stores as 8589934592: the same setting.
				PreConfig: func() {
					if e.Sim != nil {
						e.Sim.ResetSSHCommands()
					}
				},
				Config: cfg(map[string]string{"osd_max_backfills": "2", "osd_memory_target": "8G"}),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(osdAddrCfg, "settings.osd_memory_target", "8G"),
					func(*terraform.State) error {
						if e.Sim == nil {
							return nil
						}
						for _, c := range e.Sim.SSHCommands() {
							if strings.Contains(c.Line, "config set") {
								return fmt.Errorf("an equal value was set again: %q", c.Line)
							}
						}
						return nil
					},
				),
			},
			{
				// Drift: a managed value changed by hand.
				PreConfig:          func() { sshRun(t, e, node, "ceph", "config", "set", "osd", "osd_max_backfills", "5") },
				Config:             cfg(map[string]string{"osd_max_backfills": "2", "osd_memory_target": "8G"}),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: cfg(map[string]string{"osd_max_backfills": "2", "osd_memory_target": "8G"}),
				Check:  checkDB(t, e, "osd", map[string]string{"osd_max_backfills": "2"}),
			},
			{
				// Drift: a managed key removed by hand; an unmanaged key
				// set by hand is no drift.
				PreConfig: func() {
					sshRun(t, e, node, "ceph", "config", "rm", "osd", "osd_memory_target")
					sshRun(t, e, node, "ceph", "config", "set", "osd", "osd_recovery_sleep_hdd", "0.2")
				},
				Config:             cfg(map[string]string{"osd_max_backfills": "2", "osd_memory_target": "8G"}),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A key dropped from settings is removed from Ceph.
				Config: cfg(map[string]string{"osd_memory_target": "8G"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(osdAddrCfg, plancheck.ResourceActionUpdate),
				}},
				Check: checkDB(t, e, "osd", map[string]string{"osd_memory_target": "8589934592", "osd_max_backfills": "", "osd_recovery_sleep_hdd": "0.200000"}),
			},
		},
	})
}

const clientAddr = "pve_ceph_config.client"

// ceph.conf: the reference lab's [client] settings written into the file
// PVE's API reads, every other line (a comment added by hand included)
// kept, drift in the file detected, unset keys removed, PVE's lock
// honoured.
func TestAccCephConfig_cephConf(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, false)
	node := e.Node(t, 0)
	cfg := func(settings map[string]string) string {
		return e.Config(cephConfigHCL("client", node, "client", "ceph_conf", settings, ""))
	}
	lab := cfg(map[string]string{"rbd_cache": "true", "rbd_cache_writethrough_until_flush": "true"})
	ex := e.NodeExec(t)
	confHas := func(want ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			raw, err := e.Client.CephConfigRaw(context.Background(), e.Nodes[1])
			if err != nil {
				return err
			}
			for _, w := range want {
				if !strings.Contains(raw, w) {
					return fmt.Errorf("ceph.conf as PVE serves it lacks %q:\n%s", w, raw)
				}
			}
			return nil
		}
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkConfAPI(e, "client", map[string]string{"rbd_cache": "", "rbd_cache_writethrough_until_flush": "", "keyring": "/etc/pve/priv/$cluster.$name.keyring"}),
			confHas("# placement notes, kept by hand"),
		),
		Steps: []resource.TestStep{
			{
				// A comment someone added by hand.
				PreConfig: func() {
					raw, err := ex.ReadFile(context.Background(), node, "/etc/pve/ceph.conf")
					if err != nil {
						t.Fatal(err)
					}
					err = ex.WriteFile(context.Background(), node, nodeexec.File{Path: "/etc/pve/ceph.conf", Mode: 0o640, Owner: "root", Group: "www-data",
						Content: append([]byte("# placement notes, kept by hand\n"), raw...)})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: lab,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkConfAPI(e, "client", map[string]string{"rbd_cache": "true", "rbd_cache_writethrough_until_flush": "true",
						"keyring": "/etc/pve/priv/$cluster.$name.keyring"}),
					checkConfAPI(e, "global", map[string]string{"public_network": "172.27.2.0/24"}),
					confHas("# placement notes, kept by hand", "\trbd_cache = true\n"),
					// Clients read it when they open an image: no daemon restarts.
					resource.TestCheckResourceAttr(clientAddr, "pending_restart.#", "0"),
				),
			},
			{
				// Import adopts every key of the section (keyring too).
				ResourceName: clientAddr, ImportState: true, ImportStateId: node + "/ceph_conf/client",
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					a := s[0].Attributes
					if a["settings.rbd_cache"] != "true" || a["settings.keyring"] != "/etc/pve/priv/$cluster.$name.keyring" || a["id"] != "ceph_conf/client" {
						return fmt.Errorf("imported %v", a)
					}
					return nil
				},
			},
			{
				// Drift: the file edited by hand.
				PreConfig: func() {
					raw, err := ex.ReadFile(context.Background(), node, "/etc/pve/ceph.conf")
					if err != nil {
						t.Fatal(err)
					}
					edited := strings.Replace(string(raw), "rbd_cache = true", "rbd_cache = false", 1)
					err = ex.WriteFile(context.Background(), node, nodeexec.File{Path: "/etc/pve/ceph.conf", Mode: 0o640, Owner: "root", Group: "www-data",
						Content: []byte(edited)})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:             lab,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: lab,
				Check:  checkConfAPI(e, "client", map[string]string{"rbd_cache": "true"}),
			},
			{
				// While PVE holds its ceph.conf lock the file is not
				// touched; the apply says why.
				PreConfig: func() { sshRun(t, e, node, "mkdir", "/etc/pve/priv/lock/file-ceph_conf") },
				Config:    cfg(map[string]string{"rbd_cache": "true"}),
				ExpectError: regexp.MustCompile(`(?s)Unable to Update Ceph configuration ceph_conf/client.*ceph.conf is locked: ` +
					`/etc/pve/priv/lock/file-ceph_conf has existed`),
			},
			{
				// Unset keys are removed from the file; the rest stays.
				PreConfig: func() { sshRun(t, e, node, "rmdir", "/etc/pve/priv/lock/file-ceph_conf") },
				Config:    cfg(map[string]string{"rbd_cache": "true"}),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkConfAPI(e, "client", map[string]string{"rbd_cache": "true", "rbd_cache_writethrough_until_flush": "",
						"keyring": "/etc/pve/priv/$cluster.$name.keyring"}),
					confHas("# placement notes, kept by hand"),
				),
			},
		},
	})
}

// Values full of shell syntax reach Ceph as they are: one argument to
// `ceph config set`, one line in ceph.conf (comment characters escaped).
func TestAccCephConfig_hostileValues(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, false)
	node := e.Node(t, 0)
	dbValue := "/var/log/ceph/a b; $(touch /tmp/pwned) `id` \"dq\" 'sq' && rm -rf / | cat\nsecond line"
	fileValue := "/var/log/ceph/c d; $(touch /tmp/pwned) `id` \"dq\" 'sq' # not a comment"
	config := e.Config(
		cephConfigHCL("db", node, "client.hostile", "", map[string]string{"log_file": dbValue}, ""),
		cephConfigHCL("file", node, "client.hostile", "ceph_conf", map[string]string{"log_file": fileValue}, ""),
	)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			// A line break cannot go into ceph.conf: refused at plan.
			{
				Config:   e.Config(cephConfigHCL("file", node, "client.hostile", "ceph_conf", map[string]string{"log_file": "a\nb"}, "")),
				PlanOnly: true, ExpectError: errorRE(`(?s)Invalid value for ceph.conf.*contains a line break`),
			},
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkDB(t, e, "client.hostile", map[string]string{"log_file": dbValue}),
					checkConfAPI(e, "client.hostile", map[string]string{"log_file": fileValue}),
					func(*terraform.State) error {
						if e.Sim == nil {
							return nil
						}
						for _, c := range e.Sim.SSHCommands() {
							if len(c.Argv) > 2 && c.Argv[0] == "ceph" && c.Argv[1] == "config" && c.Argv[2] == "set" {
								if len(c.Argv) != 6 || c.Argv[5] != dbValue {
									return fmt.Errorf("ceph config set got argv %q", c.Argv)
								}
								return nil
							}
						}
						return fmt.Errorf("no ceph config set among %d commands", len(e.Sim.SSHCommands()))
					},
				),
			},
		},
	})
}

// Refusals: at plan time for what the provider knows (osd_memory_target
// below 896 MiB, option names, sections, SSH), and Ceph's own refusals with
// its text for the rest (ranges of other options, unknown options, bad
// booleans). Ceph's refusal of a small osd_memory_target itself is tested
// in pvesim (TestSSHCephConfig).
func TestAccCephConfig_errors(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, false)
	node := e.Node(t, 0)
	one := func(who, key, value string) string {
		return e.Config(cephConfigHCL("osd", node, who, "", map[string]string{key: value}, ""))
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: one("osd", "osd_memory_target", "512M"), PlanOnly: true,
				ExpectError: errorRE(`(?s)Invalid Ceph option value.*Ceph refuses osd_memory_target below 939524096 \(896 MiB\): "512M" is 536870912 bytes`)},
			{Config: one("osd", "bdev_enable_discard", "yes"), PlanOnly: true,
				ExpectError: errorRE(`(?s)bdev_enable_discard is a boolean: use true or false, not "yes"`)},
			{Config: one("osd", "osd memory target", "8G"), PlanOnly: true,
				ExpectError: errorRE(`(?s)Invalid Ceph option name.*use lower case and underscores.*\(write osd_memory_target\)`)},
			{Config: one("osds", "osd_max_backfills", "2"), PlanOnly: true,
				ExpectError: errorRE(`(?s)Attribute who must be global, mon, mgr, osd, mds or client`)},
			{Config: e.ProviderConfigWithoutSSH(t) + cephConfigHCL("osd", node, "osd", "", map[string]string{"osd_max_backfills": "2"}, ""),
				PlanOnly: true, ExpectError: errorRE(`(?s)pve_ceph_config needs SSH access to the nodes`)},
			// The provider checks osd_memory_target again when the value
			// is known only at apply.
			{
				Config: e.Config(`
resource "pve_ceph_config" "osd" {
  node     = "` + node + `"
  who      = "osd"
  settings = { osd_memory_target = "${substr(timestamp(), 0, 0)}512M" }
}
`),
				ExpectError: errorRE(`(?s)Ceph refuses osd_memory_target below 939524096`),
			},
			// Ceph's own refusals, with its text, for what the provider
			// does not check itself.
			{Config: one("osd", "osd_scrub_begin_hour", "24"),
				ExpectError: errorRE(`(?s)Unable to Create Ceph configuration config_db/osd.*Error EINVAL: error parsing value: Value '24' exceeds maximum 23`)},
			{Config: one("osd", "osd_memory_targett", "8G"),
				ExpectError: errorRE(`(?s)Unable to Create Ceph configuration config_db/osd.*Error EINVAL: unrecognized config option 'osd_memory_targett'`)},
			{Config: one("osd", "osd_crush_update_on_start", "maybe"),
				ExpectError: errorRE(`(?s)Error EINVAL: error parsing value: Expected option value to be integer, got\s+'maybe'`)},
		},
	})
	if e.Sim != nil {
		if db := e.Sim.CephConfigDB(); len(db["osd"]) != 0 {
			t.Errorf("refused settings left in the config database: %v", db)
		}
	}
}

// safeRestart is acctest's CheckSafeRestart as a TestCheckFunc.
func safeRestart(e *acctest.Env, downWithoutNoout ...string) resource.TestCheckFunc {
	return func(*terraform.State) error { return e.CheckSafeRestart(downWithoutNoout...) }
}

// The reference lab's Ceph settings: [client] in ceph.conf, [osd] in the
// config database with a rolling restart because bdev_enable_discard is
// read only when an OSD starts. Every OSD restarts, one host at a time.
func TestAccCephConfig_referenceLab(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	node := e.Node(t, 0)
	start := time.Now()
	osd := func(discard, apply string) string {
		return cephConfigHCL("osd", node, "osd", "", map[string]string{"osd_memory_target": "8589934592", "bdev_enable_discard": discard},
			fmt.Sprintf("  apply = %q\n", apply))
	}
	client := cephConfigHCL("client", node, "client", "ceph_conf", map[string]string{"rbd_cache": "true", "rbd_cache_writethrough_until_flush": "true"}, "")
	var afterFirst time.Time
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(client, osd("true", "rolling_restart")),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkDB(t, e, "osd", map[string]string{"osd_memory_target": "8589934592", "bdev_enable_discard": "true"}),
					checkConfAPI(e, "client", map[string]string{"rbd_cache": "true", "rbd_cache_writethrough_until_flush": "true"}),
					resource.TestCheckResourceAttr(osdAddrCfg, "pending_restart.#", "0"),
					safeRestart(e),
					func(*terraform.State) error {
						afterFirst = time.Now()
						if e.Sim == nil {
							return nil
						}
						if got, want := e.CephRestartsSince(start), []string{"osd.0", "osd.1", "osd.2", "osd.3", "osd.4", "osd.5"}; !reflect.DeepEqual(got, want) {
							return fmt.Errorf("restarted %v, want %v", got, want)
						}
						if n := e.Sim.CephMaxHostsDownAtOnce(); n != 1 {
							return fmt.Errorf("%d hosts had OSDs down at once, want exactly 1 (%v)", n, e.Sim.CephDownHistory())
						}
						return nil
					},
				),
			},
			{
				// Without rolling_restart the change waits for the operator.
				Config: e.Config(client, osd("false", "none")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(osdAddrCfg, tfjsonpath.New("pending_restart"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("osd.0"), knownvalue.StringExact("osd.1"), knownvalue.StringExact("osd.2"),
						knownvalue.StringExact("osd.3"), knownvalue.StringExact("osd.4"), knownvalue.StringExact("osd.5"),
					})),
				},
				Check: func(*terraform.State) error {
					if e.Sim != nil && len(e.CephRestartsSince(afterFirst)) > 0 {
						return fmt.Errorf("apply = none restarted %v", e.CephRestartsSince(afterFirst))
					}
					return nil
				},
			},
			{
				// An OSD restarted by hand no longer waits.
				PreConfig: func() {
					sshRun(t, e, "z2g4c", "ceph", "osd", "set-group", "noout", "z2g4c")
					sshRun(t, e, "z2g4c", "systemctl", "restart", "ceph-osd@5")
					if e.Sim != nil {
						e.Sim.CephAdvance(time.Minute)
					}
					// noout stays until the OSD is back, as an operator
					// does (a real OSD takes seconds to boot; make testlab)
					waitOSDUp(t, e, "z2g4c", 5)
					sshRun(t, e, "z2g4c", "ceph", "osd", "unset-group", "noout", "z2g4c")
				},
				Config: e.Config(client, osd("false", "none")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(osdAddrCfg, tfjsonpath.New("pending_restart"), knownvalue.ListSizeExact(5)),
				},
			},
			{
				// Switching to rolling_restart restarts what is pending.
				Config: e.Config(client, osd("false", "rolling_restart")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(osdAddrCfg, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(osdAddrCfg, "pending_restart.#", "0"),
					safeRestart(e),
				),
			},
		},
	})
}

// A restart that fails on the second host stops there, leaves noout
// cleared and the remaining OSDs pending; the next apply continues with
// them and restarts nothing twice.
func TestAccCephConfig_rollingRestartFailure(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	if e.Sim == nil {
		t.Skip("makes an OSD fail to start in the simulator")
	}
	node := e.Node(t, 0)
	cfg := func(settings map[string]string) string {
		return e.Config(cephConfigHCL("osd", node, "osd", "", settings, "  apply = \"rolling_restart\"\n"))
	}
	var failedAt time.Time
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg(map[string]string{"osd_memory_target": "8589934592"})},
			{
				PreConfig: func() {
					e.Sim.SetCephDaemonFailStart("osd.2", true) // z2g4b, the second host
				},
				Config: cfg(map[string]string{"osd_memory_target": "8589934592", "bdev_enable_discard": "true"}),
				ExpectError: errorRE(`(?s)Unable to Update Ceph configuration config_db/osd.*the rolling restart stopped \(still to restart: ` +
					`osd.2, osd.3, osd.4, osd.5; the next apply continues\).*ceph-osd@2.service failed`),
			},
			{
				// The operator repairs osd.2 and starts it.
				PreConfig: func() {
					failedAt = time.Now()
					if got := e.CephRestartsSince(time.Time{}); !reflect.DeepEqual(got, []string{"osd.0", "osd.1"}) {
						t.Errorf("before the failure restarted %v, want osd.0 and osd.1", got)
					}
					if v := e.Sim.CephNooutSet(); len(v) > 0 {
						t.Errorf("noout left set after the failure: %v", v)
					}
					if n := e.Sim.CephMaxHostsDownAtOnce(); n != 1 {
						t.Errorf("%d hosts down at once: %v", n, e.Sim.CephDownHistory())
					}
					e.Sim.SetCephDaemonFailStart("osd.2", false)
					sshRun(t, e, "z2g4b", "systemctl", "start", "ceph-osd@2")
					e.Sim.CephAdvance(time.Minute)
				},
				Config: cfg(map[string]string{"osd_memory_target": "8589934592", "bdev_enable_discard": "true"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(osdAddrCfg, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(osdAddrCfg, "pending_restart.#", "0"),
					// osd.2 stayed down after its failed start, and the restart
					// cleared the noout it had set, as it must.
					safeRestart(e, "osd.2"),
					func(*terraform.State) error {
						if got := e.CephRestartsSince(failedAt); !reflect.DeepEqual(got, []string{"osd.2", "osd.3", "osd.4", "osd.5"}) {
							return fmt.Errorf("the second apply restarted %v, want osd.2 (by hand) and osd.3, osd.4, osd.5", got)
						}
						return nil
					},
				),
			},
		},
	})
}

// The restart's cleanup runs when the apply is cancelled mid-way (a fresh
// context clears noout), and without osd set-group the cluster-wide noout
// is used and cleared.
func TestRollingRestartCleanup(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, true) // frozen clock: restarted OSDs stay down until CephAdvance
	if e.Sim == nil {
		t.Skip("freezes the simulator's Ceph clock")
	}
	ex := e.NodeExec(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := ceph.RollingRestart(ctx, ex, "z2g4a", [][3]string{{"osd", "0", "z2g4a"}, {"osd", "1", "z2g4a"}, {"osd", "2", "z2g4b"}}, false)
	if err == nil || !strings.Contains(err.Error(), "cancelled while waiting for osd.0, osd.1 on z2g4a to come up") {
		t.Fatalf("cancelled restart: %v", err)
	}
	if v := e.Sim.CephNooutSet(); len(v) > 0 {
		t.Errorf("noout left set after cancel: %v", v)
	}
	if got := e.CephRestartsSince(time.Time{}); !reflect.DeepEqual(got, []string{"osd.0", "osd.1"}) {
		t.Errorf("restarted %v", got)
	}
	e.Sim.CephAdvance(time.Minute)

	e.Sim.SetCephSetGroupSupported(false)
	var nooutDuring []string
	done := make(chan error, 1)
	go func() {
		done <- ceph.RollingRestart(context.Background(), ex, "z2g4a", [][3]string{{"osd", "4", "z2g4c"}}, true)
	}()
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			break wait
		case <-time.After(20 * time.Millisecond):
			if v := e.Sim.CephNooutSet(); len(v) > 0 {
				nooutDuring = v
			}
			e.Sim.CephAdvance(10 * time.Second) // let osd.4 boot and recover
		}
	}
	if !reflect.DeepEqual(nooutDuring, []string{"cluster"}) {
		t.Errorf("noout during the restart without set-group: %v", nooutDuring)
	}
	if v := e.Sim.CephNooutSet(); len(v) > 0 {
		t.Errorf("noout left set: %v", v)
	}
	e.Sim.SetCephSetGroupSupported(true)
}

// The restart refuses to start on HEALTH_ERR or with flags that keep OSDs
// from booting or recovering, and stops when HEALTH_ERR appears mid-way,
// clearing the noout it set.
func TestRollingRestartHealthGate(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, true)
	if e.Sim == nil {
		t.Skip("raises HEALTH_ERR in the simulator")
	}
	ex := e.NodeExec(t)
	ctx := context.Background()
	all := [][3]string{{"osd", "0", "z2g4a"}, {"osd", "2", "z2g4b"}}

	e.Sim.SetCephHealthError("OSD_SCRUB_ERRORS", "1 scrub errors")
	err := ceph.RollingRestart(ctx, ex, "z2g4a", all, false)
	if err == nil || !strings.Contains(err.Error(), "Ceph reports HEALTH_ERR:\n  - OSD_SCRUB_ERRORS: HEALTH_ERR: 1 scrub errors") {
		t.Errorf("restart on HEALTH_ERR: %v", err)
	}
	e.Sim.SetCephHealthError("OSD_SCRUB_ERRORS", "")

	sshRun(t, e, "z2g4a", "ceph", "osd", "set", "norecover")
	err = ceph.RollingRestart(ctx, ex, "z2g4a", all, false)
	if err == nil || !strings.Contains(err.Error(), "while the OSD flag(s) norecover are set") {
		t.Errorf("restart with norecover: %v", err)
	}
	sshRun(t, e, "z2g4a", "ceph", "osd", "unset", "norecover")
	if got := e.CephRestartsSince(time.Time{}); len(got) > 0 {
		t.Fatalf("refused restarts restarted %v", got)
	}

	// HEALTH_ERR while z2g4a's OSD boots: the restart stops there.
	done := make(chan error, 1)
	go func() { done <- ceph.RollingRestart(ctx, ex, "z2g4a", all, false) }()
	for {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "while waiting for osd.0 on z2g4a to come up: the rolling restart stops: Ceph reports HEALTH_ERR") {
				t.Errorf("HEALTH_ERR mid-way: %v", err)
			}
			if got := e.CephRestartsSince(time.Time{}); !reflect.DeepEqual(got, []string{"osd.0"}) {
				t.Errorf("restarted %v, want only osd.0", got)
			}
			if v := e.Sim.CephNooutSet(); len(v) > 0 {
				t.Errorf("noout left set: %v", v)
			}
			return
		case <-time.After(10 * time.Millisecond):
			if v := e.Sim.CephNooutSet(); len(v) > 0 {
				e.Sim.SetCephHealthError("PG_DAMAGED", "Possible data damage: 1 pg inconsistent")
			}
		}
	}
}

// While the restart waits for the PGs to be clean again, the health that
// came with `ceph status` is its HEALTH_ERR gate: HEALTH_ERR there stops
// the restart without a second `ceph health` per poll.
func TestRollingRestartHealthGateWhileClean(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	if e.Sim == nil {
		t.Skip("fakes ceph status in the simulator")
	}
	// The restart's first ceph status is the wait after z2g4a's OSD is up
	// again: one PG turned inconsistent meanwhile.
	e.Sim.InjectSSHFault(pvesim.SSHFault{Program: "ceph", Args: "status --format json", Count: 1, Answer: &pvesim.SSHAnswer{
		Stdout: `{"health":{"status":"HEALTH_ERR","checks":{"PG_DAMAGED":{"severity":"HEALTH_ERR",` +
			`"summary":{"message":"Possible data damage: 1 pg inconsistent","count":1},"muted":false}},"mutes":[]},` +
			`"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":63},{"state_name":"active+clean+inconsistent","count":1}],"num_pgs":64}}`,
	}})
	e.Sim.ResetSSHCommands()
	err := ceph.RollingRestart(context.Background(), e.NodeExec(t), "z2g4a", [][3]string{{"osd", "0", "z2g4a"}, {"osd", "2", "z2g4b"}}, true)
	want := "while waiting for all placement groups to be active+clean: the rolling restart stops: Ceph reports HEALTH_ERR:\n" +
		"  - PG_DAMAGED: HEALTH_ERR: Possible data damage: 1 pg inconsistent"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("HEALTH_ERR while waiting for clean PGs: %v, want %q", err, want)
	}
	if got := e.CephRestartsSince(time.Time{}); !reflect.DeepEqual(got, []string{"osd.0"}) {
		t.Errorf("restarted %v, want only osd.0", got)
	}
	var after []string
	seen := false
	for _, c := range e.Sim.SSHCommands() {
		if strings.HasPrefix(c.Line, "ceph status") {
			seen = true
		} else if seen {
			after = append(after, c.Line)
		}
	}
	if !seen || len(after) > 0 {
		t.Errorf("after ceph status (seen %v) the restart ran %q, want nothing", seen, after)
	}
}

// Options monitors and managers read at start: each monitor restarts only
// while the other two keep the quorum, then each manager; OSDs are left
// alone.
func TestAccCephConfig_monitorsAndManagers(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	node := e.Node(t, 1)
	start := time.Now()
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: e.Config(cephConfigHCL("global", node, "global", "", map[string]string{"mon_compact_on_start": "true", "mgr_standby_modules": "false"},
				"  apply = \"rolling_restart\"\n")),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("pve_ceph_config.global", "pending_restart.#", "0"),
				checkDB(t, e, "global", map[string]string{"mon_compact_on_start": "true", "mgr_standby_modules": "false"}),
				func(*terraform.State) error {
					if e.Sim == nil {
						return nil
					}
					want := []string{"mgr.z2g4a", "mgr.z2g4b", "mgr.z2g4c", "mon.z2g4a", "mon.z2g4b", "mon.z2g4c"}
					if got := e.CephRestartsSince(start); !reflect.DeepEqual(got, want) {
						return fmt.Errorf("restarted %v, want %v", got, want)
					}
					if n := e.Sim.CephMaxMonsDownAtOnce(); n != 1 {
						return fmt.Errorf("%d monitors down at once", n)
					}
					return nil
				},
			),
		}},
	})
}
