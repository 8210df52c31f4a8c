package ceph_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// labDisks are the reference lab's OSD disks: the two datacenter SSDs.
var labDisks = []string{"/dev/sdb", "/dev/sdc"}

// cephEnv starts a simulator for OSD tests. scale is simulated Ceph seconds
// per real second (<0 freezes the Ceph clock: only Sim.CephAdvance moves
// it). These tests build Ceph from nothing and destroy OSDs, so against a
// real cluster they skip.
func cephEnv(t *testing.T, scale float64) *acctest.Env {
	t.Helper()
	if acctest.Live() {
		t.Skip("builds Ceph from nothing and destroys OSDs; runs against the simulator only")
	}
	return acctest.NewWithOptions(t, pvesim.Options{CephTimeScale: scale})
}

// setupCeph is what pve_ceph_cluster, pve_ceph_monitor and pve_ceph_manager
// will do: init on the management network, a monitor and a manager on every
// node, through a root@pam client.
func setupCeph(t *testing.T, e *acctest.Env) *pve.Client {
	t.Helper()
	ctx := context.Background()
	root := e.RootClient(t)
	if err := root.InitCeph(ctx, e.Nodes[0], pve.CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatalf("ceph init: %v", err)
	}
	for i, n := range e.Nodes {
		upid, err := root.CreateCephMon(ctx, n, "")
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatalf("monitor on %s: %v", n, err)
		}
		if i > 0 { // the first monitor brought the first manager
			upid, err := root.CreateCephMgr(ctx, n, "")
			if _, err := root.Await(ctx, upid, err); err != nil {
				t.Fatalf("manager on %s: %v", n, err)
			}
		}
	}
	return root
}

// createPool makes a replicated RBD pool of size 3 (min_size 2) through
// the client (the pool resource lives elsewhere) and sets how much data it
// holds.
func createPool(t *testing.T, e *acctest.Env, name string, pgs int64, stored int64) {
	t.Helper()
	size, minSize := int64(3), int64(2)
	ctx := context.Background()
	c := e.RootClient(t)
	upid, err := c.CreateCephPool(ctx, e.Nodes[0], name, pve.CephPoolRequest{Size: &size, MinSize: &minSize, PGNum: &pgs, Application: "rbd"})
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatalf("create pool %s: %v", name, err)
	}
	// A new pool's PGs are creating+peering for a few seconds, as in Ceph;
	// on a frozen clock they would stay so, and every drain would wait.
	e.Sim.CephAdvance(10 * time.Second)
	if stored > 0 {
		e.Sim.SetCephPoolStored(name, stored)
	}
}

func deletePool(t *testing.T, e *acctest.Env, name string) {
	t.Helper()
	ctx := context.Background()
	c := e.RootClient(t)
	upid, err := c.DestroyCephPool(ctx, e.Nodes[0], name, false, false)
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatalf("delete pool %s: %v", name, err)
	}
}

// osdAddr is the address of the OSD on node's dev in osdConfig.
func osdAddr(node, dev string) string {
	return "pve_ceph_osd." + node + "_" + strings.TrimPrefix(dev, "/dev/")
}

// osdSpec is one pve_ceph_osd block; extra is added inside it.
type osdSpec struct{ node, dev, extra string }

// osdConfig is a root@pam provider (OSD create and destroy need it) and one
// pve_ceph_osd per spec.
func osdConfig(e *acctest.Env, specs ...osdSpec) string {
	var b strings.Builder
	b.WriteString(e.RootProviderConfig())
	for _, s := range specs {
		fmt.Fprintf(&b, "\nresource \"pve_ceph_osd\" %q {\n  node   = %q\n  device = %q\n%s}\n",
			strings.TrimPrefix(osdAddr(s.node, s.dev), "pve_ceph_osd."), s.node, s.dev, s.extra)
	}
	return b.String()
}

// labOSDs are the reference lab's six OSDs, minus those on skip ("node:dev").
func labOSDs(e *acctest.Env, skip ...string) []osdSpec {
	var out []osdSpec
	for _, n := range e.Nodes {
		for _, d := range labDisks {
			s := osdSpec{node: n, dev: d}
			for _, x := range skip {
				if x == n+":"+d {
					s.node = ""
				}
			}
			if s.node != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// tree reads the OSD tree through the token client.
func tree(t *testing.T, e *acctest.Env) *pve.CephOSDTree {
	t.Helper()
	tr, err := e.Client.CephOSDTree(context.Background(), e.Nodes[0])
	if err != nil {
		t.Fatalf("OSD tree: %v", err)
	}
	return tr
}

// osdOn returns the id of the OSD PVE lists on node's dev, or -1.
func osdOn(t *testing.T, e *acctest.Env, node, dev string) int64 {
	t.Helper()
	disks, err := e.Client.Disks(context.Background(), node, false)
	if err != nil {
		t.Fatalf("disks of %s: %v", node, err)
	}
	for _, d := range disks {
		if d.DevPath == dev {
			if len(d.OSDIDs) > 0 {
				return d.OSDIDs[0]
			}
			return d.OSDID
		}
	}
	t.Fatalf("%s has no %s", node, dev)
	return -1
}

// stateOSDID is the osd_id Terraform recorded for addr.
func stateOSDID(s *terraform.State, addr string) (int64, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return -1, fmt.Errorf("%s not in state", addr)
	}
	return strconv.ParseInt(rs.Primary.Attributes["osd_id"], 10, 64)
}

// checkHealthModel fails when the simulator's PG history recorded a PG
// below min_size, a lost PG or an OSD destroyed while not safe to destroy.
func checkHealthModel(e *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if v := e.Sim.CephMinSizeViolations(); len(v) > 0 {
			return fmt.Errorf("PGs dropped below min_size: %s", strings.Join(v, "; "))
		}
		if v := e.Sim.CephDataLoss(); len(v) > 0 {
			return fmt.Errorf("PGs lost data: %s", strings.Join(v, "; "))
		}
		if v := e.Sim.CephUnsafeDestroys(); len(v) > 0 {
			return fmt.Errorf("OSDs destroyed without draining: %s", strings.Join(v, "; "))
		}
		return nil
	}
}

// checkNoOSDs is CheckDestroy: PVE lists no OSD and the lab disks are free.
func checkNoOSDs(e *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		tr, err := e.Client.CephOSDTree(context.Background(), e.Nodes[0])
		if err != nil {
			return err
		}
		if len(tr.OSDs) != 0 {
			return fmt.Errorf("OSDs left after destroy: %+v", tr.OSDs)
		}
		for _, n := range e.Nodes {
			disks, err := e.Client.Disks(context.Background(), n, false)
			if err != nil {
				return err
			}
			for _, d := range disks {
				if (d.DevPath == "/dev/sdb" || d.DevPath == "/dev/sdc") && d.Used != "" {
					return fmt.Errorf("%s %s still used (%s) after destroy with cleanup", n, d.DevPath, d.Used)
				}
			}
		}
		return nil
	}
}

// words is a regexp for a phrase that Terraform may have wrapped onto
// several lines: the words in order, any whitespace between them.
func words(phrase string) string {
	f := strings.Fields(phrase)
	for i := range f {
		f[i] = regexp.QuoteMeta(f[i])
	}
	return strings.Join(f, `\s+`)
}

// errRE matches the fragments in order, anywhere in the error output;
// fragments are regexps (use words for plain text).
func errRE(fragments ...string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)` + strings.Join(fragments, `.*`))
}

// withDeleteTimeout gives every spec without a timeouts block one (delete
// in 1m), so that a failing test with a frozen Ceph clock cannot hang in
// the final destroy.
func withDeleteTimeout(specs []osdSpec) []osdSpec {
	out := make([]osdSpec, len(specs))
	for i, s := range specs {
		if !strings.Contains(s.extra, "timeouts") {
			s.extra += "  timeouts {\n    delete = \"1m\"\n  }\n"
		}
		out[i] = s
	}
	return out
}

// destroyOutside destroys an OSD the way an admin would in the GUI: out,
// stop, destroy with cleanup (no pool holds data, so nothing is lost).
func destroyOutside(t *testing.T, e *acctest.Env, node string, id int64) {
	t.Helper()
	ctx := context.Background()
	c := e.RootClient(t)
	if err := c.MarkCephOSDOut(ctx, node, id); err != nil {
		t.Fatal(err)
	}
	upid, err := c.StopCephService(ctx, node, fmt.Sprintf("osd.%d", id))
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	upid, err = c.DestroyCephOSD(ctx, node, id, true)
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
}

// createOutside creates an OSD through the client and returns its id.
func createOutside(t *testing.T, e *acctest.Env, node, dev string) int64 {
	t.Helper()
	ctx := context.Background()
	c := e.RootClient(t)
	upid, err := c.CreateCephOSD(ctx, node, pve.CephOSDCreateRequest{Dev: dev})
	if _, err := c.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	return osdOn(t, e, node, dev)
}
