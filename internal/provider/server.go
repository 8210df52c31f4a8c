package provider

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Server serves p over protocol 6: the framework's server behind
// releasingServer. main, the acceptance tests and the adoption reader all
// serve the provider through it.
func Server(p func() provider.Provider) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		inner, err := providerserver.NewProtocol6WithError(p())()
		if err != nil {
			return nil, err
		}
		return &releasingServer{inner: inner}, nil
	}
}

// QuietLogs turns terraform-plugin-go's and the framework's loggers off
// when no TF_LOG* variable is set. Those loggers default to TRACE when
// their own variable (TF_LOG_SDK, TF_LOG_SDK_PROTO, TF_LOG_SDK_FRAMEWORK,
// TF_LOG_PROVIDER_PVE) is unset and write every line as JSON to stderr,
// where the CLI, with TF_LOG unset, drops them: the framework's trace lines
// (several per attribute of every RPC) were a third of the provider's CPU
// in a large plan. With any TF_LOG* set the SDK's defaults stay.
func QuietLogs() {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_LOG") {
			return
		}
	}
	for _, k := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_PVE"} {
		_ = os.Setenv(k, "OFF")
	}
}

// releasingServer passes each RPC's context to the framework behind a
// releasable handle and drops it when the RPC returns.
//
// terraform-plugin-framework (v1.19, proto6server.registerContext) derives
// every RPC's context with context.WithCancel and appends the cancel
// function to a slice it empties only on StopProvider, so that a stop can
// cancel in-flight work. Each cancel function keeps its context, and with it
// the whole chain above it, alive: terraform-plugin-go's loggers, fields and
// request data for every RPC of the run (a plan of 650 resources kept tens
// of MB). Behind the handle the framework keeps a few bytes per RPC; a stop
// still cancels what is in flight, since the handle forwards cancellation
// until it is released.
type releasingServer struct {
	inner tfprotov6.ProviderServer
}

var _ tfprotov6.ProviderServer = (*releasingServer)(nil)

// released is what a handle answers after its RPC returned: a context
// that is done, as gRPC's own is by then.
var released = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// rpcContext forwards to the RPC's context until release.
type rpcContext struct {
	ctx atomic.Pointer[context.Context]
}

func (c *rpcContext) get() context.Context {
	if p := c.ctx.Load(); p != nil {
		return *p
	}
	return released
}

func (c *rpcContext) Deadline() (time.Time, bool) { return c.get().Deadline() }
func (c *rpcContext) Done() <-chan struct{}       { return c.get().Done() }
func (c *rpcContext) Err() error                  { return c.get().Err() }
func (c *rpcContext) Value(key any) any           { return c.get().Value(key) }

// call runs f with a releasable handle on ctx and releases it when f
// returns.
func call[Req, Resp any](ctx context.Context, req Req, f func(context.Context, Req) (Resp, error)) (Resp, error) {
	h := &rpcContext{}
	h.ctx.Store(&ctx)
	defer h.ctx.Store(nil)
	return f(h, req)
}

func (s *releasingServer) GetMetadata(ctx context.Context, r *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return call(ctx, r, s.inner.GetMetadata)
}

func (s *releasingServer) GetProviderSchema(ctx context.Context, r *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return call(ctx, r, s.inner.GetProviderSchema)
}

func (s *releasingServer) GetResourceIdentitySchemas(ctx context.Context, r *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return call(ctx, r, s.inner.GetResourceIdentitySchemas)
}

func (s *releasingServer) ValidateProviderConfig(ctx context.Context, r *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return call(ctx, r, s.inner.ValidateProviderConfig)
}

func (s *releasingServer) ConfigureProvider(ctx context.Context, r *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return call(ctx, r, s.inner.ConfigureProvider)
}

func (s *releasingServer) StopProvider(ctx context.Context, r *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return call(ctx, r, s.inner.StopProvider)
}

func (s *releasingServer) ValidateResourceConfig(ctx context.Context, r *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return call(ctx, r, s.inner.ValidateResourceConfig)
}

func (s *releasingServer) UpgradeResourceState(ctx context.Context, r *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return call(ctx, r, s.inner.UpgradeResourceState)
}

func (s *releasingServer) ReadResource(ctx context.Context, r *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return call(ctx, r, s.inner.ReadResource)
}

func (s *releasingServer) PlanResourceChange(ctx context.Context, r *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return call(ctx, r, s.inner.PlanResourceChange)
}

func (s *releasingServer) ApplyResourceChange(ctx context.Context, r *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(ctx, r, s.inner.ApplyResourceChange)
}

func (s *releasingServer) ImportResourceState(ctx context.Context, r *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return call(ctx, r, s.inner.ImportResourceState)
}

func (s *releasingServer) MoveResourceState(ctx context.Context, r *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return call(ctx, r, s.inner.MoveResourceState)
}

func (s *releasingServer) UpgradeResourceIdentity(ctx context.Context, r *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return call(ctx, r, s.inner.UpgradeResourceIdentity)
}

func (s *releasingServer) GenerateResourceConfig(ctx context.Context, r *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return call(ctx, r, s.inner.GenerateResourceConfig)
}

func (s *releasingServer) ValidateDataResourceConfig(ctx context.Context, r *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(ctx, r, s.inner.ValidateDataResourceConfig)
}

func (s *releasingServer) ReadDataSource(ctx context.Context, r *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(ctx, r, s.inner.ReadDataSource)
}

func (s *releasingServer) CallFunction(ctx context.Context, r *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return call(ctx, r, s.inner.CallFunction)
}

func (s *releasingServer) GetFunctions(ctx context.Context, r *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return call(ctx, r, s.inner.GetFunctions)
}

func (s *releasingServer) ValidateEphemeralResourceConfig(ctx context.Context, r *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return call(ctx, r, s.inner.ValidateEphemeralResourceConfig)
}

func (s *releasingServer) OpenEphemeralResource(ctx context.Context, r *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return call(ctx, r, s.inner.OpenEphemeralResource)
}

func (s *releasingServer) RenewEphemeralResource(ctx context.Context, r *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return call(ctx, r, s.inner.RenewEphemeralResource)
}

func (s *releasingServer) CloseEphemeralResource(ctx context.Context, r *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return call(ctx, r, s.inner.CloseEphemeralResource)
}
