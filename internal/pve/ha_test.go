package pve

import (
	"context"
	"reflect"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func haClient(t *testing.T, release string) (*Client, *pvesim.Sim) {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "lab", NoSSH: true, PVERelease: release})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sim.CreateTestVM("z2g4b", 100, "vm100")
	sim.CreateTestVM("z2g4c", 101, "vm101")
	info := sim.Info()
	c, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return c, sim
}

func i64p(v int64) *int64 { return &v }

func TestHAResourceRoundTrip(t *testing.T) {
	ctx := context.Background()
	c, sim := haClient(t, "9.1")
	no := false
	if err := c.CreateHAResource(ctx, "vm:100", HAResourceRequest{State: "started", MaxRestart: i64p(3), Failback: &no, Comment: "web"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.HAResource(ctx, "vm:100")
	if err != nil {
		t.Fatal(err)
	}
	if r.SID != "vm:100" || r.Type != "vm" || r.State != "started" || r.MaxRestart == nil || *r.MaxRestart != 3 ||
		r.MaxRelocate != nil || r.Failback == nil || *r.Failback || r.Comment != "web" || r.Digest == "" {
		t.Fatalf("read: %+v", r)
	}
	if st, _ := sim.GuestStatus(100); st != "running" {
		t.Fatalf("guest %s, want running", st)
	}
	if err := c.UpdateHAResource(ctx, "vm:100", HAResourceRequest{State: "stopped", MaxRelocate: i64p(0)}, []string{"comment", "failback"}, r.Digest); err != nil {
		t.Fatal(err)
	}
	r, err = c.HAResource(ctx, "vm:100")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != "stopped" || r.MaxRelocate == nil || *r.MaxRelocate != 0 || r.Comment != "" || r.Failback != nil {
		t.Fatalf("after update: %+v", r)
	}
	// The digest of the first read is stale.
	if err := c.UpdateHAResource(ctx, "vm:100", HAResourceRequest{State: "started"}, nil, "0123"); err == nil {
		t.Fatal("stale digest accepted")
	}
	st, err := c.HAStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range st {
		if e.SID == "vm:100" {
			found = true
			if e.State != "stopped" || e.RequestState != "stopped" || e.Node != "z2g4b" {
				t.Fatalf("status: %+v", e)
			}
		}
	}
	if !found {
		t.Fatalf("no service entry: %+v", st)
	}
	list, err := c.HAResources(ctx, "vm")
	if err != nil || len(list) != 1 || list[0].SID != "vm:100" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := c.DeleteHAResource(ctx, "vm:100"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HAResource(ctx, "vm:100"); !IsHANotFound(err) {
		t.Fatalf("read after delete: %v (IsHANotFound false)", err)
	}
}

func TestHAGroupsAndRules(t *testing.T) {
	ctx := context.Background()
	t.Run("8.4", func(t *testing.T) {
		c, _ := haClient(t, "8.4")
		if err := c.CreateHAGroup(ctx, HAGroup{Group: "prefer_b", Nodes: "z2g4b:2,z2g4a", Restricted: true}); err != nil {
			t.Fatal(err)
		}
		g, err := c.HAGroup(ctx, "prefer_b")
		if err != nil || g.Nodes != "z2g4a,z2g4b:2" || !g.Restricted || g.NoFailback {
			t.Fatalf("group: %+v %v", g, err)
		}
		g.Comment, g.Restricted = "pref", false
		if err := c.UpdateHAGroup(ctx, *g); err != nil {
			t.Fatal(err)
		}
		if gs, err := c.HAGroups(ctx); err != nil || len(gs) != 1 || gs[0].Comment != "pref" || gs[0].Restricted {
			t.Fatalf("groups: %+v %v", gs, err)
		}
		if err := c.CreateHAResource(ctx, "100", HAResourceRequest{Group: "prefer_b"}); err != nil {
			t.Fatal(err)
		}
		if r, err := c.HAResource(ctx, "vm:100"); err != nil || r.Group != "prefer_b" {
			t.Fatalf("resource: %+v %v", r, err)
		}
		if err := c.DeleteHAGroup(ctx, "prefer_b"); err == nil {
			t.Fatal("group in use deleted")
		}
		if _, err := c.HAGroup(ctx, "nope"); !IsHANotFound(err) {
			t.Fatalf("unknown group: %v", err)
		}
	})
	t.Run("9.1", func(t *testing.T) {
		c, _ := haClient(t, "9.1")
		if _, err := c.HAGroups(ctx); err == nil {
			t.Fatal("groups listed on 9.1")
		}
		for _, sid := range []string{"vm:100", "vm:101"} {
			if err := c.CreateHAResource(ctx, sid, HAResourceRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.CreateHARule(ctx, HARule{Rule: "on_b", Type: "node-affinity", Resources: []string{"vm:100"}, Nodes: "z2g4b", Strict: true}); err != nil {
			t.Fatal(err)
		}
		if err := c.CreateHARule(ctx, HARule{Rule: "apart", Type: "resource-affinity", Resources: []string{"vm:101", "vm:100"}, Affinity: "negative"}); err != nil {
			t.Fatal(err)
		}
		r, err := c.HARule(ctx, "on_b")
		if err != nil || r.Type != "node-affinity" || !reflect.DeepEqual(r.Resources, []string{"vm:100"}) || r.Nodes != "z2g4b" || !r.Strict || r.Order != 1 {
			t.Fatalf("rule: %+v %v", r, err)
		}
		r.Strict, r.Nodes = false, "z2g4b:2,z2g4c:1"
		if err := c.UpdateHARule(ctx, *r); err != nil {
			t.Fatal(err)
		}
		rules, err := c.HARules(ctx, "", "vm:100")
		if err != nil || len(rules) != 2 || rules[0].Strict || rules[0].Nodes != "z2g4b:2,z2g4c:1" ||
			!reflect.DeepEqual(rules[1].Resources, []string{"vm:100", "vm:101"}) || rules[1].Affinity != "negative" {
			t.Fatalf("rules: %+v %v", rules, err)
		}
		if err := c.DeleteHARule(ctx, "on_b"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.HARule(ctx, "on_b"); !IsHANotFound(err) {
			t.Fatalf("deleted rule: %v", err)
		}
	})
}
