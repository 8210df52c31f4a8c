package pvesim

import (
	"reflect"
	"testing"
)

func TestClusterOptionsDefaults(t *testing.T) {
	_, info := startSim(t, Options{})
	c := newClient(t, info, "")
	got := c.ok("GET", "/cluster/options", nil).data().(map[string]any)
	want := map[string]any{"description": "", "mac_prefix": "BC:24:11", "allowed-tags": []any{}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fresh options: %#v", got)
	}
}

func TestClusterOptionsSetParsesPropertyStrings(t *testing.T) {
	_, info := startSim(t, Options{})
	c := newClient(t, info, "")
	c.ok("PUT", "/cluster/options", vals(
		"migration", "secure,network=169.254.50.0/24",
		"ha", "shutdown_policy=migrate",
		"crs", "ha=static,ha-rebalance-on-start=yes",
		"bwlimit", "clone=100,migration=200.5",
		"next-id", "lower=1000,upper=2000",
		"tag-style", "shape=full,color-map=prod:ff0000",
		"registered-tags", "prod;lab",
		"description", "line one\nline two\n",
		"keyboard", "de",
		"max_workers", "4",
		"email_from", "pve@example.com",
		"mac_prefix", "BC:24:11:5",
	))
	got := c.ok("GET", "/cluster/options", nil).data().(map[string]any)
	want := map[string]any{
		"migration":       map[string]any{"type": "secure", "network": "169.254.50.0/24"},
		"ha":              map[string]any{"shutdown_policy": "migrate"},
		"crs":             map[string]any{"ha": "static", "ha-rebalance-on-start": float64(1)},
		"bwlimit":         "clone=100,migration=200.5", // pve-cluster never parses bwlimit
		"next-id":         map[string]any{"lower": "1000", "upper": "2000"},
		"tag-style":       map[string]any{"shape": "full", "color-map": "prod:ff0000"},
		"registered-tags": []any{"prod", "lab"},
		"allowed-tags":    []any{"lab", "prod"},
		"description":     "line one\nline two\n",
		"keyboard":        "de",
		"max_workers":     "4",
		"email_from":      "pve@example.com",
		"mac_prefix":      "BC:24:11:5",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("options:\n got %#v\nwant %#v", got, want)
	}

	// delete removes keys; unknown names are ignored as in PVE; the
	// default MAC prefix is not written and comes back as the default.
	c.ok("PUT", "/cluster/options", vals("delete", "migration,description,nonexistent,bwlimit", "mac_prefix", "bc:24:11", "console", "applet"))
	got = c.ok("GET", "/cluster/options", nil).data().(map[string]any)
	for _, k := range []string{"migration", "bwlimit"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s still present: %v", k, got[k])
		}
	}
	if got["description"] != "" || got["mac_prefix"] != "BC:24:11" || got["console"] != "html5" || got["ha"] == nil {
		t.Fatalf("after delete: %#v", got)
	}
}

func TestClusterOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		release, key, value, want string
	}{
		{"9.1", "migration", "bogus", "invalid format - format error\nmigration.type: value 'bogus' does not have a value in the enumeration 'secure, insecure'\n"},
		{"9.1", "migration", "type=secure,network=10.0.0.0", "invalid format - format error\nmigration.network: invalid format - value does not look like a valid CIDR network\n\n"},
		{"9.1", "migration", "network=10.0.0.0/8", "invalid format - format error\nmigration.type: property is missing and it is not optional\n"},
		{"9.1", "migration", "secure,insecure", "invalid format - duplicate key in comma-separated list property: type\n"},
		{"9.1", "crs", "foo=bar", "invalid format - invalid key in comma-separated list property: foo\n"},
		{"9.1", "crs", "ha-rebalance-on-start=maybe", "invalid format - format error\ncrs.ha-rebalance-on-start: type check ('boolean') failed - got 'maybe'\n"},
		{"9.1", "crs", "ha-auto-rebalance-method=topsis", "invalid format - format error\ncrs.ha-auto-rebalance: missing property required by 'crs.ha-auto-rebalance-method'\n"},
		{"8.4", "crs", "ha=dynamic", "invalid format - format error\ncrs.ha: value 'dynamic' does not have a value in the enumeration 'basic, static'\n"},
		{"9.1", "ha", "shutdown_policy=later", "invalid format - format error\nha.shutdown_policy: value 'later' does not have a value in the enumeration 'freeze, failover, conditional, migrate'\n"},
		{"9.1", "bwlimit", "clone=-1", "invalid format - format error\nbwlimit.clone: value must have a minimum value of 0\n"},
		{"9.1", "next-id", "lower=abc", "invalid format - format error\nnext-id.lower: type check ('integer') failed - got 'abc'\n"},
		{"9.1", "mac_prefix", "BD:24", "invalid format - value is not a valid unicast MAC address prefix\n"},
		{"9.1", "email_from", "not-an-email", "invalid format - value does not look like a valid email address\n"},
		{"9.1", "http_proxy", "https://proxy:3128", "value does not match the regex pattern"},
		{"9.1", "max_workers", "0", "value must have a minimum value of 1"},
		{"9.1", "unknown_option", "1", "property is not defined in schema and the schema does not allow additional properties"},
		{"8.4", "replication", "secure", "property is not defined in schema and the schema does not allow additional properties"},
	} {
		t.Run(tc.release+"/"+tc.key+"="+tc.value, func(t *testing.T) {
			_, info := startSim(t, Options{PVERelease: tc.release})
			c := newClient(t, info, "")
			r := c.do("PUT", "/cluster/options", vals(tc.key, tc.value))
			if r.status != 400 || r.msg() != "Parameter verification failed.\n" {
				t.Fatalf("status %d %q", r.status, r.msg())
			}
			if got := r.errs()[tc.key]; got != tc.want {
				t.Fatalf("error for %s:\n got %q\nwant %q", tc.key, got, tc.want)
			}
		})
	}
}

func TestClusterOptionsNextIDBoundary(t *testing.T) {
	_, info := startSim(t, Options{})
	c := newClient(t, info, "")
	r := c.do("PUT", "/cluster/options", vals("next-id", "lower=2000,upper=1000"))
	if r.status != 500 || r.msg() != "lower (2000) <= upper (1000) boundary rule broken\n" {
		t.Fatalf("status %d %q", r.status, r.msg())
	}
	// Only upper given: lower defaults to 100.
	r = c.do("PUT", "/cluster/options", vals("next-id", "upper=50"))
	if r.status != 500 || r.msg() != "lower (100) <= upper (50) boundary rule broken\n" {
		t.Fatalf("status %d %q", r.status, r.msg())
	}
	if _, ok := c.ok("GET", "/cluster/options", nil).data().(map[string]any)["next-id"]; ok {
		t.Fatal("a refused next-id was stored")
	}
}

// datacenter.cfg lives in /etc/pve: shared by a cluster, one per
// standalone node.
func TestClusterOptionsPerTrustDomain(t *testing.T) {
	s, _ := startSim(t, Options{})
	a, b := tokenOn(t, s, "z2g4a"), tokenOn(t, s, "z2g4b")
	a.ok("PUT", "/cluster/options", vals("keyboard", "de"))
	if got := b.ok("GET", "/cluster/options", nil).data().(map[string]any)["keyboard"]; got != nil {
		t.Fatalf("standalone z2g4b sees z2g4a's options: %v", got)
	}

	cs, _ := startSim(t, Options{ClusterName: "lab"})
	ca, cb := tokenOn(t, cs, "z2g4a"), tokenOn(t, cs, "z2g4b")
	ca.ok("PUT", "/cluster/options", vals("keyboard", "de"))
	if got := cb.ok("GET", "/cluster/options", nil).data().(map[string]any)["keyboard"]; got != "de" {
		t.Fatalf("cluster member z2g4b sees %v", got)
	}
}
