package ceph_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A cephcreateosd worker that meets PVE::Diskmanage's lock did nothing
// (pve-manager API2/Ceph/OSD.pm: locked_disk_action comes first): the
// create starts it again and the apply converges, no OSD twice.
func TestAccCephOSD_lockTimeoutInTheWorkerIsRetried(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 60)
	setupCeph(t, e)
	specs := labOSDs(e)[:2]
	if err := e.Sim.SetFaultSpec("task cephcreateosd=lock:2x"); err != nil {
		t.Fatal(err)
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{{
			Config: osdConfig(e, specs...),
			Check:  checkLabOSDs(e, specs),
		}},
	})
	faulted := 0
	for _, r := range e.Sim.Requests() {
		if r.Fault == "task-lock" {
			faulted++
		}
	}
	if faulted != 2 {
		t.Fatalf("%d OSD creates met the lock, want 2", faulted)
	}
}
