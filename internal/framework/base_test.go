package framework

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// An unconfigured provider and a node that cannot be placed each give one
// error in the provider's wording and no client.
func TestNodeClientReportsWhyThereIsNoClient(t *testing.T) {
	var unconfigured ResourceBase
	var d diag.Diagnostics
	if c := unconfigured.NodeClient(context.Background(), "pve1", &d); c != nil || len(d) != 1 || d[0].Summary() != "Provider not configured" {
		t.Fatalf("unconfigured: client %v, diagnostics %v", c, d)
	}

	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"data":null,"message":"cluster not ready"}`))
	}))
	defer srv.Close()
	endpoint, err := pve.NewClient(pve.Config{Endpoint: srv.URL, APIToken: "root@pam!t=x", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	own, err := pve.NewClient(pve.Config{Endpoint: "https://pve4:8006", APIToken: "root@pam!t=x"})
	if err != nil {
		t.Fatal(err)
	}
	b := DataSourceBase{PD: NewProviderData(endpoint, map[string]*pve.Client{"pve4": own})}
	d = nil
	if c := b.NodeClient(context.Background(), "pve1", &d); c != endpoint || d.HasError() {
		t.Fatalf("a node not in standalone_nodes goes to the endpoint without a lookup: client %v, diagnostics %v", c, d)
	}
	if c := b.NodeClient(context.Background(), "pve4", &d); c != nil || len(d) != 1 ||
		d[0].Summary() != "Unable to reach node pve4" || !strings.Contains(d[0].Detail(), "cluster not ready") {
		t.Fatalf("a failed member lookup: client %v, diagnostics %v", c, d)
	}
}

// A destroy refusal is an error in every run, a destroy run included, at
// the guarding attribute when there is one.
func TestRefuseDestroy(t *testing.T) {
	var d diag.Diagnostics
	RefuseDestroy(&d, "destroy_data", "ZFS pool tank", "detail")
	RefuseDestroy(&d, "", "Ceph monitor pve1", "detail")
	if !d.HasError() || len(d) != 2 || d[0].Summary() != "Refusing to destroy ZFS pool tank" || d[1].Summary() != "Refusing to destroy Ceph monitor pve1" {
		t.Fatalf("diagnostics: %v", d)
	}
	if wp, ok := d[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(path.Root("destroy_data")) {
		t.Fatalf("not at destroy_data: %v", d[0])
	}
	if _, ok := d[1].(diag.DiagnosticWithPath); ok {
		t.Fatalf("a refusal without a guard has a path: %v", d[1])
	}
}
