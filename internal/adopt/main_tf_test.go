package adopt

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// main.tf reaches the cluster as the adoption did: the CA file and the SSH
// addresses it was given become variables with those defaults.
func TestMainTFProviderSettings(t *testing.T) {
	r := testRun()
	r.opts.Provider = ProviderSettings{Endpoint: "https://pve1:8006", CACertFile: "~/lab/ca.pem",
		SSHNodes: map[string]string{"pve1": "127.0.0.1:2201", "pve2": "10.0.0.2"}}
	r.writeMain()
	main := string(hclwrite.Format(r.res.Files["main.tf"].Bytes()))
	if _, diags := hclsyntax.ParseConfig([]byte(main), "main.tf", hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("main.tf does not parse: %v\n%s", diags, main)
	}
	for _, want := range []string{
		"ca_cert  = file(pathexpand(var.ca_cert_file))",
		`default     = "~/lab/ca.pem"`,
		"nodes            = var.ssh_nodes",
		`address = "127.0.0.1"`, "port    = 2201",
		`address = "10.0.0.2"`, "port    = 22",
	} {
		if !strings.Contains(main, want) {
			t.Errorf("main.tf lacks %q:\n%s", want, main)
		}
	}

	r = testRun()
	r.writeMain()
	main = string(r.res.Files["main.tf"].Bytes())
	for _, absent := range []string{"ca_cert", "ssh_nodes", "tls_fingerprint"} {
		if strings.Contains(main, absent) {
			t.Errorf("main.tf without those settings holds %s:\n%s", absent, main)
		}
	}
}
