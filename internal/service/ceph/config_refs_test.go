package ceph_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A misspelt Ceph option is refused at plan, from Ceph's own option list
// (`ceph config ls`, once per command), naming settings["<name>"] and the
// closest option; in ceph.conf (which Ceph reads without complaint) too.
// An option already in state is not checked again; a node the cluster does
// not have is refused. Nothing is written: no API write, no ceph config
// set, no ceph.conf edit (issue #13).
func TestAccCephConfig_refsAtPlan(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, -1, false)
	node := e.Node(t, 0)
	one := func(who, target, key, value string) string {
		return e.Config(cephConfigHCL("x", node, who, target, map[string]string{key: value}, ""))
	}
	var from, sshFrom int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		func() resource.TestStep {
			s := refusedStep(one("osd", "", "osd_memory_targt", "8G"), `Error: Unable to Create Ceph configuration config_db/osd`,
				`with pve_ceph_config\.x`, words(`settings has "osd_memory_targt", which is not a Ceph option (ceph config ls on `+node),
				words(`Error EINVAL: unrecognized config option 'osd_memory_targt'`), words(`Did you mean "osd_memory_target"?`))
			s.PreConfig = func() { from, sshFrom = len(e.Sim.Requests()), len(e.Sim.SSHCommands()) }
			return s
		}(),
		refusedStep(one("client", "ceph_conf", "rbd_cache_writethrough_untill_flush", "true"), `Unable to Create Ceph configuration ceph_conf/client`, //nolint:misspell // the misspelt option is the test
			words(`Ceph ignores unknown names in ceph.conf`), words(`Did you mean "rbd_cache_writethrough_until_flush"?`)),
		refusedStep(e.Config(cephConfigHCL("x", "z2g4x", "osd", "", map[string]string{"osd_max_backfills": "2"}, "")), words(`Unable to plan pve_ceph_config: unknown node z2g4x`), words(`node = "z2g4x" is not a node of`)),
		{
			PreConfig: func() {
				requireNoWrites(t, e, from)
				for _, c := range e.Sim.SSHCommands()[sshFrom:] {
					if !strings.HasPrefix(c.Line, "ceph config ls") && !strings.HasPrefix(c.Line, "cat ") && !strings.HasPrefix(c.Line, "ceph config dump") {
						t.Errorf("a refused plan ran %s on %s", c.Line, c.Node)
					}
				}
			},
			Config: one("osd", "", "osd_max_backfills", "2"),
		},
	}})
}
