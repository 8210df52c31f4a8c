package certificate_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// An ACME account registration whose task fails early fails the apply and
// the next registers; one that died after registering is adopted. A
// certificate order whose task fails, early or late (ordered and
// installed, then the worker died), fails the apply and the next orders
// again. Either way one account, the node presenting the ordered
// certificate.
func TestAccACME_taskFails(t *testing.T) {
	t.Parallel()
	acctest.EachTaskFault(t, []string{"acmeregister", "acmenewcert"}, func(t *testing.T, typ, action string) {
		e := acctest.New(t)
		if e.Sim == nil {
			t.Skip("needs the simulator's fault injection")
		}
		node := e.Node(t, 1)
		directory, domain := acmeTarget(t, e, node)
		cfg := acmeConfig(rootProvider(t, e), directory, `"ops@lab.example"`, node, domain, "")
		wantErr := regexp.MustCompile(`Unable to`) // an order is made again
		if typ == "acmeregister" {
			wantErr = acctest.ErrUnlessAdopted(action, `Unable to Create ACME account`)
		}
		e.Run(t, e.TaskFaultCase("task "+typ+"="+action+":1x", cfg, wantErr, func(s *terraform.State) error {
			names, err := e.Client.ACMEAccounts(context.Background())
			if err != nil {
				return err
			}
			if len(names) != 1 {
				return fmt.Errorf("ACME accounts %v, want one", names)
			}
			fp := s.RootModule().Resources["pve_node_acme.api"].Primary.Attributes["fingerprint"]
			return presents(e, node, func() string { return fp })(s)
		}))
	})
}
