// Package acctest is the acceptance-test harness. Every test body runs
// against a fresh in-process pvesim by default (plain `go test ./...`), and
// unchanged against a real cluster when PVE_ENDPOINT and TF_ACC=1 are set.
package acctest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/provider"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// Env is the PVE one test runs against.
type Env struct {
	// Sim is the simulator behind the test; nil against a real cluster.
	Sim    *pvesim.Sim
	Client *pve.Client
	Nodes  []string

	endpoint, token, fingerprint, rootPassword string
	// providerBlock replaces the default provider block (NewStandalone).
	providerBlock string
	// ssh is the provider's ssh block against the simulator's sshds
	// (ssh.go); "" against a real cluster, where PVE_SSH_* apply.
	ssh     string
	sshInfo pvesim.Info
	// KnownHosts is the known_hosts file with the simulated nodes' host
	// keys that the provider's ssh block verifies against.
	KnownHosts string
}

// Live reports whether the test runs against a real cluster.
func Live() bool { return os.Getenv("PVE_ENDPOINT") != "" && os.Getenv("TF_ACC") != "" }

// New starts a fresh simulator (clustered, three reference-lab nodes, the
// PVE release in PVESIM_RELEASE or the newest), or
// connects to the real cluster named by PVE_ENDPOINT with TF_ACC=1.
func New(t *testing.T) *Env {
	t.Helper()
	return NewWithOptions(t, pvesim.Options{})
}

// NewWithOptions is New with simulator options (ClusterName and
// PVERelease are filled in when empty); against a real cluster the options
// are ignored. Ceph tests use it for a faster simulated Ceph clock.
func NewWithOptions(t *testing.T, opts pvesim.Options) *Env {
	t.Helper()
	SetupCLI(t)
	if Live() {
		return newLive(t)
	}
	// PVESIM_RELEASE picks the PVE release to simulate (default the newest);
	// make test runs the acceptance tests against every supported release.
	if opts.ClusterName == "" {
		opts.ClusterName = "acctest"
	}
	if opts.PVERelease == "" {
		opts.PVERelease = os.Getenv("PVESIM_RELEASE")
	}
	// make testlab: a real Ceph lab behind the nodes' `ceph` and Ceph units.
	if dir := os.Getenv("PVESIM_REAL_CEPH"); dir != "" && opts.RealCeph == nil {
		opts.RealCeph = &pvesim.RealCeph{Dir: dir, Control: os.Getenv("PVESIM_REAL_CEPH_CONTROL")}
	}
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatalf("start pvesim: %v", err)
	}
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("close pvesim: %v", err)
		}
	})
	info := sim.Info()
	e := &Env{Sim: sim, endpoint: info.Endpoint, token: info.APIToken, fingerprint: info.TLSFingerprint, rootPassword: info.RootPassword}
	for _, n := range info.Nodes {
		e.Nodes = append(e.Nodes, n.Name)
	}
	e.setupSSH(t, info)
	e.Client = mustClient(t, pve.Config{Endpoint: e.endpoint, APIToken: e.token, TLSFingerprint: e.fingerprint})
	return e
}

// RootProviderConfig is a provider block that logs in as root@pam with a
// password, which PVE requires for some calls (cluster join, OSD create and
// destroy). Against a real cluster it is the PVE_* environment, which must
// then hold PVE_USERNAME=root@pam and PVE_PASSWORD.
func (e *Env) RootProviderConfig() string {
	if e.Sim == nil {
		return "provider \"pve\" {}\n"
	}
	return fmt.Sprintf("provider \"pve\" {\n  endpoint        = %q\n  username        = \"root@pam\"\n  password        = %q\n  tls_fingerprint = %q\n%s}\n",
		e.endpoint, e.rootPassword, e.fingerprint, e.ssh)
}

// RootClient is a client logged in as root@pam with a password (see
// RootProviderConfig); against a real cluster it needs PVE_USERNAME and
// PVE_PASSWORD of root@pam and skips otherwise.
func (e *Env) RootClient(t *testing.T) *pve.Client {
	t.Helper()
	if e.Sim == nil {
		if os.Getenv("PVE_USERNAME") != "root@pam" || os.Getenv("PVE_PASSWORD") == "" {
			t.Skip("needs PVE_USERNAME=root@pam and PVE_PASSWORD")
		}
		return mustClient(t, pve.Config{Endpoint: e.endpoint, Username: "root@pam", Password: os.Getenv("PVE_PASSWORD"),
			CACertPEM: os.Getenv("PVE_CA_CERT"), TLSFingerprint: os.Getenv("PVE_TLS_FINGERPRINT")})
	}
	return mustClient(t, pve.Config{Endpoint: e.endpoint, Username: "root@pam", Password: e.rootPassword, TLSFingerprint: e.fingerprint})
}

// NewStandalone starts a simulator of three standalone nodes, as before a
// cluster exists. The provider logs in to the first node as root@pam with
// its password (cluster create and join need a root@pam ticket) and
// reaches the others through standalone_nodes, each with its own root
// password and pinned certificate. e.Client uses the first node's token.
// It needs fresh nodes, so it skips against a real cluster.
func NewStandalone(t *testing.T) *Env {
	t.Helper()
	SetupCLI(t)
	if Live() {
		t.Skip("needs freshly installed standalone nodes; runs against the simulator only")
	}
	sim, err := pvesim.Start(pvesim.Options{PVERelease: os.Getenv("PVESIM_RELEASE")})
	if err != nil {
		t.Fatalf("start pvesim: %v", err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	e := &Env{Sim: sim, endpoint: info.Endpoint, token: info.APIToken, fingerprint: info.TLSFingerprint, rootPassword: info.RootPassword}
	e.setupSSH(t, info)
	var b strings.Builder
	fmt.Fprintf(&b, "provider \"pve\" {\n  endpoint        = %q\n  username        = \"root@pam\"\n  password        = %q\n  tls_fingerprint = %q\n  standalone_nodes = {\n",
		info.Endpoint, info.RootPassword, info.TLSFingerprint)
	for i, n := range info.Nodes {
		e.Nodes = append(e.Nodes, n.Name)
		if i == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s = {\n      endpoint        = %q\n      password        = %q\n      tls_fingerprint = %q\n    }\n",
			n.Name, n.Endpoint, n.RootPassword, n.TLSFingerprint)
	}
	b.WriteString("  }\n" + e.ssh + "}\n")
	e.providerBlock = b.String()
	e.Client = mustClient(t, pve.Config{Endpoint: e.endpoint, APIToken: e.token, TLSFingerprint: e.fingerprint})
	return e
}

// TokenProviderConfig is a provider block that uses the first node's API
// token instead of root@pam's password.
func (e *Env) TokenProviderConfig() string {
	return fmt.Sprintf("provider \"pve\" {\n  endpoint        = %q\n  api_token       = %q\n  tls_fingerprint = %q\n%s}\n", e.endpoint, e.token, e.fingerprint, e.ssh)
}

func newLive(t *testing.T) *Env {
	e := &Env{endpoint: os.Getenv("PVE_ENDPOINT")}
	cfg := pve.Config{
		Endpoint:       e.endpoint,
		APIToken:       os.Getenv("PVE_API_TOKEN"),
		Username:       os.Getenv("PVE_USERNAME"),
		Password:       os.Getenv("PVE_PASSWORD"),
		CACertPEM:      os.Getenv("PVE_CA_CERT"),
		TLSFingerprint: os.Getenv("PVE_TLS_FINGERPRINT"),
		Insecure:       os.Getenv("PVE_INSECURE") == "true" || os.Getenv("PVE_INSECURE") == "1",
	}
	e.Client = mustClient(t, cfg)
	if s := os.Getenv("PVE_ACC_NODES"); s != "" {
		e.Nodes = strings.Split(s, ",")
	} else {
		nodes, err := e.Client.Nodes(context.Background())
		if err != nil {
			t.Fatalf("list nodes of %s: %v", e.endpoint, err)
		}
		for _, n := range nodes {
			e.Nodes = append(e.Nodes, n.Node)
		}
	}
	return e
}

func mustClient(t *testing.T, cfg pve.Config) *pve.Client {
	t.Helper()
	c, err := pve.NewClient(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := c.Authenticate(context.Background()); err != nil {
		t.Fatalf("authenticate to %s: %v", cfg.Endpoint, err)
	}
	return c
}

// ProviderConfig is the provider block for this environment. Against the
// simulator it pins the simulator's certificate; it never sets insecure.
func (e *Env) ProviderConfig() string {
	if e.providerBlock != "" {
		return e.providerBlock
	}
	if e.Sim == nil {
		return "provider \"pve\" {}\n" // everything from PVE_* variables
	}
	return fmt.Sprintf(`provider "pve" {
  endpoint        = %q
  api_token       = %q
  tls_fingerprint = %q
%s}
`, e.endpoint, e.token, e.fingerprint, e.ssh)
}

// Config joins the provider block and the given configuration parts.
func (e *Env) Config(parts ...string) string {
	return e.ProviderConfig() + strings.Join(parts, "\n")
}

// Node returns the i-th node, skipping the test when the cluster has fewer.
func (e *Env) Node(t *testing.T, i int) string {
	t.Helper()
	if i >= len(e.Nodes) {
		t.Skipf("test needs %d nodes; the cluster has %d", i+1, len(e.Nodes))
	}
	return e.Nodes[i]
}

// NICs returns n physical NICs the test may reconfigure. Against a real
// cluster they must be named in PVE_ACC_NICS (comma-separated), because
// reconfiguring a NIC in use can cut the node off; otherwise the test skips.
func (e *Env) NICs(t *testing.T, n int) []string {
	t.Helper()
	var nics []string
	if e.Sim != nil {
		nics = []string{"bcm5720p0", "bcm5720p1", "cx354ap1", "i219"}
	} else if s := os.Getenv("PVE_ACC_NICS"); s != "" {
		nics = strings.Split(s, ",")
	}
	if len(nics) < n {
		t.Skipf("test needs %d spare physical NICs; set PVE_ACC_NICS (comma-separated) to NICs it may reconfigure", n)
	}
	return nics[:n]
}

// ProviderFactories serves the provider in-process to the Terraform CLI.
func ProviderFactories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"pve": provider.Server(provider.New("acctest")),
	}
}

// Run runs tc against this environment. Against the simulator it needs no
// TF_ACC; against a real cluster it runs only with TF_ACC=1.
func (e *Env) Run(t *testing.T, tc resource.TestCase) {
	t.Helper()
	if tc.ProtoV6ProviderFactories == nil {
		tc.ProtoV6ProviderFactories = ProviderFactories()
	}
	tc.IsUnitTest = e.Sim != nil
	resource.Test(t, tc)
}
