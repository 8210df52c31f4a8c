// Package provider defines the pve provider: its configuration and the
// resources and data sources it registers.
package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/service/apt"
	"github.com/pvelab/terraform-provider-pve/internal/service/ceph"
	"github.com/pvelab/terraform-provider-pve/internal/service/certificate"
	"github.com/pvelab/terraform-provider-pve/internal/service/cluster"
	"github.com/pvelab/terraform-provider-pve/internal/service/clusteroptions"
	"github.com/pvelab/terraform-provider-pve/internal/service/ha"
	"github.com/pvelab/terraform-provider-pve/internal/service/network"
	"github.com/pvelab/terraform-provider-pve/internal/service/node"
	"github.com/pvelab/terraform-provider-pve/internal/service/qemu"
	"github.com/pvelab/terraform-provider-pve/internal/service/storage"
)

var _ provider.Provider = (*pveProvider)(nil)

// New returns a constructor for the provider, as providerserver expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &pveProvider{version: version} }
}

// NewReadOnly is New for a provider that cannot change a cluster: its API
// clients refuse every write before sending it (pve.Config.ReadOnly) and
// each SSH command must pass allowSSH. The adoption command runs the
// resources' own import and Read through it (internal/adopt).
func NewReadOnly(version string, allowSSH func(argv []string) error) func() provider.Provider {
	return func() provider.Provider { return &pveProvider{version: version, readOnly: true, allowSSH: allowSSH} }
}

type pveProvider struct {
	version  string
	readOnly bool
	allowSSH func(argv []string) error
}

type providerModel struct {
	Endpoint            types.String                   `tfsdk:"endpoint"`
	APIToken            types.String                   `tfsdk:"api_token"`
	Username            types.String                   `tfsdk:"username"`
	Password            types.String                   `tfsdk:"password"`
	Insecure            types.Bool                     `tfsdk:"insecure"`
	CACert              types.String                   `tfsdk:"ca_cert"`
	TLSFingerprint      types.String                   `tfsdk:"tls_fingerprint"`
	RequestTimeout      types.Int64                    `tfsdk:"request_timeout"`
	MaxParallelRequests types.Int64                    `tfsdk:"max_parallel_requests"`
	StandaloneNodes     map[string]standaloneNodeModel `tfsdk:"standalone_nodes"`
	SSH                 *sshModel                      `tfsdk:"ssh"`
}

// standaloneNodeModel is how to reach one node through its own API while it
// is not (yet) a member of the endpoint's cluster.
type standaloneNodeModel struct {
	Endpoint       types.String `tfsdk:"endpoint"`
	APIToken       types.String `tfsdk:"api_token"`
	Username       types.String `tfsdk:"username"`
	Password       types.String `tfsdk:"password"`
	CACert         types.String `tfsdk:"ca_cert"`
	TLSFingerprint types.String `tfsdk:"tls_fingerprint"`
	Insecure       types.Bool   `tfsdk:"insecure"`
}

// Environment variables that stand in for each provider argument.
const (
	envEndpoint       = "PVE_ENDPOINT"
	envAPIToken       = "PVE_API_TOKEN"
	envUsername       = "PVE_USERNAME"
	envPassword       = "PVE_PASSWORD"
	envInsecure       = "PVE_INSECURE"
	envCACert         = "PVE_CA_CERT"
	envTLSFingerprint = "PVE_TLS_FINGERPRINT"
	envTimeout        = "PVE_REQUEST_TIMEOUT"
	envMaxParallel    = "PVE_MAX_PARALLEL_REQUESTS"
)

func (p *pveProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "pve"
	resp.Version = p.version
}

func (p *pveProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages a Proxmox VE cluster through its HTTP API. " +
			"Authenticate with an API token, or with a username and password (a ticket) where PVE reserves a call for `root@pam`.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "URL of a PVE node's API, such as `https://pve1.example.com:8006`. Also `" + envEndpoint + "`.",
			},
			"api_token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "API token as `USER@REALM!TOKENID=SECRET`. Also `" + envAPIToken + "`. PVE refuses tokens for the calls it reserves for `root@pam` (cluster create/join, OSD create/destroy); use `username`/`password` for those.",
				Validators:          []validator.String{apiTokenValidator{}},
			},
			"username": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "User for ticket authentication, such as `root@pam`. Also `" + envUsername + "`.",
				Validators:          []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("password"))},
			},
			"password": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Password for `username`. Also `" + envPassword + "`.",
			},
			"insecure": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Skip TLS certificate verification. Prefer `tls_fingerprint` or `ca_cert`, which trust a self-signed PVE certificate without turning verification off. Default `false`. Also `" + envInsecure + "`.",
			},
			"ca_cert": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM of a CA to trust, such as the cluster's `/etc/pve/pve-root-ca.pem`. Also `" + envCACert + "`.",
			},
			"tls_fingerprint": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "SHA-256 fingerprint of the node's certificate (`AA:BB:...`, as the PVE UI shows it under Certificates); the connection is trusted only if the certificate matches. Also `" + envTLSFingerprint + "`.",
			},
			"request_timeout": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Seconds one API request may take. Default 60. Also `" + envTimeout + "`.",
				Validators:          []validator.Int64{int64validator.Between(1, 3600)},
			},
			"standalone_nodes": schema.MapNestedAttribute{
				Optional: true,
				MarkdownDescription: "Nodes that are not members of the endpoint's cluster yet, by node name, each reached through its own API " +
					"until it joins: for configuring a node's network before it joins, and for `pve_cluster_node` to join it. " +
					"Once the endpoint lists a node, the provider reaches it through the endpoint and ignores its entry here " +
					"(PVE replaces a node's certificate when it joins, so its old pin would no longer match anyway).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"endpoint": schema.StringAttribute{Required: true, MarkdownDescription: "API URL of the node, such as `https://z2g4b.lab.example:8006`."},
					"api_token": schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "API token of the node (its own, before it joins).",
						Validators: []validator.String{apiTokenValidator{}}},
					"username":        schema.StringAttribute{Optional: true, MarkdownDescription: "User for ticket authentication; default `root@pam` when `password` is set (joining a cluster needs root@pam)."},
					"password":        schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "Password of `username` on that node."},
					"ca_cert":         schema.StringAttribute{Optional: true, MarkdownDescription: "PEM of the node's CA (`/etc/pve/pve-root-ca.pem` on that node)."},
					"tls_fingerprint": schema.StringAttribute{Optional: true, MarkdownDescription: "SHA-256 fingerprint of the node's certificate."},
					"insecure":        schema.BoolAttribute{Optional: true, MarkdownDescription: "Skip certificate checks for this node (prefer `tls_fingerprint`)."},
				}},
			},
			"max_parallel_requests": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "How many API requests may run at once against one node. Default 4. Also `" + envMaxParallel + "`.",
				Validators:          []validator.Int64{int64validator.Between(1, 64)},
			},
		},
		Blocks: map[string]schema.Block{"ssh": sshBlock()},
	}
}

func (p *pveProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	for name, v := range map[string]interface{ IsUnknown() bool }{
		"endpoint": m.Endpoint, "api_token": m.APIToken, "username": m.Username, "password": m.Password,
		"ca_cert": m.CACert, "tls_fingerprint": m.TLSFingerprint, "insecure": m.Insecure,
	} {
		if v.IsUnknown() {
			// Values from other resources are only known at apply; resources
			// report "Provider not configured" if they are used meanwhile.
			tflog.Warn(ctx, "provider argument unknown during plan; not configuring", map[string]any{"attribute": name})
			return
		}
	}

	cfg, diags := buildConfig(m)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg.UserAgent = "terraform-provider-pve/" + p.version
	cfg.ReadOnly = p.readOnly
	// One record of task lengths for the endpoint's client and the
	// standalone nodes' (standaloneConfig copies cfg): a type timed on one
	// node paces the waits on every node.
	cfg.TaskTimes = pve.NewTaskTimes()
	cfg.Logger = func(msg string, kv ...any) { tflog.Debug(ctx, msg, kvFields(kv)) }
	// pd is set below, before any resource can send a write.
	var pd *framework.ProviderData
	cfg.AfterWrite = func(method, path string) {
		if pd != nil {
			pd.AfterWrite(method, path)
		}
	}

	client, err := pve.NewClient(cfg)
	if err != nil {
		resp.Diagnostics.AddError("Invalid provider configuration", err.Error())
		return
	}
	if err := client.Authenticate(ctx); err != nil {
		resp.Diagnostics.AddError("Unable to connect to Proxmox VE at "+cfg.Endpoint, err.Error())
		return
	}
	standalone := map[string]*pve.Client{}
	for name, n := range m.StandaloneNodes {
		nc, err := pve.NewClient(standaloneConfig(cfg, n))
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("standalone_nodes").AtMapKey(name), "Invalid standalone node "+name, err.Error())
			continue
		}
		// Not authenticated here: an unreachable node must not fail plans
		// that do not touch it; its first request reports the problem.
		standalone[name] = nc
	}
	if resp.Diagnostics.HasError() {
		return
	}
	pd = framework.NewProviderData(client, standalone)
	pd.NodeExec, pd.NodeExecUnavailable, pd.NodeExecDeferred = configureSSH(ctx, m.SSH, pd, p.sshGuard(), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.ResourceData = pd
	resp.DataSourceData = pd
}

// sshGuard is the check every SSH command passes: none, or for a
// read-only provider allowSSH (refusing everything when it is unset).
func (p *pveProvider) sshGuard() func([]string) error {
	if !p.readOnly {
		return nil
	}
	if p.allowSSH == nil {
		return func(argv []string) error { return fmt.Errorf("read-only provider: refusing %v", argv) }
	}
	return p.allowSSH
}

// buildConfig merges the configuration with the environment (configuration
// wins) and checks what can be checked without contacting PVE.
func buildConfig(m providerModel) (pve.Config, diag.Diagnostics) {
	var d diag.Diagnostics
	str := func(v types.String, env string) string {
		if !v.IsNull() {
			return v.ValueString()
		}
		return os.Getenv(env)
	}
	cfg := pve.Config{
		Endpoint:       strings.TrimSpace(str(m.Endpoint, envEndpoint)),
		APIToken:       strings.TrimSpace(str(m.APIToken, envAPIToken)),
		Username:       str(m.Username, envUsername),
		Password:       str(m.Password, envPassword),
		CACertPEM:      str(m.CACert, envCACert),
		TLSFingerprint: strings.TrimSpace(str(m.TLSFingerprint, envTLSFingerprint)),
	}
	if !m.Insecure.IsNull() {
		cfg.Insecure = m.Insecure.ValueBool()
	} else if v := os.Getenv(envInsecure); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			attrError(&d, "insecure", "Invalid "+envInsecure, fmt.Sprintf("%s must be true or false, got %q.", envInsecure, v))
		}
		cfg.Insecure = b
	}
	timeout, err := intSetting(m.RequestTimeout, envTimeout)
	if err != nil {
		attrError(&d, "request_timeout", "Invalid "+envTimeout, err.Error())
	}
	if timeout > 0 {
		cfg.RequestTimeout = time.Duration(timeout) * time.Second
	}
	parallel, err := intSetting(m.MaxParallelRequests, envMaxParallel)
	if err != nil {
		attrError(&d, "max_parallel_requests", "Invalid "+envMaxParallel, err.Error())
	}
	cfg.MaxParallelPerNode = int(parallel)

	if cfg.Endpoint == "" {
		attrError(&d, "endpoint", "Missing Proxmox VE endpoint",
			"Set endpoint in the provider block (or "+envEndpoint+") to a node's API URL, such as https://pve1.example.com:8006.")
	}
	if cfg.APIToken != "" {
		if _, _, err := pve.ParseAPIToken(cfg.APIToken); err != nil {
			attrError(&d, "api_token", "Malformed API token", err.Error())
		}
	}
	if cfg.APIToken == "" && (cfg.Username == "" || cfg.Password == "") {
		attrError(&d, "api_token", "Missing Proxmox VE credentials",
			"Set api_token (or "+envAPIToken+") to USER@REALM!TOKENID=SECRET, or username and password (or "+envUsername+" and "+envPassword+") for a ticket. Calls PVE reserves for root@pam need username = \"root@pam\" and its password.")
	}
	return cfg, d
}

// standaloneConfig builds the client settings of one standalone node; the
// limits and timeouts are the provider's.
func standaloneConfig(base pve.Config, n standaloneNodeModel) pve.Config {
	cfg := base
	cfg.Endpoint = strings.TrimSpace(n.Endpoint.ValueString())
	cfg.APIToken = n.APIToken.ValueString()
	cfg.Password = n.Password.ValueString()
	cfg.Username = n.Username.ValueString()
	if cfg.Username == "" && cfg.Password != "" {
		cfg.Username = "root@pam"
	}
	cfg.CACertPEM = n.CACert.ValueString()
	cfg.TLSFingerprint = strings.TrimSpace(n.TLSFingerprint.ValueString())
	cfg.Insecure = n.Insecure.ValueBool()
	return cfg
}

func intSetting(v types.Int64, env string) (int64, error) {
	if !v.IsNull() {
		return v.ValueInt64(), nil
	}
	s := os.Getenv(env)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a positive whole number, got %q", env, s)
	}
	return n, nil
}

func kvFields(kv []any) map[string]any {
	f := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		f[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return f
}

func (p *pveProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		network.NewNodeNetworkResource,
		network.NewNodeNetworkConfigResource,
		certificate.NewNodeCertificateResource,
		certificate.NewACMEAccountResource,
		certificate.NewNodeACMEResource,
		certificate.NewACMEPluginResource,
		cluster.NewClusterResource,
		cluster.NewClusterNodeResource,
		clusteroptions.NewResource,
		ha.NewResource,
		ha.NewRuleResource,
		ha.NewGroupResource,
		apt.NewResource,
		node.NewTunedProfileResource,
		node.NewNICRingResource,
		node.NewTrustedCAResource,
		node.NewFileResource,
		node.NewServiceResource,
		ceph.NewClusterResource,
		ceph.NewMonitorResource,
		ceph.NewManagerResource,
		ceph.NewPoolResource,
		ceph.NewFlagsResource,
		ceph.NewConfigResource,
		ceph.NewOSDResource,
		ceph.NewInstallResource,
		storage.NewStorageResource,
		storage.NewLVMThinResource,
		storage.NewZFSResource,
		storage.NewStorageISOResource,
		qemu.NewVMResource,
		qemu.NewVMDiskResource,
	}
}

func (p *pveProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		network.NewNodeNetworksDataSource,
		cluster.NewNodesDataSource,
		cluster.NewAPIEndpointDataSource,
		cluster.NewClusterStatusDataSource,
		cluster.NewClusterJoinInfoDataSource,
		cluster.NewVersionDataSource,
		ceph.NewStatusDataSource,
		ceph.NewOSDsDataSource,
		ceph.NewNodeDisksDataSource,
		node.NewDiskBenchmarkDataSource,
		storage.NewStoragesDataSource,
		qemu.NewVMDataSource,
		qemu.NewVMsDataSource,
	}
}
