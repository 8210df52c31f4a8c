package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// sshModel is the provider's ssh block: how to run commands on nodes.
type sshModel struct {
	Username             types.String            `tfsdk:"username"`
	PrivateKey           types.String            `tfsdk:"private_key"`
	PrivateKeyPassphrase types.String            `tfsdk:"private_key_passphrase"`
	Password             types.String            `tfsdk:"password"`
	Agent                types.Bool              `tfsdk:"agent"`
	KnownHostsFile       types.String            `tfsdk:"known_hosts_file"`
	TrustOnFirstUse      types.Bool              `tfsdk:"trust_on_first_use"`
	Port                 types.Int64             `tfsdk:"port"`
	CommandTimeout       types.Int64             `tfsdk:"command_timeout"`
	Nodes                map[string]sshNodeModel `tfsdk:"nodes"`
}

// sshNodeModel overrides how one node is reached.
type sshNodeModel struct {
	Address types.String `tfsdk:"address"`
	Port    types.Int64  `tfsdk:"port"`
}

// Environment variables for the ssh block.
const (
	envSSHUsername       = "PVE_SSH_USERNAME"
	envSSHPrivateKey     = "PVE_SSH_PRIVATE_KEY"
	envSSHPassphrase     = "PVE_SSH_PRIVATE_KEY_PASSPHRASE"
	envSSHPassword       = "PVE_SSH_PASSWORD"
	envSSHAgent          = "PVE_SSH_AGENT"
	envSSHKnownHosts     = "PVE_SSH_KNOWN_HOSTS"
	envSSHTrustFirstUse  = "PVE_SSH_TRUST_ON_FIRST_USE"
	envSSHPort           = "PVE_SSH_PORT"
	envSSHCommandTimeout = "PVE_SSH_COMMAND_TIMEOUT"
)

// sshEnvVars are the variables whose presence alone turns SSH on.
var sshEnvVars = []string{envSSHUsername, envSSHPrivateKey, envSSHPassword, envSSHAgent}

func sshBlock() schema.Block {
	return schema.SingleNestedBlock{
		MarkdownDescription: "SSH access to the nodes, for what the Proxmox VE API does not reach (Ceph settings in the " +
			"config database and `ceph.conf`, tuned, NIC rings, files, systemd units). Without this block (and without `PVE_SSH_*` " +
			"variables) such resources fail with an error saying how to configure it; everything else works without it. " +
			"Commands run as argv with every argument quoted, only an allow-list of programs runs, and host keys are always " +
			"verified against `known_hosts_file`. A login other than `root` runs commands through `sudo -n`, which needs a " +
			"password-less sudo rule.",
		Attributes: map[string]schema.Attribute{
			"username": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Login name. Default `root`. Also `" + envSSHUsername + "`.",
			},
			"private_key": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Private key in PEM form (OpenSSH, PKCS#1, PKCS#8), such as `file(\"~/.ssh/id_ed25519\")`. " +
					"Also `" + envSSHPrivateKey + "`.",
			},
			"private_key_passphrase": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Passphrase of an encrypted `private_key`. Also `" + envSSHPassphrase + "`.",
			},
			"password": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Password of `username`, tried after keys (also for keyboard-interactive logins). For root on PVE " +
					"this is root@pam's password. Also `" + envSSHPassword + "`.",
			},
			"agent": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Use the keys of the running ssh-agent (`SSH_AUTH_SOCK`). Default `false`, but `true` when " +
					"neither `private_key` nor `password` is set and `SSH_AUTH_SOCK` is. Also `" + envSSHAgent + "`.",
			},
			"known_hosts_file": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "OpenSSH known_hosts file with the nodes' host keys. Default `~/.ssh/known_hosts`. A node whose " +
					"key differs from its entry is always refused, naming both fingerprints. Also `" + envSSHKnownHosts + "`.",
			},
			"trust_on_first_use": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Accept the host key of a node `known_hosts_file` has no entry for, and record it there. " +
					"Default `false`: unknown keys are refused, with the fingerprint to check. Also `" + envSSHTrustFirstUse + "`.",
			},
			"port": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "sshd port of the nodes. Default 22. Also `" + envSSHPort + "`.",
				Validators:          []validator.Int64{int64validator.Between(1, 65535)},
			},
			"command_timeout": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Seconds one command may run before it is interrupted. Default 600. Also `" + envSSHCommandTimeout + "`.",
				Validators:          []validator.Int64{int64validator.Between(1, 86400)},
			},
			"nodes": schema.MapNestedAttribute{
				Optional: true,
				MarkdownDescription: "Per-node overrides by node name. By default a node is reached at the address PVE reports for it " +
					"in `GET /cluster/status` and `port`.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"address": schema.StringAttribute{Optional: true, MarkdownDescription: "Host name or IP address to connect to."},
					"port": schema.Int64Attribute{Optional: true, MarkdownDescription: "sshd port of this node.",
						Validators: []validator.Int64{int64validator.Between(1, 65535)}},
				}},
			},
		},
	}
}

// sshUnknown reports the first ssh attribute whose value is not known yet.
func sshUnknown(m *sshModel) string {
	if m == nil {
		return ""
	}
	for name, v := range map[string]interface{ IsUnknown() bool }{
		"username": m.Username, "private_key": m.PrivateKey, "private_key_passphrase": m.PrivateKeyPassphrase,
		"password": m.Password, "agent": m.Agent, "known_hosts_file": m.KnownHostsFile,
		"trust_on_first_use": m.TrustOnFirstUse, "port": m.Port, "command_timeout": m.CommandTimeout,
	} {
		if v.IsUnknown() {
			return name
		}
	}
	for node, n := range m.Nodes {
		if n.Address.IsUnknown() || n.Port.IsUnknown() {
			return "nodes." + node
		}
	}
	return ""
}

// configureSSH builds the node command pool from the ssh block and the
// PVE_SSH_* variables. Without either it returns nil and the reason
// RequireNodeExec shows; deferred is set when values are not known yet.
func configureSSH(ctx context.Context, m *sshModel, pd *framework.ProviderData, allow func([]string) error, d *diag.Diagnostics) (pool *nodeexec.Pool, reason string, deferred bool) {
	configured := m != nil
	for _, v := range sshEnvVars {
		if os.Getenv(v) != "" {
			configured = true
		}
	}
	if !configured {
		return nil, "The provider has no ssh block and no PVE_SSH_* variables are set.", false
	}
	if m == nil {
		m = &sshModel{}
	}
	if attr := sshUnknown(m); attr != "" {
		return nil, fmt.Sprintf("ssh.%s depends on a value that is not known until apply, so SSH is not configured during this plan.", attr), true
	}
	sshErr := func(attr, summary, detail string) {
		d.AddAttributeError(path.Root("ssh").AtName(attr), summary, detail)
	}
	str := func(v types.String, env string) string {
		if !v.IsNull() {
			return v.ValueString()
		}
		return os.Getenv(env)
	}
	boolean := func(v types.Bool, env, attr string) bool {
		if !v.IsNull() {
			return v.ValueBool()
		}
		s := os.Getenv(env)
		if s == "" {
			return false
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			sshErr(attr, "Invalid "+env, fmt.Sprintf("%s must be true or false, got %q.", env, s))
		}
		return b
	}
	cfg := nodeexec.Config{
		User:                 strings.TrimSpace(str(m.Username, envSSHUsername)),
		PrivateKey:           nodeexec.Secret(str(m.PrivateKey, envSSHPrivateKey)),
		PrivateKeyPassphrase: nodeexec.Secret(str(m.PrivateKeyPassphrase, envSSHPassphrase)),
		Password:             nodeexec.Secret(str(m.Password, envSSHPassword)),
		Agent:                boolean(m.Agent, envSSHAgent, "agent"),
		KnownHostsFile:       str(m.KnownHostsFile, envSSHKnownHosts),
		TrustOnFirstUse:      boolean(m.TrustOnFirstUse, envSSHTrustFirstUse, "trust_on_first_use"),
		Logf:                 func(msg string, kv ...any) { tflog.Debug(ctx, msg, kvFields(kv)) },
	}
	if m.Agent.IsNull() && os.Getenv(envSSHAgent) == "" && cfg.PrivateKey == "" && cfg.Password == "" && os.Getenv("SSH_AUTH_SOCK") != "" {
		cfg.Agent = true
	}
	if cfg.PrivateKey != "" && !strings.Contains(cfg.PrivateKey.Reveal(), "-----BEGIN ") {
		sshErr("private_key", "Invalid SSH private key",
			"private_key (or "+envSSHPrivateKey+") must hold the key itself in PEM form, not a path: use file(\"~/.ssh/id_ed25519\").")
	}
	port, err := intSetting(m.Port, envSSHPort)
	if err != nil {
		sshErr("port", "Invalid "+envSSHPort, err.Error())
	}
	if port == 0 {
		port = 22
	}
	timeout, err := intSetting(m.CommandTimeout, envSSHCommandTimeout)
	if err != nil {
		sshErr("command_timeout", "Invalid "+envSSHCommandTimeout, err.Error())
	}
	if timeout > 0 {
		cfg.CommandTimeout = time.Duration(timeout) * time.Second
	}
	if cfg.KnownHostsFile == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			sshErr("known_hosts_file", "No known_hosts file",
				"The home directory is unknown ("+err.Error()+"); set known_hosts_file (or "+envSSHKnownHosts+").")
		}
		cfg.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
	} else if strings.HasPrefix(cfg.KnownHostsFile, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			cfg.KnownHostsFile = filepath.Join(home, cfg.KnownHostsFile[2:])
		}
	}
	if d.HasError() {
		return nil, "The ssh configuration is invalid.", false
	}
	cfg.Resolve = nodeAddressResolver(pd, m.Nodes, int(port))
	cfg.Allow = allow
	pool, err = nodeexec.New(cfg)
	if err != nil {
		d.AddAttributeError(path.Root("ssh"), "Invalid SSH configuration", err.Error()+".\n\n"+framework.SSHHowTo)
		return nil, "The ssh configuration is invalid.", false
	}
	return pool, "", false
}

// nodeAddressResolver reaches a node at its override from ssh.nodes, else
// at the address PVE reports for it, on port unless overridden.
func nodeAddressResolver(pd *framework.ProviderData, overrides map[string]sshNodeModel, port int) func(context.Context, string) (nodeexec.Address, error) {
	return func(ctx context.Context, node string) (nodeexec.Address, error) {
		addr := nodeexec.Address{Port: port}
		if o, ok := overrides[node]; ok {
			if !o.Port.IsNull() {
				addr.Port = int(o.Port.ValueInt64())
			}
			addr.Host = strings.TrimSpace(o.Address.ValueString())
		}
		if addr.Host == "" {
			ip, err := pd.NodeIP(ctx, node)
			if err != nil {
				return addr, err
			}
			addr.Host = ip
		}
		return addr, nil
	}
}
