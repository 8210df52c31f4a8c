package framework

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// ResourceBase gives a resource its type name and provider data; embed it
// and set TypeName in the constructor.
type ResourceBase struct {
	TypeName string
	PD       *ProviderData
}

// Metadata implements resource.Resource.
func (b *ResourceBase) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = b.TypeName
}

// Configure implements resource.ResourceWithConfigure.
func (b *ResourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.PD = ProviderDataFrom(req.ProviderData, &resp.Diagnostics)
}

// DataSourceBase is ResourceBase for data sources.
type DataSourceBase struct {
	TypeName string
	PD       *ProviderData
}

// Metadata implements datasource.DataSource.
func (b *DataSourceBase) Metadata(_ context.Context, _ datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = b.TypeName
}

// Configure implements datasource.DataSourceWithConfigure.
func (b *DataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.PD = ProviderDataFrom(req.ProviderData, &resp.Diagnostics)
}

// Client is the endpoint's client, or nil after adding "Provider not
// configured" to diags (RequireConfigured).
func (b *ResourceBase) Client(diags *diag.Diagnostics) *pve.Client {
	return configuredClient(b.PD, diags)
}

// NodeClient is the client that reaches node (ProviderData.NodeClient), or
// nil after adding the reason to diags: the provider is not configured, or
// deciding how to reach the node failed ("Unable to reach node <node>").
func (b *ResourceBase) NodeClient(ctx context.Context, node string, diags *diag.Diagnostics) *pve.Client {
	return nodeClient(ctx, b.PD, node, diags)
}

// Client is ResourceBase.Client for data sources.
func (b *DataSourceBase) Client(diags *diag.Diagnostics) *pve.Client {
	return configuredClient(b.PD, diags)
}

// NodeClient is ResourceBase.NodeClient for data sources.
func (b *DataSourceBase) NodeClient(ctx context.Context, node string, diags *diag.Diagnostics) *pve.Client {
	return nodeClient(ctx, b.PD, node, diags)
}

func configuredClient(pd *ProviderData, diags *diag.Diagnostics) *pve.Client {
	if !RequireConfigured(pd, diags) {
		return nil
	}
	return pd.Client
}

func nodeClient(ctx context.Context, pd *ProviderData, node string, diags *diag.Diagnostics) *pve.Client {
	if !RequireConfigured(pd, diags) {
		return nil
	}
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		AddUnable(diags, "reach", "node", node, err)
		return nil
	}
	return c
}
