package pve

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func simTokenClient(t *testing.T, opts pvesim.Options) (*Client, pvesim.Info) {
	t.Helper()
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	c, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return c, info
}

func TestFormatPropertyString(t *testing.T) {
	for _, tc := range []struct {
		def  string
		kv   map[string]string
		want string
	}{
		{"type", map[string]string{"type": "secure", "network": "10.0.0.0/24"}, "secure,network=10.0.0.0/24"},
		{"type", map[string]string{"network": "10.0.0.0/24"}, "network=10.0.0.0/24"},
		{"", map[string]string{"upper": "2000", "lower": "1000"}, "lower=1000,upper=2000"},
		{"", map[string]string{"restore": "", "clone": "100"}, "clone=100"},
		{"", nil, ""},
	} {
		if got := FormatPropertyString(tc.def, tc.kv); got != tc.want {
			t.Errorf("FormatPropertyString(%q, %v) = %q, want %q", tc.def, tc.kv, got, tc.want)
		}
	}
	if got := ParsePropertyString("type", "insecure,network=10.0.0.0/8"); !reflect.DeepEqual(got, map[string]string{"type": "insecure", "network": "10.0.0.0/8"}) {
		t.Errorf("ParsePropertyString: %v", got)
	}
}

func TestClusterOptionsRoundTrip(t *testing.T) {
	c, _ := simTokenClient(t, pvesim.Options{ClusterName: "lab"})
	ctx := context.Background()
	o, err := c.ClusterOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o.String("mac_prefix") != "BC:24:11" || o.String("description") != "" || o.Has("migration") || o.Object("migration", "type") != nil {
		t.Fatalf("fresh: %v", o.Raw)
	}
	err = c.UpdateClusterOptions(ctx, map[string]string{
		"migration": FormatPropertyString("type", map[string]string{"type": "secure", "network": "169.254.50.0/24"}),
		"ha":        "shutdown_policy=migrate",
		"crs":       "ha=static,ha-rebalance-on-start=1",
		"bwlimit":   "clone=100,restore=50",
		"next-id":   "lower=1000,upper=2000",
		"keyboard":  "de",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err = c.ClusterOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]map[string]string{
		"migration": {"type": "secure", "network": "169.254.50.0/24"},
		"ha":        {"shutdown_policy": "migrate"},
		"crs":       {"ha": "static", "ha-rebalance-on-start": "1"},
		"bwlimit":   {"clone": "100", "restore": "50"}, // a string in PVE's answer
		"next-id":   {"lower": "1000", "upper": "2000"},
	} {
		if got := o.Object(key, ""); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", key, got, want)
		}
	}
	if o.String("keyboard") != "de" {
		t.Errorf("keyboard %q", o.String("keyboard"))
	}

	if err := c.UpdateClusterOptions(ctx, nil, []string{"migration", "keyboard"}); err != nil {
		t.Fatal(err)
	}
	o, _ = c.ClusterOptions(ctx)
	if o.Has("migration") || o.Has("keyboard") || !o.Has("ha") {
		t.Fatalf("after delete: %v", o.Raw)
	}

	// Per-parameter errors of property strings come through.
	err = c.UpdateClusterOptions(ctx, map[string]string{"migration": "type=fast"}, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Errors["migration"], "migration.type: value 'fast'") {
		t.Fatalf("invalid migration: %v", err)
	}
}

func TestAPTRepositoriesClient(t *testing.T) {
	c, info := simTokenClient(t, pvesim.Options{ClusterName: "lab"})
	ctx := context.Background()
	node := info.Nodes[0].Name
	r, err := c.APTRepositories(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	ent := r.Standard("enterprise")
	if ent == nil || ent.Status == nil || !*ent.Status || ent.Name != "Enterprise" || ent.Description == "" {
		t.Fatalf("enterprise %+v", ent)
	}
	if ns := r.Standard("no-subscription"); ns == nil || ns.Status != nil {
		t.Fatalf("no-subscription %+v", ns)
	}
	f := r.Find("/etc/apt/sources.list.d/pve-enterprise.sources")
	if f == nil || f.FileType != "sources" || len(f.Digest) != 64 || len(f.Repositories) != 1 || !f.Repositories[0].Enabled {
		t.Fatalf("enterprise file %+v", f)
	}
	if len(r.Digest) != 64 || len(r.Infos) == 0 {
		t.Fatalf("digest %q infos %v", r.Digest, r.Infos)
	}

	if err := c.AddStandardAPTRepository(ctx, node, "no-subscription", r.Digest); err != nil {
		t.Fatal(err)
	}
	// The digest of the first read is stale now.
	err = c.SetAPTRepositoryEnabled(ctx, node, f.Path, 0, false, r.Digest)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || !strings.Contains(ae.Message, "detected modified configuration") {
		t.Fatalf("stale digest: %v", err)
	}
	if err := c.SetAPTRepositoryEnabled(ctx, node, f.Path, 0, false, ""); err != nil {
		t.Fatal(err)
	}
	r, err = c.APTRepositories(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Standard("enterprise").Status; s == nil || *s {
		t.Fatalf("enterprise status %v", s)
	}
	if s := r.Standard("no-subscription").Status; s == nil || !*s {
		t.Fatalf("no-subscription status %v", s)
	}
	if err := c.SetAPTRepositoryEnabled(ctx, node, "/etc/apt/nope.list", 0, true, ""); err == nil || !strings.Contains(err.Error(), "invalid path - /etc/apt/nope.list") {
		t.Fatalf("bad path: %v", err)
	}
}
