package acctest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// setupSSH writes a known_hosts file with the simulated nodes' host keys
// and the provider's ssh block: root with the lab's key, host keys
// verified, each node at its simulated sshd.
func (e *Env) setupSSH(t *testing.T, info pvesim.Info) {
	t.Helper()
	if info.SSHClientKey == "" {
		return
	}
	e.sshInfo = info
	e.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	var kh, nodes strings.Builder
	for _, n := range info.Nodes {
		host, port, err := net.SplitHostPort(n.SSHEndpoint)
		if err != nil {
			t.Fatalf("ssh endpoint of %s: %v", n.Name, err)
		}
		fmt.Fprintf(&kh, "[%s]:%s %s\n", host, port, n.SSHHostKey)
		fmt.Fprintf(&nodes, "      %s = { address = %q, port = %s }\n", n.Name, host, port)
	}
	if err := os.WriteFile(e.KnownHosts, []byte(kh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e.ssh = fmt.Sprintf("  ssh {\n    username         = \"root\"\n    private_key      = %q\n    known_hosts_file = %q\n    nodes = {\n%s    }\n  }\n",
		info.SSHClientKey, e.KnownHosts, nodes.String())
}

// SSHBlock is the provider's ssh block of this environment (against a
// real cluster: "", the PVE_SSH_* variables apply).
func (e *Env) SSHBlock() string { return e.ssh }

// ProviderConfigWithoutSSH is ProviderConfig without the ssh block, for
// tests of what happens when SSH is not configured. It skips against a
// real cluster, whose PVE_SSH_* variables would configure it anyway.
func (e *Env) ProviderConfigWithoutSSH(t *testing.T) string {
	t.Helper()
	if e.Sim == nil {
		t.Skip("needs the simulator: PVE_SSH_* variables configure SSH against a real cluster")
	}
	return strings.Replace(e.ProviderConfig(), e.ssh, "", 1)
}

// NodeExec returns a command runner on the nodes, as the provider
// configures it, for tests that check what a node has (as e.Client does
// for the API). Against a real cluster it uses PVE_SSH_USERNAME,
// PVE_SSH_PRIVATE_KEY (or PVE_SSH_PASSWORD), PVE_SSH_KNOWN_HOSTS and the
// addresses PVE reports, and skips without them.
func (e *Env) NodeExec(t *testing.T) *nodeexec.Pool {
	t.Helper()
	var cfg nodeexec.Config
	if e.Sim != nil {
		if e.sshInfo.SSHClientKey == "" {
			t.Skip("the simulator runs without SSH")
		}
		endpoints := map[string]string{}
		for _, n := range e.sshInfo.Nodes {
			endpoints[n.Name] = n.SSHEndpoint
		}
		cfg = nodeexec.Config{
			PrivateKey:     nodeexec.Secret(e.sshInfo.SSHClientKey),
			KnownHostsFile: e.KnownHosts,
			Resolve: func(_ context.Context, node string) (nodeexec.Address, error) {
				ep, ok := endpoints[node]
				if !ok {
					return nodeexec.Address{}, fmt.Errorf("no simulated node %s", node)
				}
				host, port, _ := net.SplitHostPort(ep)
				p, _ := strconv.Atoi(port)
				return nodeexec.Address{Host: host, Port: p}, nil
			},
		}
	} else {
		if os.Getenv("PVE_SSH_PRIVATE_KEY") == "" && os.Getenv("PVE_SSH_PASSWORD") == "" {
			t.Skip("needs PVE_SSH_PRIVATE_KEY or PVE_SSH_PASSWORD (and PVE_SSH_KNOWN_HOSTS) to check the nodes over SSH")
		}
		home, _ := os.UserHomeDir()
		cfg = nodeexec.Config{
			User:           os.Getenv("PVE_SSH_USERNAME"),
			PrivateKey:     nodeexec.Secret(os.Getenv("PVE_SSH_PRIVATE_KEY")),
			Password:       nodeexec.Secret(os.Getenv("PVE_SSH_PASSWORD")),
			KnownHostsFile: os.Getenv("PVE_SSH_KNOWN_HOSTS"),
			Resolve: func(ctx context.Context, node string) (nodeexec.Address, error) {
				st, err := e.Client.ClusterStatus(ctx)
				if err != nil {
					return nodeexec.Address{}, err
				}
				if n := st.Node(node); n != nil && n.IP != "" {
					return nodeexec.Address{Host: n.IP}, nil
				}
				return nodeexec.Address{}, fmt.Errorf("no address for node %s in /cluster/status", node)
			},
		}
		if cfg.KnownHostsFile == "" {
			cfg.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
		}
	}
	cfg.CommandTimeout = 2 * time.Minute
	p, err := nodeexec.New(cfg)
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
