package ceph_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// Issue #13: a drain can take hours and reports progress only under
// TF_LOG; the destroy ends with a warning terraform apply prints: how long
// the drain took and how much Ceph moved off the OSD.
func TestAccCephOSD_drainReport(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 60) // as replaceKeepsData: the drain takes a few real seconds
	setupCeph(t, e)
	c := e.Nodes[2]
	tc := resource.TestCase{CheckDestroy: checkNoOSDs(e)}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{Config: osdConfig(e, labOSDs(e)...)},
		{
			PreConfig: func() {
				createPool(t, e, "rbd", 64, 8<<30)
				rec.Reset()
			},
			Config: osdConfig(e, labOSDs(e, c+":/dev/sdc")...),
			Check: rec.CheckApplyWarning(regexp.MustCompile(`^osd\.[0-9]+ on ` + c + ` drained in [0-9.hms]+ and destroyed\n` +
				`Ceph moved [1-9][0-9]* placement group\(s\) and [0-9.]+ GiB off osd\.[0-9]+ to the other OSDs in [0-9.hms]+ before`)),
		},
		{
			PreConfig: func() { deletePool(t, e, "rbd") },
			Config:    osdConfig(e, labOSDs(e, c+":/dev/sdc")...),
			PlanOnly:  true,
		},
	}
	e.Run(t, tc)
}
