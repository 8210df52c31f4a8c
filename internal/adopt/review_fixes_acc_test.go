package adopt_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/adopt"
)

// withoutResource is config without the resource block addr (type.name)
// and its import block: what a user does to stop managing an object
// (and have Terraform destroy it).
func withoutResource(t *testing.T, config, addr string) string {
	t.Helper()
	f, diags := hclwrite.ParseConfig([]byte(config), "adopted.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parse the adopted configuration: %v", diags)
	}
	typ, name, _ := strings.Cut(addr, ".")
	removed := 0
	for _, b := range f.Body().Blocks() {
		switch b.Type() {
		case "resource":
			if l := b.Labels(); len(l) == 2 && l[0] == typ && l[1] == name {
				f.Body().RemoveBlock(b)
				removed++
			}
		case "import":
			if to := b.Body().GetAttribute("to"); to != nil {
				if v := strings.TrimSpace(string(to.Expr().BuildTokens(nil).Bytes())); v != addr && !strings.HasPrefix(v, addr+"[") {
					continue
				}
				f.Body().RemoveBlock(b)
				removed++
			}
		}
	}
	if removed < 2 {
		t.Fatalf("%s: removed %d blocks, want its resource and import blocks", addr, removed)
	}
	// and out of other blocks' depends_on
	out := strings.ReplaceAll(string(f.Bytes()), addr+", ", "")
	return strings.ReplaceAll(out, ", "+addr+"]", "]")
}

// The [client] section of ceph.conf holds PVE's keyring line beside the
// user's rbd_cache lines. The adoption manages only the user's: removing
// the generated pve_ceph_config (a destroy) removes those and leaves the
// keyring, without which no client reaches Ceph.
func TestAccAdoptCeph_clientKeyringStays(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "ceph")
	const addr = "pve_ceph_config.client_conf"
	if tf := string(a.files["ceph.tf"]); regexp.MustCompile(`keyring\s*=`).MatchString(tf) {
		t.Errorf("ceph.tf manages a keyring:\n%s", tf)
	}
	steps := a.steps(t)
	e := a.env
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		steps[0], steps[1],
		{Config: withoutResource(t, a.config, addr)},
		{
			PreConfig: func() {
				conf := cephConfOf(t, e)
				if !strings.Contains(conf, "keyring = /etc/pve/priv/$cluster.$name.keyring") {
					t.Errorf("destroying %s removed the clients' keyring:\n%s", addr, conf)
				}
				if strings.Contains(conf, "rbd_cache") {
					t.Errorf("destroying %s left its settings:\n%s", addr, conf)
				}
			},
			Config: withoutResource(t, a.config, addr), PlanOnly: true,
		},
		steps[2],
	}})
}

// PVE_INSECURE in the environment does not turn the adoption's
// certificate check off: without a pin or CA for the lab's self-signed
// certificate, it refuses before any request (the password included)
// reaches the endpoint.
func TestAccAdoptEnvInsecureIgnored(t *testing.T) {
	e := acctest.HandBuiltLab(t, "reference")
	t.Setenv("PVE_INSECURE", "true")
	from := len(e.Sim.Requests())
	_, err := adopt.Run(context.Background(), adopt.Config{Endpoint: e.Endpoint(), Password: e.RootPassword()},
		adopt.Options{Areas: []string{"cluster"}})
	if err == nil {
		t.Fatal("the adoption trusted an unverified certificate")
	}
	t.Logf("refused: %v", err)
	if reqs := e.Sim.Requests()[from:]; len(reqs) > 0 {
		t.Errorf("%d requests reached the unverified endpoint (first: %s %s)", len(reqs), reqs[0].Method, reqs[0].Path)
	}
}

// PVE_SSH_TRUST_ON_FIRST_USE in the environment does not make the
// adoption (the discovery or the in-process provider) accept host keys
// known_hosts does not hold: it refuses, and known_hosts stays empty.
func TestAccAdoptEnvTrustOnFirstUseIgnored(t *testing.T) {
	e := acctest.HandBuiltLab(t, "reference")
	t.Setenv("PVE_SSH_TRUST_ON_FIRST_USE", "true")
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := adopt.Run(context.Background(), adopt.Config{Endpoint: e.Endpoint(), Password: e.RootPassword(), TLSFingerprint: e.TLSFingerprint(),
		SSH: &adopt.SSHConfig{PrivateKey: e.SSHClientKey(), KnownHostsFile: kh, Nodes: e.SSHEndpoints()}},
		adopt.Options{Areas: []string{"ceph"}})
	if err == nil {
		t.Error("the adoption reached nodes whose host keys known_hosts does not hold")
	} else {
		t.Logf("refused: %v", err)
	}
	if b, err := os.ReadFile(kh); err != nil || len(b) > 0 {
		t.Errorf("known_hosts after the adoption (%v):\n%s", err, b)
	}
}

// journal-upload.conf (a file of the systemd-journal-remote package) and
// the service's drop-in are adopted with restart_units: editing the URL
// restarts the running service on every node. The package's file is
// adopted with keep_on_destroy: removing its block leaves it on the nodes.
func TestAccAdoptNode_journalUploadRestartsAndStays(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "node")
	e := a.env
	nodes := e.Nodes
	const conf = "/etc/systemd/journal-upload.conf"
	tf := string(a.files["node.tf"])
	for _, want := range []string{`restart_units   = ["systemd-journal-upload.service"]`, "keep_on_destroy = true"} {
		if !strings.Contains(tf, want) {
			t.Errorf("node.tf lacks %q:\n%s", want, tf)
		}
	}
	url := regexp.MustCompile(`URL = https?://[^\s"\\]+`)
	if !url.MatchString(a.config) {
		t.Fatalf("no URL = in the adopted configuration:\n%s", tf)
	}
	edited := url.ReplaceAllString(a.config, "URL = https://logs2.lab.example:19532/insert/journald")
	steps := a.steps(t)
	var sshFrom int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		steps[0], steps[1],
		{
			PreConfig: func() { sshFrom = len(e.Sim.SSHCommands()) },
			Config:    edited,
		},
		{
			// Checked here: Check's terraform.State cannot hold for_each keys.
			PreConfig: func() {
				restarted := map[string]bool{}
				for _, c := range e.Sim.SSHCommands()[sshFrom:] {
					if strings.Contains(c.Line, "systemctl try-restart systemd-journal-upload.service") {
						restarted[c.Node] = true
					}
				}
				for _, n := range nodes {
					if !restarted[n] {
						t.Errorf("the URL edit did not restart systemd-journal-upload.service on %s", n)
					}
				}
			},
			Config: withoutResource(t, edited, "pve_node_file.journal_upload_conf"),
		},
		{
			PreConfig: func() {
				for _, n := range nodes {
					if _, ok := e.Sim.NodeFile(n, conf); !ok {
						t.Errorf("removing the adopted %s deleted the package's file on %s", conf, n)
					}
				}
			},
			Config: withoutResource(t, edited, "pve_node_file.journal_upload_conf"), PlanOnly: true,
		},
		steps[2],
	}})
}
