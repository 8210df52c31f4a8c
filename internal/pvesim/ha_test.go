package pvesim

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func haSim(t *testing.T, release string) (*Sim, *client) {
	t.Helper()
	s, info := startSim(t, Options{ClusterName: "lab", NoSSH: true, PVERelease: release})
	s.CreateTestVM("z2g4b", 100, "vm100")
	s.CreateTestVM("z2g4c", 101, "vm101")
	return s, newClient(t, info, "")
}

func wantDie(t *testing.T, r resp, msg string) {
	t.Helper()
	if r.status != 500 || strings.TrimSuffix(r.msg(), "\n") != msg {
		t.Fatalf("got %d %q, want 500 %q", r.status, r.msg(), msg)
	}
}

// A resource's lifecycle: the CRM starts the guest for `started`, stops
// it for `stopped`; GET shows what was set, not defaults; delete leaves the
// guest as it is.
func TestHAResourceLifecycle(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			s, c := haSim(t, rel)
			c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"100"}, "state": {"started"}, "max_restart": {"2"}, "comment": {"web"}})
			if st, node := s.GuestStatus(100); st != "running" || node != "z2g4b" {
				t.Fatalf("guest after create: %s on %s, want running on z2g4b", st, node)
			}
			got := c.ok("GET", "/cluster/ha/resources/vm:100", nil).data().(map[string]any)
			if got["sid"] != "vm:100" || got["type"] != "vm" || got["state"] != "started" || got["max_restart"] != float64(2) || got["comment"] != "web" {
				t.Fatalf("read: %v", got)
			}
			if _, ok := got["max_relocate"]; ok {
				t.Fatalf("unset max_relocate returned: %v", got)
			}
			digest, _ := got["digest"].(string)
			if len(digest) != 40 {
				t.Fatalf("digest %q", digest)
			}
			// The VMID shortcut reads the same resource.
			if got := c.ok("GET", "/cluster/ha/resources/100", nil).data().(map[string]any); got["sid"] != "vm:100" {
				t.Fatalf("read by vmid: %v", got)
			}
			rows := c.ok("GET", "/cluster/resources", url.Values{"type": {"vm"}}).data().([]any)
			if len(rows) != 2 || rows[0].(map[string]any)["hastate"] != "started" || rows[1].(map[string]any)["hastate"] != nil {
				t.Fatalf("cluster resources: %v", rows)
			}

			c.ok("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"stopped"}, "delete": {"comment"}, "digest": {digest}})
			if st, _ := s.GuestStatus(100); st != "stopped" {
				t.Fatalf("guest after stopped: %s", st)
			}
			got = c.ok("GET", "/cluster/ha/resources/vm:100", nil).data().(map[string]any)
			if got["state"] != "stopped" || got["comment"] != nil || got["digest"] == digest {
				t.Fatalf("after update: %v", got)
			}
			// The old digest is stale now.
			wantDie(t, c.do("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"started"}, "digest": {digest}}),
				"update resources config failed: detected modified configuration - file changed by other user? Try again.")

			cur := c.ok("GET", "/cluster/ha/status/current", nil).data().([]any)
			var svc map[string]any
			for _, e := range cur {
				if m := e.(map[string]any); m["id"] == "service:vm:100" {
					svc = m
				}
			}
			if svc == nil || svc["request_state"] != "stopped" || svc["state"] != "stopped" || svc["node"] != "z2g4b" || svc["max_relocate"] != float64(1) {
				t.Fatalf("status current: %v", cur)
			}

			c.ok("DELETE", "/cluster/ha/resources/vm:100", nil)
			wantDie(t, c.do("GET", "/cluster/ha/resources/vm:100", nil), "no such resource 'vm:100'")
			wantDie(t, c.do("DELETE", "/cluster/ha/resources/vm:100", nil), "cannot delete service 'vm:100', not HA managed!")
			if rows := c.ok("GET", "/cluster/resources", url.Values{"type": {"vm"}}).data().([]any); rows[0].(map[string]any)["hastate"] != nil {
				t.Fatalf("hastate after delete: %v", rows)
			}
		})
	}
}

// PVE's refusals, with its texts.
func TestHAResourceErrors(t *testing.T) {
	_, c := haSim(t, "9.1")
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"999"}}), "unable to detect SID from VMID - VM/CT 999 does not exist")
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:999"}}), "resource 'vm:999' does not exist in cluster")
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"ct:100"}}), "resource 'ct:100' - guest with ID 100 is not a CT")
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "type": {"ct"}}), "types does not match")
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "group": {"g1"}}),
		"invalid parameter 'group': ha groups have been migrated to rules")
	if r := c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm 100"}}); r.status != 400 || !strings.Contains(r.errs()["sid"].(string), "value does not look like a valid ha resource id") {
		t.Fatalf("bad sid: %d %v", r.status, r.env)
	}
	if r := c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "max_restart": {"-1"}}); r.status != 400 || r.errs()["max_restart"] != "value must have a minimum value of 0" {
		t.Fatalf("max_restart -1: %d %v", r.status, r.env)
	}
	c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}})
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"100"}}), "create resource failed: resource ID 'vm:100' already defined")
	wantDie(t, c.do("PUT", "/cluster/ha/resources/vm:101", url.Values{"state": {"stopped"}}), "update resources config failed: no such resource 'vm:101'")
	wantDie(t, c.do("PUT", "/cluster/ha/resources/vm:100", url.Values{"delete": {"nodes"}}), "update resources config failed: no such option 'nodes'")
	// No state set: the CRM treats it as started.
	got := c.ok("GET", "/cluster/ha/resources/vm:100", nil).data().(map[string]any)
	if _, ok := got["state"]; ok {
		t.Fatalf("state not set but returned: %v", got)
	}
	ms := c.ok("GET", "/cluster/ha/status/manager_status", nil).data().(map[string]any)
	ss := ms["manager_status"].(map[string]any)["service_status"].(map[string]any)
	if e := ss["vm:100"].(map[string]any); e["state"] != "started" || e["node"] != "z2g4b" {
		t.Fatalf("manager status: %v", ms)
	}
	// ignored: the CRM forgets the service; /cluster/resources shows the
	// configured state.
	c.ok("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"ignored"}})
	if rows := c.ok("GET", "/cluster/resources", url.Values{"type": {"vm"}}).data().([]any); rows[0].(map[string]any)["hastate"] != "ignored" {
		t.Fatalf("hastate of an ignored resource: %v", rows)
	}
	ms = c.ok("GET", "/cluster/ha/status/manager_status", nil).data().(map[string]any)
	if _, ok := ms["manager_status"].(map[string]any)["service_status"].(map[string]any)["vm:100"]; ok {
		t.Fatalf("ignored resource still in service status: %v", ms)
	}
}

// 8.4 has groups; 9.1 migrated them to rules and refuses every groups call.
func TestHAGroups(t *testing.T) {
	t.Run("8.4", func(t *testing.T) {
		_, c := haSim(t, "8.4")
		c.ok("POST", "/cluster/ha/groups", url.Values{"group": {"prefer_b"}, "nodes": {"z2g4b:2,z2g4a"}, "restricted": {"1"}})
		g := c.ok("GET", "/cluster/ha/groups/prefer_b", nil).data().(map[string]any)
		if g["nodes"] != "z2g4a,z2g4b:2" || g["restricted"] != float64(1) || g["type"] != "group" || g["group"] != "prefer_b" {
			t.Fatalf("group: %v", g)
		}
		wantDie(t, c.do("POST", "/cluster/ha/groups", url.Values{"group": {"prefer_b"}, "nodes": {"z2g4a"}}), "create ha group failed: ha group ID 'prefer_b' already defined")
		wantDie(t, c.do("PUT", "/cluster/ha/resources/vm:100", url.Values{"group": {"nope"}}), "HA group 'nope' does not exist")
		c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "group": {"prefer_b"}})
		wantDie(t, c.do("DELETE", "/cluster/ha/groups/prefer_b", nil), "delete ha group failed: ha group is used by service 'vm:100'")
		// A resource may name a group that does not exist; the list flags it.
		c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:101"}, "group": {"gone"}})
		list := c.ok("GET", "/cluster/ha/resources", nil).data().([]any)
		if e := list[1].(map[string]any); e["sid"] != "vm:101" || e["errors"].(map[string]any)["group"] != "group 'gone' does not exist" {
			t.Fatalf("list: %v", list)
		}
		if r := c.do("GET", "/cluster/ha/rules", nil); r.status != 501 {
			t.Fatalf("rules on 8.4: %d", r.status)
		}
		if r := c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "failback": {"0"}}); r.status != 400 {
			t.Fatalf("failback on 8.4: %d", r.status)
		}
	})
	t.Run("9.1", func(t *testing.T) {
		_, c := haSim(t, "9.1")
		wantDie(t, c.do("GET", "/cluster/ha/groups", nil), "cannot index groups: ha groups have been migrated to rules")
		wantDie(t, c.do("POST", "/cluster/ha/groups", url.Values{"group": {"g1"}, "nodes": {"z2g4a"}}), "cannot create group: ha groups have been migrated to rules")
	})
}

func TestHARules(t *testing.T) {
	_, c := haSim(t, "9.1")
	wantDie(t, c.do("POST", "/cluster/ha/rules", url.Values{"rule": {"r1"}, "type": {"node-affinity"}, "resources": {"vm:100"}, "nodes": {"z2g4a"}}),
		"create ha rule failed: cannot use unmanaged resource(s) vm:100.")
	c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}})
	c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:101"}})
	wantDie(t, c.do("POST", "/cluster/ha/rules", url.Values{"rule": {"r1"}, "type": {"node-affinity"}, "resources": {"vm:100"}, "nodes": {"z2g4x"}}),
		"create ha rule failed: cannot use non-existent node(s) z2g4x.")
	wantDie(t, c.do("POST", "/cluster/ha/rules", url.Values{"rule": {"r1"}, "type": {"node-affinity"}, "resources": {"vm:100"}}),
		"missing value for required option 'nodes'")
	wantDie(t, c.do("POST", "/cluster/ha/rules", url.Values{"rule": {"r1"}, "type": {"resource-affinity"}, "resources": {"vm:100,vm:101"}, "affinity": {"negative"}, "strict": {"1"}}),
		"unexpected property 'strict'")
	c.ok("POST", "/cluster/ha/rules", url.Values{"rule": {"r1"}, "type": {"node-affinity"}, "resources": {"vm:100"}, "nodes": {"z2g4b:2,z2g4a"}, "strict": {"1"}})
	r := c.ok("GET", "/cluster/ha/rules/r1", nil).data().(map[string]any)
	if r["nodes"] != "z2g4a,z2g4b:2" || r["strict"] != float64(1) || r["resources"] != "vm:100" || r["order"] != float64(1) || r["type"] != "node-affinity" {
		t.Fatalf("rule: %v", r)
	}
	// A resource in two node-affinity rules is infeasible.
	rr := c.do("POST", "/cluster/ha/rules", url.Values{"rule": {"r2"}, "type": {"node-affinity"}, "resources": {"vm:100"}, "nodes": {"z2g4c"}})
	if rr.status != 400 || rr.msg() != "Rule 'r2' is invalid.\n" && rr.msg() != "Rule 'r2' is invalid." || rr.errs()["resources"] != "resource 'vm:100' is already used in another node affinity rule" {
		t.Fatalf("second node-affinity rule: %d %v", rr.status, rr.env)
	}
	c.ok("POST", "/cluster/ha/rules", url.Values{"rule": {"apart"}, "type": {"resource-affinity"}, "resources": {"vm:101,vm:100"}, "affinity": {"negative"}})
	if list := c.ok("GET", "/cluster/ha/rules", url.Values{"resource": {"vm:101"}}).data().([]any); len(list) != 1 || list[0].(map[string]any)["rule"] != "apart" {
		t.Fatalf("rules of vm:101: %v", list)
	}
	c.ok("PUT", "/cluster/ha/rules/r1", url.Values{"type": {"node-affinity"}, "delete": {"strict"}})
	if r := c.ok("GET", "/cluster/ha/rules/r1", nil).data().(map[string]any); r["strict"] != nil {
		t.Fatalf("strict after delete: %v", r)
	}
	// Deleting a resource purges it from rules; a rule left empty goes.
	c.ok("DELETE", "/cluster/ha/resources/vm:100", nil)
	wantDie(t, c.do("GET", "/cluster/ha/rules/r1", nil), "no such ha rule 'r1'")
	a := c.ok("GET", "/cluster/ha/rules/apart", nil).data().(map[string]any)
	if a["resources"] != "vm:101" || a["errors"].(map[string]any)["resources"].([]any)[0] != "rule is ineffective as there are less than two resources" {
		t.Fatalf("apart after purge: %v", a)
	}
}

// With a CRM that takes its time, the status shows PVE's fast feedback
// (starting, stopping) while the guest is unchanged, then the result.
func TestHACRMDelayAndErrorState(t *testing.T) {
	s, c := haSim(t, "9.1")
	s.SetHACRMDelay(time.Hour)
	c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}})
	svc := func() map[string]any {
		for _, e := range c.ok("GET", "/cluster/ha/status/current", nil).data().([]any) {
			if m := e.(map[string]any); m["sid"] == "vm:100" {
				return m
			}
		}
		t.Fatal("no service entry")
		return nil
	}
	// The CRM takes a new resource up at its next round: queued until then.
	if e := svc(); e["state"] != "queued" || e["crm_state"] != nil || e["request_state"] != "started" {
		t.Fatalf("new resource before the CRM's round: %v", e)
	}
	if st, _ := s.GuestStatus(100); st != "stopped" {
		t.Fatalf("guest started before the CRM acted: %s", st)
	}
	s.SetHACRMDelay(0)
	if e := svc(); e["state"] != "started" {
		t.Fatalf("after the CRM acted: %v", e)
	}
	s.SetHACRMDelay(time.Hour)
	c.ok("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"stopped"}})
	if e := svc(); e["state"] != "stopping" {
		t.Fatalf("pending stop: %v", e)
	}
	s.SetHACRMDelay(0)
	if st, _ := s.GuestStatus(100); st != "stopped" {
		t.Fatalf("guest after stop: %s", st)
	}

	// A start that fails ends in the error state, which only disabled
	// clears.
	s.SetHAStartFails(100)
	c.ok("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"started"}})
	if e := svc(); e["state"] != "error" {
		t.Fatalf("failed start: %v", e)
	}
	wantDie(t, c.do("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"stopped"}}), "service 'vm:100' in error state, must be disabled and fixed first")
	c.ok("PUT", "/cluster/ha/resources/vm:100", url.Values{"state": {"disabled"}})
	if e := svc(); e["state"] != "disabled" || e["crm_state"] != "stopped" {
		t.Fatalf("after disabled: %v", e)
	}
}

// The helpers the VM handlers use: hastart/hastop go through the request
// state, destroy with purge removes the VM from HA and its rules.
func TestHAGuestHelpers(t *testing.T) {
	s, c := haSim(t, "9.1")
	c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "state": {"stopped"}})
	c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:101"}, "state": {"ignored"}})
	c.ok("POST", "/cluster/ha/rules", url.Values{"rule": {"r1"}, "type": {"node-affinity"}, "resources": {"vm:100"}, "nodes": {"z2g4b"}})
	s.mu.Lock()
	managed, ignoredManaged, configured := s.haManagedLocked("z2g4a", 100), s.haManagedLocked("z2g4a", 101), s.haConfiguredLocked("z2g4a", 101)
	started := s.haRequestLocked("z2g4a", 100, "started")
	s.mu.Unlock()
	if !managed || ignoredManaged || !configured || !started {
		t.Fatalf("managed %v, ignored managed %v, ignored configured %v, request %v", managed, ignoredManaged, configured, started)
	}
	if st, _ := s.GuestStatus(100); st != "running" {
		t.Fatalf("hastart: guest %s", st)
	}
	if got := c.ok("GET", "/cluster/ha/resources/vm:100", nil).data().(map[string]any); got["state"] != "started" {
		t.Fatalf("request state after hastart: %v", got)
	}
	s.mu.Lock()
	s.haPurgeGuestLocked("z2g4a", 100)
	s.mu.Unlock()
	wantDie(t, c.do("GET", "/cluster/ha/resources/vm:100", nil), "no such resource 'vm:100'")
	wantDie(t, c.do("GET", "/cluster/ha/rules/r1", nil), "no such ha rule 'r1'")
}

// /etc/pve is read-only without quorum: creates fail with PVE's text.
func TestHACreateNeedsQuorum(t *testing.T) {
	s, c := haSim(t, "9.1")
	s.PowerOff("z2g4b")
	s.PowerOff("z2g4c")
	wantDie(t, c.do("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}}), "cluster not ready - no quorum?")
}

// An HA migration as the LRM runs it: while it runs, the service is in
// `migrate` with its target, the config is locked and writers are refused;
// afterwards the config lives on the target, the source no longer has it,
// and the service is started there. A hamigrate task only queues one.
func TestHAMigrationByTheLRM(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			s, c := haSim(t, rel)
			// The trigger waits for a request at which HA can migrate: the
			// first one comes before the VM is in HA.
			s.HAMigrateOnRequest(100, "z2g4c", 300*time.Millisecond, "GET", "/cluster/ha/status/manager_status")
			c.ok("GET", "/cluster/ha/status/manager_status", nil)
			c.ok("POST", "/cluster/ha/resources", url.Values{"sid": {"vm:100"}, "state": {"started"}})
			ms := c.ok("GET", "/cluster/ha/status/manager_status", nil).data().(map[string]any)
			e := ms["manager_status"].(map[string]any)["service_status"].(map[string]any)["vm:100"].(map[string]any)
			if e["state"] != "migrate" || e["node"] != "z2g4b" || e["target"] != "z2g4c" {
				t.Fatalf("service during the migration: %v", e)
			}
			cfg := c.ok("GET", "/nodes/z2g4b/qemu/100/config", nil).data().(map[string]any)
			if cfg["lock"] != "migrate" {
				t.Fatalf("config during the migration: %v", cfg)
			}
			wantDie(t, c.do("PUT", "/nodes/z2g4b/qemu/100/config", url.Values{"memory": {"1024"}}), "VM is locked (migrate)")
			var row map[string]any
			for _, r := range c.ok("GET", "/cluster/resources", url.Values{"type": {"vm"}}).data().([]any) {
				if r.(map[string]any)["vmid"] == float64(100) {
					row = r.(map[string]any)
				}
			}
			if row["hastate"] != "migrate" || row["lock"] != "migrate" || row["node"] != "z2g4b" {
				t.Fatalf("cluster resources during the migration: %v", row)
			}
			tasks := c.ok("GET", "/nodes/z2g4b/tasks", url.Values{"source": {"active"}}).data().([]any)
			if len(tasks) != 1 || tasks[0].(map[string]any)["type"] != "qmigrate" || tasks[0].(map[string]any)["user"] != "root@pam" {
				t.Fatalf("source's tasks during the migration: %v", tasks)
			}
			s.WaitHAMigrations()
			wantDie(t, c.do("GET", "/nodes/z2g4b/qemu/100/config", nil), "Configuration file 'nodes/z2g4b/qemu-server/100.conf' does not exist")
			if cfg := c.ok("GET", "/nodes/z2g4c/qemu/100/config", nil).data().(map[string]any); cfg["lock"] != nil {
				t.Fatalf("config after the migration: %v", cfg)
			}
			if st, _ := s.GuestStatus(100); st != "running" {
				t.Fatalf("guest after the migration: %s", st)
			}
			ms = c.ok("GET", "/cluster/ha/status/manager_status", nil).data().(map[string]any)
			e = ms["manager_status"].(map[string]any)["service_status"].(map[string]any)["vm:100"].(map[string]any)
			if e["state"] != "started" || e["node"] != "z2g4c" || e["target"] != nil {
				t.Fatalf("service after the migration: %v", e)
			}

			// Through the API: the hamigrate task ends before the guest moved.
			upid := c.ok("POST", "/nodes/z2g4c/qemu/100/migrate", url.Values{"target": {"z2g4a"}, "online": {"1"}}).data().(string)
			if !strings.Contains(upid, ":hamigrate:100:") {
				t.Fatalf("migrate of an HA VM started %s", upid)
			}
			waitVia(t, c, "z2g4c", upid)
			if _, node := s.GuestStatus(100); node != "z2g4c" {
				t.Fatalf("the guest moved before the LRM migrated it, to %s", node)
			}
			s.WaitHAMigrations()
			if _, node := s.GuestStatus(100); node != "z2g4a" {
				t.Fatalf("guest after hamigrate: on %s", node)
			}

			// relocate: stopped while it moves, started on the target.
			if err := s.HARelocate(100, "z2g4b", 0); err != nil {
				t.Fatal(err)
			}
			if st, node := s.GuestStatus(100); st != "running" || node != "z2g4b" {
				t.Fatalf("guest after relocate: %s on %s", st, node)
			}
			if err := s.HAMigrate(100, "z2g4b", 0); err == nil || err.Error() != "ignore service 'vm:100' migrate request - service already on node 'z2g4b'" {
				t.Fatalf("migrate to its own node: %v", err)
			}
		})
	}
}
