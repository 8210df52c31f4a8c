package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// clearPVEEnv makes the provider see only the configuration under test.
func clearPVEEnv(t *testing.T) {
	for _, v := range []string{"PVE_ENDPOINT", "PVE_API_TOKEN", "PVE_USERNAME", "PVE_PASSWORD", "PVE_INSECURE",
		"PVE_CA_CERT", "PVE_TLS_FINGERPRINT", "PVE_REQUEST_TIMEOUT", "PVE_MAX_PARALLEL_REQUESTS",
		"PVE_SSH_USERNAME", "PVE_SSH_PRIVATE_KEY", "PVE_SSH_PRIVATE_KEY_PASSPHRASE", "PVE_SSH_PASSWORD", "PVE_SSH_AGENT",
		"PVE_SSH_KNOWN_HOSTS", "PVE_SSH_TRUST_ON_FIRST_USE", "PVE_SSH_PORT", "PVE_SSH_COMMAND_TIMEOUT", "SSH_AUTH_SOCK"} {
		t.Setenv(v, "")
	}
}

const readNetworks = `
data "pve_node_networks" "n" {
  node = "z2g4a"
}
`

// The provider's configure-time errors, each naming what is wrong and how
// to fix it. These run only against the simulator: they need a server
// whose certificate and credentials the test controls.
func TestProviderConfigure(t *testing.T) {
	clearPVEEnv(t)
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "cfgtest"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	e := &acctest.Env{Sim: sim} // only for Run's choice of backend
	acctest.SetupCLI(t)

	provider := func(body string) string { return "provider \"pve\" {\n" + body + "\n}\n" + readNetworks }
	fp := info.TLSFingerprint
	wrongFP := strings.Repeat("AB:", 31) + "AB"
	cases := []struct {
		name, config string
		want         string // regexp; "" means the configuration works
	}{
		{"no endpoint", provider(fmt.Sprintf(`api_token = %q`, info.APIToken)),
			`(?s)Missing Proxmox VE endpoint.*https://pve1.example.com:8006`},
		{"malformed token", provider(fmt.Sprintf(`endpoint = %q
api_token = "root@pam=secret-value"`, info.Endpoint)),
			`(?s)Malformed API token.*USER@REALM!TOKENID=SECRET`},
		{"no credentials", provider(fmt.Sprintf(`endpoint = %q`, info.Endpoint)),
			`(?s)Missing Proxmox VE credentials.*api_token`},
		{"unreachable endpoint", provider(fmt.Sprintf(`endpoint = "https://127.0.0.1:1"
api_token = %q
tls_fingerprint = %q`, info.APIToken, fp)),
			`(?s)Unable to connect to Proxmox VE at https://127.0.0.1:1`},
		{"untrusted certificate says how to pin it", provider(fmt.Sprintf(`endpoint = %q
api_token = %q`, info.Endpoint, info.APIToken)),
			`(?s)Unable to connect to Proxmox VE.*` + regexp.QuoteMeta(fp)},
		{"wrong pinned fingerprint", provider(fmt.Sprintf(`endpoint = %q
api_token = %q
tls_fingerprint = %q`, info.Endpoint, info.APIToken, wrongFP)),
			`(?s)Unable to connect to Proxmox VE.*` + regexp.QuoteMeta(fp)},
		{"wrong token secret", provider(fmt.Sprintf(`endpoint = %q
api_token = "root@pam!terraform=00000000-0000-0000-0000-000000000000"
tls_fingerprint = %q`, info.Endpoint, fp)),
			`(?s)Unable to connect to Proxmox VE.*(?i:authentication)`},
		{"wrong password", provider(fmt.Sprintf(`endpoint = %q
username = "root@pam"
password = "wrong"
tls_fingerprint = %q`, info.Endpoint, fp)),
			`(?s)Unable to connect to Proxmox VE.*(?i:authentication)`},
		{"pinned fingerprint works", provider(fmt.Sprintf(`endpoint = %q
api_token = %q
tls_fingerprint = %q`, info.Endpoint, info.APIToken, fp)), ""},
		{"ca_cert works", provider(fmt.Sprintf(`endpoint = %q
api_token = %q
ca_cert = <<EOT
%sEOT`, info.Endpoint, info.APIToken, info.CACertPEM)), ""},
		{"insecure works, without a pin", provider(fmt.Sprintf(`endpoint = %q
api_token = %q
insecure = true`, info.Endpoint, info.APIToken)), ""},
		{"root@pam ticket works", provider(fmt.Sprintf(`endpoint = %q
username = "root@pam"
password = %q
tls_fingerprint = %q`, info.Endpoint, info.RootPassword, fp)), ""},
	}
	var steps []resource.TestStep
	for _, tc := range cases {
		step := resource.TestStep{Config: "# " + tc.name + "\n" + tc.config}
		if tc.want != "" {
			step.PlanOnly = true
			step.ExpectError = regexp.MustCompile(tc.want)
		} else {
			step.Check = resource.TestCheckResourceAttrSet("data.pve_node_networks.n", "interfaces.0.iface")
		}
		steps = append(steps, step)
	}
	e.Run(t, resource.TestCase{Steps: steps})
}

// Settings come from the environment when the configuration leaves them out.
func TestProviderConfigureFromEnvironment(t *testing.T) {
	clearPVEEnv(t)
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "envtest"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	t.Setenv("PVE_ENDPOINT", info.Endpoint)
	t.Setenv("PVE_API_TOKEN", info.APIToken)
	t.Setenv("PVE_TLS_FINGERPRINT", info.TLSFingerprint)
	acctest.SetupCLI(t)
	e := &acctest.Env{Sim: sim}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: "provider \"pve\" {}\n" + readNetworks,
		Check:  resource.TestCheckResourceAttrSet("data.pve_node_networks.n", "interfaces.0.iface"),
	}}})
}
