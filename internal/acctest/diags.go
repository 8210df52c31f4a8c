package acctest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/provider"
)

// Diag is one diagnostic the provider returned to the CLI.
type Diag struct {
	RPC      string // "plan", "apply" or "read"
	Type     string // resource type, such as pve_ceph_config
	Severity tfprotov6.DiagnosticSeverity
	Summary  string
	Detail   string
}

func (d Diag) String() string {
	return fmt.Sprintf("%s %s %s: %s: %s", d.RPC, d.Type, d.Severity, d.Summary, d.Detail)
}

// DiagRecorder records the diagnostics the provider sends the CLI, which
// terraform-plugin-testing does not show a test: Terraform prints warnings
// from plan and apply in its output, and tests assert them here.
type DiagRecorder struct {
	mu    sync.Mutex
	diags []Diag
}

// RecordDiagnostics makes tc serve the provider through a recorder and
// returns it.
func RecordDiagnostics(tc *resource.TestCase) *DiagRecorder {
	r := &DiagRecorder{}
	inner := provider.Server(provider.New("acctest"))
	tc.ProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
		"pve": func() (tfprotov6.ProviderServer, error) {
			s, err := inner()
			if err != nil {
				return nil, err
			}
			return &recordingServer{ProviderServer: s, rec: r}, nil
		},
	}
	return r
}

func (r *DiagRecorder) add(rpc, typ string, ds []*tfprotov6.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range ds {
		if d != nil {
			r.diags = append(r.diags, Diag{RPC: rpc, Type: typ, Severity: d.Severity, Summary: d.Summary, Detail: d.Detail})
		}
	}
}

// Reset forgets what was recorded.
func (r *DiagRecorder) Reset() {
	r.mu.Lock()
	r.diags = nil
	r.mu.Unlock()
}

// Warnings returns the recorded warnings of rpc ("" for any).
func (r *DiagRecorder) Warnings(rpc string) []Diag {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Diag
	for _, d := range r.diags {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && (rpc == "" || d.RPC == rpc) {
			out = append(out, d)
		}
	}
	return out
}

// find reports whether a warning of rpc matches re (on "summary\ndetail").
func (r *DiagRecorder) find(rpc string, re *regexp.Regexp) error {
	ws := r.Warnings(rpc)
	for _, w := range ws {
		if re.MatchString(w.Summary + "\n" + w.Detail) {
			return nil
		}
	}
	var got []string
	for _, w := range ws {
		got = append(got, w.String())
	}
	return fmt.Errorf("no %s warning matches %s; warnings:\n%s", rpc, re, strings.Join(got, "\n"))
}

// ExpectWarning is a plan check: a warning from planning matches re.
func (r *DiagRecorder) ExpectWarning(re *regexp.Regexp) plancheck.PlanCheck {
	return warnCheck{r: r, re: re, want: true}
}

// ExpectReadWarning is a plan check: a warning from the refresh before the
// plan (ReadResource, which Terraform prints with the plan) matches re.
func (r *DiagRecorder) ExpectReadWarning(re *regexp.Regexp) plancheck.PlanCheck {
	return warnCheck{r: r, re: re, want: true, rpc: "read"}
}

// ExpectNoWarning is a plan check: no warning from planning matches re.
func (r *DiagRecorder) ExpectNoWarning(re *regexp.Regexp) plancheck.PlanCheck {
	return warnCheck{r: r, re: re}
}

// CheckApplyWarning is a step check: a warning from applying matches re.
func (r *DiagRecorder) CheckApplyWarning(re *regexp.Regexp) resource.TestCheckFunc {
	return func(*terraform.State) error { return r.find("apply", re) }
}

type warnCheck struct {
	r    *DiagRecorder
	re   *regexp.Regexp
	want bool
	rpc  string // "" for plan
}

func (c warnCheck) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	rpc := c.rpc
	if rpc == "" {
		rpc = "plan"
	}
	err := c.r.find(rpc, c.re)
	switch {
	case c.want && err != nil:
		resp.Error = err
	case !c.want && err == nil:
		resp.Error = fmt.Errorf("a %s warning matches %s, want none", rpc, c.re)
	}
}

type recordingServer struct {
	tfprotov6.ProviderServer
	rec *DiagRecorder
}

func (s *recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.rec.add("plan", req.TypeName, resp.Diagnostics)
	}
	return resp, err
}

func (s *recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.add("apply", req.TypeName, resp.Diagnostics)
	}
	return resp, err
}

func (s *recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil {
		s.rec.add("read", req.TypeName, resp.Diagnostics)
	}
	return resp, err
}
