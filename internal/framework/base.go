package framework

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
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
