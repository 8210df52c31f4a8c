package framework

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

func TestRequireNodeExecSaysHowToConfigureSSH(t *testing.T) {
	for _, pd := range []*ProviderData{nil, {}, {NodeExecUnavailable: "ssh.private_key depends on a value that is not known until apply."}} {
		var d diag.Diagnostics
		if RequireNodeExec(pd, &d, "pve_node_tuned_profile") {
			t.Fatal("no pool, yet usable")
		}
		if len(d) != 1 {
			t.Fatalf("%d diagnostics", len(d))
		}
		if got := d[0].Summary(); got != "pve_node_tuned_profile needs SSH access to the nodes" {
			t.Errorf("summary %q", got)
		}
		for _, want := range []string{"ssh {", "private_key = file(", "PVE_SSH_PRIVATE_KEY", "known_hosts", "trust_on_first_use"} {
			if !strings.Contains(d[0].Detail(), want) {
				t.Errorf("detail lacks %q: %s", want, d[0].Detail())
			}
		}
		if pd != nil && pd.NodeExecUnavailable != "" && !strings.HasPrefix(d[0].Detail(), pd.NodeExecUnavailable) {
			t.Errorf("reason not first: %s", d[0].Detail())
		}
	}
}
