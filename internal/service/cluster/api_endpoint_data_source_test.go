package cluster_test

import (
	"fmt"
	"net"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// pve_api_endpoint reports the certificate the endpoint presents (the
// one the provider pins), and gives up with the endpoint named when
// nothing answers within its timeout. The last step is the one that
// succeeds: the test's final destroy plans its configuration.
func TestAccAPIEndpoint_waitsAndReports(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	want := regexp.MustCompile(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`)
	if fp := e.TLSFingerprint(); fp != "" {
		want = regexp.MustCompile("^" + regexp.QuoteMeta(fp) + "$")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	_ = l.Close() // nothing listens there any more
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config:      e.Config("data \"pve_api_endpoint\" \"bad\" {\n  endpoint = \"http://node:8006\"\n  timeout = \"soon\"\n}\n"),
			ExpectError: regexp.MustCompile(`(?s)must be an https:// URL.*not a positive duration`),
		},
		{
			Config:      e.Config(fmt.Sprintf("data \"pve_api_endpoint\" \"down\" {\n  endpoint = \"https://%s\"\n  timeout = \"2s\"\n}\n", closed)),
			ExpectError: regexp.MustCompile(`(?s)Unable to reach PVE API https://` + regexp.QuoteMeta(closed) + `.*no answer within 2s`),
		},
		{
			Config: e.Config(fmt.Sprintf("data \"pve_api_endpoint\" \"up\" {\n  endpoint = %q\n  timeout = \"1m\"\n}\n", e.Endpoint())),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestMatchResourceAttr("data.pve_api_endpoint.up", "tls_fingerprint", want),
				resource.TestMatchResourceAttr("data.pve_api_endpoint.up", "waited", regexp.MustCompile(`^\d+s$`)),
			),
		},
	}})
}
