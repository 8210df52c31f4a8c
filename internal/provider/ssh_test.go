package provider_test

import (
	"encoding/pem"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"golang.org/x/crypto/ssh"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The ssh block's configure-time errors, each naming what is wrong and
// how to fix it; a valid block configures without contacting any node.
func TestProviderSSHConfigure(t *testing.T) {
	clearPVEEnv(t)
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("needs the simulator's SSH key")
	}
	withSSH := func(block string) string {
		return strings.Replace(e.ProviderConfig(), e.SSHBlock(), block, 1) + readNetworks
	}
	raw, err := ssh.ParseRawPrivateKey([]byte(e.Sim.SSHClientKeyPEM()))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := ssh.MarshalPrivateKeyWithPassphrase(raw, "", []byte("pass phrase"))
	if err != nil {
		t.Fatal(err)
	}
	encrypted := string(pem.EncodeToMemory(enc))
	cases := []struct{ name, config, want string }{
		{"no credentials", withSSH("  ssh {\n    username = \"root\"\n  }\n"),
			`(?s)Invalid SSH configuration.*no SSH credentials.*PVE_SSH_PRIVATE_KEY`},
		{"a path instead of a key", withSSH("  ssh {\n    private_key = \"~/.ssh/id_ed25519\"\n  }\n"),
			`(?s)Invalid SSH private key.*not a path.*file\(`},
		{"encrypted key without passphrase", withSSH(fmt.Sprintf("  ssh {\n    private_key = %q\n  }\n", encrypted)),
			`(?s)Invalid SSH configuration.*encrypted: give its passphrase`},
		{"wrong passphrase", withSSH(fmt.Sprintf("  ssh {\n    private_key = %q\n    private_key_passphrase = \"nope\"\n  }\n", encrypted)),
			`(?s)passphrase is wrong`},
		{"bad port", withSSH("  ssh {\n    password = \"x\"\n    port = 0\n  }\n"), `(?s)port.*between 1 and 65535`},
		{"valid block", e.ProviderConfig() + readNetworks, ""},
		{"encrypted key with passphrase", withSSH(fmt.Sprintf("  ssh {\n    private_key = %q\n    private_key_passphrase = \"pass phrase\"\n    known_hosts_file = %q\n  }\n", encrypted, e.KnownHosts)), ""},
	}
	var steps []resource.TestStep
	for _, tc := range cases {
		step := resource.TestStep{Config: "# " + tc.name + "\n" + tc.config}
		if tc.want != "" {
			step.PlanOnly = true
			step.ExpectError = regexp.MustCompile(tc.want)
		}
		steps = append(steps, step)
	}
	e.Run(t, resource.TestCase{Steps: steps})
}

// PVE_SSH_* variables alone configure SSH; a malformed one is an error
// naming it.
func TestProviderSSHFromEnvironment(t *testing.T) {
	clearPVEEnv(t)
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("needs the simulator")
	}
	config := e.ProviderConfigWithoutSSH(t) + readNetworks
	t.Setenv("PVE_SSH_AGENT", "maybe")
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{Config: config, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid PVE_SSH_AGENT.*true or false`)}}})
	t.Setenv("PVE_SSH_AGENT", "")
	t.Setenv("PVE_SSH_USERNAME", "root")
	t.Setenv("PVE_SSH_PRIVATE_KEY", e.Sim.SSHClientKeyPEM())
	t.Setenv("PVE_SSH_KNOWN_HOSTS", e.KnownHosts)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{Config: config}}})
}
