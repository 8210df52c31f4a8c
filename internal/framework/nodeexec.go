package framework

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// SSHHowTo tells a user how to give the provider SSH access to the nodes.
const SSHHowTo = "Give the provider SSH access to the nodes with an ssh block in the provider configuration, for example\n\n" +
	"  provider \"pve\" {\n" +
	"    # endpoint, credentials ...\n" +
	"    ssh {\n" +
	"      username    = \"root\"\n" +
	"      private_key = file(\"~/.ssh/id_ed25519\")\n" +
	"    }\n" +
	"  }\n\n" +
	"or with environment variables: PVE_SSH_USERNAME and PVE_SSH_PRIVATE_KEY (or PVE_SSH_PASSWORD, or PVE_SSH_AGENT=true " +
	"with a running ssh-agent). Node addresses come from the API (GET /cluster/status); override them per node with " +
	"ssh.nodes. Host keys are checked against ~/.ssh/known_hosts (known_hosts_file, PVE_SSH_KNOWN_HOSTS): add the nodes' " +
	"keys there (on a PVE node: /etc/ssh/ssh_known_hosts), or set trust_on_first_use = true to record them on first contact."

// RequireNodeExec reports, as an error titled "<what> needs SSH access to
// the nodes", that the provider cannot run commands on nodes, and how to
// configure it. It returns whether pd.NodeExec is usable.
func RequireNodeExec(pd *ProviderData, diags *diag.Diagnostics, what string) bool {
	if pd != nil && pd.NodeExec != nil {
		return true
	}
	reason := "The provider has no SSH configuration."
	if pd != nil && pd.NodeExecUnavailable != "" {
		reason = pd.NodeExecUnavailable
	}
	diags.AddError(what+" needs SSH access to the nodes",
		fmt.Sprintf("%s It changes parts of the node the Proxmox VE API does not reach, over SSH.\n\n%s", reason, SSHHowTo))
	return false
}

// PlanRequireNodeExec is RequireNodeExec for ModifyPlan: it stays quiet
// while the provider is not configured yet or its SSH settings are not
// known until apply, so that the error comes at plan time when it can.
func PlanRequireNodeExec(pd *ProviderData, diags *diag.Diagnostics, what string) {
	if pd == nil || pd.Client == nil || pd.NodeExecDeferred {
		return
	}
	RequireNodeExec(pd, diags, what)
}

// NodeIP returns the address PVE reports for node in GET /cluster/status
// (its corosync/management address), read once per command through the
// node's client: the endpoint for members, the node's own API for
// standalone nodes.
func (pd *ProviderData) NodeIP(ctx context.Context, node string) (string, error) {
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return "", err
	}
	st, err := pd.ClusterStatus(ctx, c)
	if err != nil {
		return "", fmt.Errorf("read the address of node %s (GET /cluster/status of %s): %w", node, c.Endpoint(), err)
	}
	var ip string
	if n := st.Node(node); n != nil {
		ip = n.IP
	}
	if ip == "" {
		return "", fmt.Errorf("%s does not report an address for node %s in GET /cluster/status; set ssh.nodes.%s.address in the provider configuration", c.Endpoint(), node, node)
	}
	return ip, nil
}

// NodeNetworkChanged drops what the provider holds about how node is
// reached, after a reload that changed its management path: the node
// addresses read from GET /cluster/status and the cached SSH connection
// (one that hung through the change must not be reused).
func (pd *ProviderData) NodeNetworkChanged(ctx context.Context, node string) {
	pd.Reads.Invalidate(clusterStatusCacheKey(pd.Client))
	if c, err := pd.NodeClient(ctx, node); err == nil {
		pd.Reads.Invalidate(clusterStatusCacheKey(c))
	}
	if pd.NodeExec != nil {
		pd.NodeExec.Forget(node)
	}
}
