package cluster

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// NewAPIEndpointDataSource is pve_api_endpoint.
func NewAPIEndpointDataSource() datasource.DataSource {
	return &apiEndpointDataSource{framework.DataSourceBase{TypeName: "pve_api_endpoint"}}
}

// apiEndpointDataSource waits for a PVE API that is not yet up (a node
// being installed, a nested lab's VMs) and reports the fingerprint of the
// certificate it presents, for another provider block's tls_fingerprint.
// It sends no credentials: any HTTP answer of pveproxy, a 401 included,
// means the API is up.
type apiEndpointDataSource struct{ framework.DataSourceBase }

type apiEndpointModel struct {
	Endpoint       types.String `tfsdk:"endpoint"`
	Timeout        types.String `tfsdk:"timeout"`
	TLSFingerprint types.String `tfsdk:"tls_fingerprint"`
	Waited         types.String `tfsdk:"waited"`
}

const defaultAPIWait = 30 * time.Minute

func (d *apiEndpointDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Waits until a PVE API endpoint answers and reports the SHA-256 fingerprint of its TLS certificate, in the form " +
			"the provider's `tls_fingerprint` takes. For nodes that come up during the apply, such as the nested nodes of " +
			"`examples/nested-lab`: give it `depends_on` on what starts them, so that Terraform reads it after they started. " +
			"It sends no credentials and trusts nothing: it only reports the certificate the endpoint presents; compare it with " +
			"the node's console (`pvenode cert info`) where the network between is not yours. Any HTTP answer counts as up (PVE " +
			"answers 401 without a login).",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The API's URL, such as `https://172.27.2.10:8006`.",
				Validators:          []validator.String{stringvalidator.RegexMatches(httpsEndpointRE, "must be an https:// URL of a host and port, such as https://172.27.2.10:8006")},
			},
			"timeout": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "How long to wait, a Go duration such as `30m` (the default) or `90s`.",
				Validators:          []validator.String{framework.StringCheck("a Go duration such as 30m or 90s", "Invalid timeout", checkWait)},
			},
			"tls_fingerprint": schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 fingerprint of the certificate, `AA:BB:...`."},
			"waited":          schema.StringAttribute{Computed: true, MarkdownDescription: "How long the endpoint took to answer, such as `4m10s`."},
		},
	}
}

func (d *apiEndpointDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m apiEndpointModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	wait := defaultAPIWait
	if !m.Timeout.IsNull() {
		wait, _ = time.ParseDuration(m.Timeout.ValueString()) // validated
	}
	endpoint := strings.TrimSuffix(m.Endpoint.ValueString(), "/")
	start := time.Now()
	fp, err := awaitAPI(ctx, endpoint, wait, 5*time.Second)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Unable to reach PVE API "+endpoint, err.Error())
		return
	}
	m.TLSFingerprint = types.StringValue(fp)
	m.Waited = types.StringValue(time.Since(start).Round(time.Second).String())
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// awaitAPI asks endpoint every interval until it answers over TLS with
// any HTTP status, and returns its certificate's fingerprint.
func awaitAPI(ctx context.Context, endpoint string, wait, interval time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tr := &http.Transport{
		// Nothing secret is sent; the certificate is only reported.
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var last error
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/api2/json/version", nil)
		if err != nil {
			return "", err
		}
		res, err := hc.Do(req)
		if err == nil {
			res.Body.Close()
			if res.TLS == nil || len(res.TLS.PeerCertificates) == 0 {
				return "", fmt.Errorf("%s answered without a TLS certificate", endpoint)
			}
			sum := sha256.Sum256(res.TLS.PeerCertificates[0].Raw)
			return pve.FormatFingerprint(sum[:]), nil
		}
		last = err
		tflog.Info(ctx, "PVE API not answering yet", map[string]any{"endpoint": endpoint, "attempt": attempt, "error": err.Error()})
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return "", fmt.Errorf("no answer within %s (last error: %w). Check that the node is up and that this machine reaches %s", wait, last, endpoint)
			}
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

var httpsEndpointRE = regexp.MustCompile(`^https://[^/\s]+/?$`)

// checkWait accepts a positive Go duration.
func checkWait(s string) error {
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Errorf("%q is not a positive duration: use a number with a unit, such as 30m, 90s or 1h30m", s)
	}
	return nil
}
