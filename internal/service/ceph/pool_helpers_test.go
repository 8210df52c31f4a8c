package ceph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// newCephEnv starts a simulator with a frozen Ceph clock (only
// Sim.CephAdvance moves it, so the autoscaler acts when a test says so)
// and builds the reference lab's Ceph through the client: init on the
// management network, a monitor (and with the first one a manager) on
// every node, and an OSD on each node's /dev/sdb, so that pools have
// placement groups on three hosts. Against a real cluster the tests need
// a working Ceph they may create pools in and set flags on, which
// PVE_ACC_CEPH=1 confirms; otherwise they skip.
func newCephEnv(t *testing.T) (*acctest.Env, string) {
	t.Helper()
	return newCephEnvAt(t, -1)
}

// newCephEnvAt is newCephEnv with the Ceph clock running at scale
// simulated seconds per real second.
func newCephEnvAt(t *testing.T, scale float64) (*acctest.Env, string) {
	t.Helper()
	e := acctest.NewWithOptions(t, pvesim.Options{CephTimeScale: scale})
	if e.Sim == nil {
		if os.Getenv("PVE_ACC_CEPH") == "" {
			t.Skip("needs a Ceph cluster it may create pools in and set flags on; set PVE_ACC_CEPH=1")
		}
		return e, e.Node(t, 0)
	}
	ctx := context.Background()
	root := e.RootClient(t)
	node := e.Node(t, 0)
	if err := root.InitCeph(ctx, node, pve.CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatalf("ceph init: %v", err)
	}
	for _, n := range e.Nodes {
		upid, err := root.CreateCephMon(ctx, n, "")
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatalf("monitor on %s: %v", n, err)
		}
	}
	for _, n := range e.Nodes {
		upid, err := root.CreateCephOSD(ctx, n, pve.CephOSDCreateRequest{Dev: "/dev/sdb"})
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatalf("OSD on %s: %v", n, err)
		}
	}
	return e, node
}

// testPool is the name of the pool the pool tests manage.
const testPool = "ceph"

// checkPool asserts what PVE reports for testPool, not Terraform's state.
func checkPool(e *acctest.Env, node string, check func(*pve.CephPool) error) func(*terraform.State) error {
	name := testPool
	return func(*terraform.State) error {
		p, err := e.Client.CephPool(context.Background(), node, name)
		if err != nil {
			return fmt.Errorf("read pool %s from PVE: %w", name, err)
		}
		return check(p)
	}
}

// checkPoolGone asserts PVE no longer has testPool (and, on the
// simulator, no RBD storage on it).
func checkPoolGone(e *acctest.Env, node string) func(*terraform.State) error {
	name := testPool
	return func(*terraform.State) error {
		_, err := e.Client.CephPool(context.Background(), node, name)
		if !errors.Is(err, pve.ErrNotFound) {
			return fmt.Errorf("pool %s after destroy: %w", name, err)
		}
		if e.Sim != nil {
			for id, pool := range e.Sim.CephRBDStorages() {
				if pool == name {
					return fmt.Errorf("storage %s on pool %s survived the pool", id, name)
				}
			}
		}
		return nil
	}
}

// updatePool changes a pool behind Terraform's back, as the GUI would.
func updatePool(t *testing.T, e *acctest.Env, node, name string, r pve.CephPoolRequest) {
	t.Helper()
	c := e.RootClient(t)
	upid, err := c.UpdateCephPool(context.Background(), node, name, r)
	if _, err := c.Await(context.Background(), upid, err); err != nil {
		t.Fatalf("change pool %s outside Terraform: %v", name, err)
	}
}

func i64(n int64) *int64 { return &n }

// errorRE compiles an expected-error pattern in which every space also
// matches the line breaks Terraform wraps diagnostics with.
func errorRE(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}
