package pvesim

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

const testDirectory = "https://ca.lab.example/acme/acme/directory"

func TestACMEAccountsRootOnly(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab"})
	tok := tokenOn(t, s, "z2g4a")
	// Root-only is checked before parameters, as in PVE.
	for _, m := range []struct{ method, path string }{
		{"POST", "/cluster/acme/account"}, {"GET", "/cluster/acme/account/x"},
		{"PUT", "/cluster/acme/account/x"}, {"DELETE", "/cluster/acme/account/x"},
	} {
		r := tok.do(m.method, m.path, nil)
		if r.status != 403 || !strings.Contains(r.msg(), "user != root@pam") {
			t.Errorf("%s %s with a token: %d %s", m.method, m.path, r.status, r.raw)
		}
	}
	// Listing is open to everyone.
	if r := tok.ok("GET", "/cluster/acme/account", nil); len(r.data().([]any)) != 0 {
		t.Fatalf("accounts: %s", r.raw)
	}
}

func TestACMEAccountLifecycle(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab"})
	root := rootOn(t, s, "z2g4a")

	// Let's Encrypt publishes terms of service: registering needs tos_url.
	upid := root.ok("POST", "/cluster/acme/account", vals("name", "le", "contact", "ops@lab.example")).data().(string)
	if _, log := taskFails(t, root, "z2g4a", upid); !strings.Contains(log, "must agree to terms of service") {
		t.Fatalf("log: %s", log)
	}
	tos := root.ok("GET", "/cluster/acme/tos", nil).data()
	if tos != acmeLetsEncryptTOS {
		t.Fatalf("tos %v", tos)
	}
	taskOK(t, root, "z2g4a", root.ok("POST", "/cluster/acme/account", vals("name", "le", "contact", "ops@lab.example", "tos_url", acmeLetsEncryptTOS)).data().(string))

	// A private directory has no terms.
	if tos := root.ok("GET", "/cluster/acme/tos", vals("directory", testDirectory)).data(); tos != nil {
		t.Fatalf("private tos %v", tos)
	}
	upid = root.ok("POST", "/cluster/acme/account", vals("name", "internal", "contact", "a@lab.example;b@lab.example", "directory", testDirectory)).data().(string)
	if !strings.Contains(upid, ":acmeregister::root@pam:") || !strings.HasPrefix(upid, "UPID:z2g4a:") {
		t.Fatalf("upid %s", upid)
	}
	taskOK(t, root, "z2g4a", upid)

	r := root.do("POST", "/cluster/acme/account", vals("name", "internal", "contact", "a@lab.example", "directory", testDirectory))
	if r.status != 400 || r.errs()["name"] != "ACME account config file 'internal' already exists." {
		t.Fatalf("duplicate: %d %s", r.status, r.raw)
	}
	r = root.do("POST", "/cluster/acme/account", vals("name", "x", "contact", "not-an-email", "directory", "ftp://x"))
	if r.status != 400 || r.errs()["contact"] == nil || r.errs()["directory"] != "value does not match the regex pattern" {
		t.Fatalf("bad params: %d %s", r.status, r.raw)
	}

	// Another cluster member sees the same accounts (/etc/pve/priv/acme).
	rootB := rootOn(t, s, "z2g4b")
	acct := rootB.ok("GET", "/cluster/acme/account/internal", nil).data().(map[string]any)
	if acct["directory"] != testDirectory || !strings.HasPrefix(acct["location"].(string), "https://ca.lab.example/acme/acct/") {
		t.Fatalf("account %v", acct)
	}
	if c := acct["account"].(map[string]any)["contact"].([]any); len(c) != 2 || c[0] != "mailto:a@lab.example" {
		t.Fatalf("contact %v", c)
	}

	taskOK(t, root, "z2g4a", root.ok("PUT", "/cluster/acme/account/internal", vals("contact", "c@lab.example")).data().(string))
	acct = root.ok("GET", "/cluster/acme/account/internal", nil).data().(map[string]any)
	if c := acct["account"].(map[string]any)["contact"].([]any); len(c) != 1 || c[0] != "mailto:c@lab.example" {
		t.Fatalf("contact after update %v", c)
	}

	upid = root.ok("DELETE", "/cluster/acme/account/internal", nil).data().(string)
	if !strings.Contains(upid, ":acmedeactivate:") {
		t.Fatalf("upid %s", upid)
	}
	taskOK(t, root, "z2g4a", upid)
	names := root.ok("GET", "/cluster/acme/account", nil).data().([]any)
	if len(names) != 1 || names[0].(map[string]any)["name"] != "le" {
		t.Fatalf("accounts after deactivate: %v", names)
	}
	r = root.do("GET", "/cluster/acme/account/internal", nil)
	if r.status != 400 || r.errs()["name"] != "ACME account config file 'internal' does not exist." {
		t.Fatalf("deactivated: %d %s", r.status, r.raw)
	}
	// The name is free again.
	taskOK(t, root, "z2g4a", root.ok("POST", "/cluster/acme/account", vals("name", "internal", "contact", "a@lab.example", "directory", testDirectory)).data().(string))
}

func TestACMEPlugins(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab"})
	tok := tokenOn(t, s, "z2g4a")
	list := tok.ok("GET", "/cluster/acme/plugins", nil).data().([]any)
	if len(list) != 1 || list[0].(map[string]any)["plugin"] != "standalone" {
		t.Fatalf("default plugins: %v", list)
	}
	r := tok.do("POST", "/cluster/acme/plugins", vals("id", "pdns", "type", "dns"))
	if r.status != 500 || r.msg() != "missing value for required option 'api'\n" {
		t.Fatalf("dns without api: %d %s", r.status, r.raw)
	}
	r = tok.do("POST", "/cluster/acme/plugins", vals("id", "web", "type", "standalone", "api", "pdns"))
	if r.status != 500 || r.msg() != "unexpected property 'api'\n" {
		t.Fatalf("standalone with api: %d %s", r.status, r.raw)
	}
	tok.ok("POST", "/cluster/acme/plugins", vals("id", "pdns", "type", "dns", "api", "pdns", "data", "UEROU19VUkw9aHR0cDovL25zMQo=", "validation-delay", "5"))
	r = tok.do("POST", "/cluster/acme/plugins", vals("id", "pdns", "type", "dns", "api", "pdns"))
	if r.status != 500 || r.msg() != "ACME plugin ID 'pdns' already exists\n" {
		t.Fatalf("duplicate: %d %s", r.status, r.raw)
	}
	p := tok.ok("GET", "/cluster/acme/plugins/pdns", nil).data().(map[string]any)
	if p["api"] != "pdns" || p["validation-delay"] != float64(5) || p["type"] != "dns" || p["digest"] == "" {
		t.Fatalf("plugin %v", p)
	}
	r = tok.do("PUT", "/cluster/acme/plugins/pdns", vals("digest", "0000", "disable", "1"))
	if r.status != 500 || !strings.Contains(r.msg(), "detected modified configuration") {
		t.Fatalf("stale digest: %d %s", r.status, r.raw)
	}
	r = tok.do("PUT", "/cluster/acme/plugins/pdns", vals("delete", "api"))
	if r.status != 500 || r.msg() != "unable to delete required option 'api'\n" {
		t.Fatalf("delete api: %d %s", r.status, r.raw)
	}
	tok.ok("PUT", "/cluster/acme/plugins/pdns", vals("digest", p["digest"].(string), "disable", "1", "delete", "validation-delay"))
	p = tok.ok("GET", "/cluster/acme/plugins/pdns", nil).data().(map[string]any)
	if p["disable"] != true || p["validation-delay"] != nil {
		t.Fatalf("after update %v", p)
	}
	if l := tok.ok("GET", "/cluster/acme/plugins", vals("type", "dns")).data().([]any); len(l) != 1 {
		t.Fatalf("dns plugins %v", l)
	}
	tok.ok("DELETE", "/cluster/acme/plugins/pdns", nil)
	if r := tok.do("GET", "/cluster/acme/plugins/pdns", nil); r.status != 500 || r.msg() != "ACME plugin 'pdns' not defined\n" {
		t.Fatalf("deleted: %d %s", r.status, r.raw)
	}
}

func TestNodeConfig(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab"})
	tok := tokenOn(t, s, "z2g4a")
	if cfg := tok.ok("GET", "/nodes/z2g4b/config", nil).data().(map[string]any); len(cfg) != 0 {
		t.Fatalf("empty config: %v", cfg)
	}
	tok.ok("PUT", "/nodes/z2g4b/config", vals("acme", "account=internal", "acmedomain0", "z2g4b.lab.example", "description", "line1\nline2"))
	cfg := tok.ok("GET", "/nodes/z2g4b/config", nil).data().(map[string]any)
	if cfg["acme"] != "account=internal" || cfg["acmedomain0"] != "z2g4b.lab.example" || cfg["description"] != "line1\nline2\n" || len(cfg["digest"].(string)) != 40 {
		t.Fatalf("config %v", cfg)
	}
	if one := tok.ok("GET", "/nodes/z2g4b/config", vals("property", "acme")).data().(map[string]any); len(one) != 1 || one["acme"] != "account=internal" {
		t.Fatalf("property %v", one)
	}
	r := tok.do("PUT", "/nodes/z2g4b/config", vals("digest", strings.Repeat("0", 40), "wakeonlan", "0a:00:00:00:00:01"))
	if r.status != 500 || !strings.Contains(r.msg(), "detected modified configuration") {
		t.Fatalf("digest: %d %s", r.status, r.raw)
	}
	r = tok.do("PUT", "/nodes/z2g4b/config", vals("acmedomain1", "nodots", "acmedomain2", "x.example,plugin=Bad!"))
	if r.status != 400 || !strings.Contains(r.errs()["acmedomain1"].(string), "value 'nodots' does not look like a valid domain name!") || r.errs()["acmedomain2"] == nil {
		t.Fatalf("bad domains: %d %s", r.status, r.raw)
	}
	r = tok.do("PUT", "/nodes/z2g4b/config", vals("acmedomain1", "x.example,plugin=nosuch"))
	if r.status != 500 || r.msg() != "plugin 'nosuch' for domain 'x.example' not found!\n" {
		t.Fatalf("unknown plugin: %d %s", r.status, r.raw)
	}
	r = tok.do("PUT", "/nodes/z2g4b/config", vals("acmedomain1", "Z2G4B.lab.example"))
	if r.status != 500 || !strings.Contains(r.msg(), "duplicate domain 'z2g4b.lab.example' in ACME config properties 'acmedomain1' and 'acmedomain0'") {
		t.Fatalf("duplicate: %d %s", r.status, r.raw)
	}
	tok.ok("PUT", "/nodes/z2g4b/config", vals("delete", "description,acme", "digest", cfg["digest"].(string)))
	cfg = tok.ok("GET", "/nodes/z2g4b/config", nil).data().(map[string]any)
	if cfg["acme"] != nil || cfg["description"] != nil || cfg["acmedomain0"] == nil {
		t.Fatalf("after delete %v", cfg)
	}
}

func TestACMEOrderRenewRevoke(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab"})
	root := rootOn(t, s, "z2g4a")
	tok := tokenOn(t, s, "z2g4a")
	b := nodeInfo(t, s, "z2g4b")

	r := tok.do("POST", "/nodes/z2g4b/certificates/acme/certificate", nil)
	if r.status != 500 || r.msg() != "ACME domain list in node configuration is missing!\n" {
		t.Fatalf("no domains: %d %s", r.status, r.raw)
	}
	tok.ok("PUT", "/nodes/z2g4b/config", vals("acme", "account=internal", "acmedomain0", "z2g4b.lab.example"))
	// No account yet: the task fails.
	upid := tok.ok("POST", "/nodes/z2g4b/certificates/acme/certificate", nil).data().(string)
	if exit, _ := taskFails(t, tok, "z2g4b", upid); exit != "ACME account config file 'internal' does not exist." {
		t.Fatalf("exit %q", exit)
	}
	taskOK(t, root, "z2g4a", root.ok("POST", "/cluster/acme/account", vals("name", "internal", "contact", "a@lab.example", "directory", testDirectory)).data().(string))

	upid = tok.ok("POST", "/nodes/z2g4b/certificates/acme/certificate", nil).data().(string)
	if !strings.HasPrefix(upid, "UPID:z2g4b:") || !strings.Contains(upid, ":acmenewcert::") {
		t.Fatalf("upid %s", upid)
	}
	taskOK(t, tok, "z2g4b", upid)
	files := certFiles(t, tok)
	issued := files["pveproxy-ssl.pem"]
	if issued == nil || issued["subject"] != "/CN=z2g4b.lab.example" || issued["public-key-type"] != "rsaEncryption" {
		t.Fatalf("issued %v", issued)
	}
	life := time.Unix(int64(issued["notafter"].(float64)), 0).Sub(time.Unix(int64(issued["notbefore"].(float64)), 0))
	if life < acmePrivateCertLifetime || life > acmePrivateCertLifetime+time.Hour {
		t.Fatalf("lifetime %s", life)
	}
	if p := presented(t, b.Endpoint); p != issued["fingerprint"] {
		t.Fatalf("node presents %s, want %v", p, issued["fingerprint"])
	}

	// Ordering again needs force; a 24 h certificate is always due for renewal.
	if r := tok.do("POST", "/nodes/z2g4b/certificates/acme/certificate", nil); r.status != 400 || r.errs()["force"] != "Custom certificate exists but 'force' is not set." {
		t.Fatalf("order again: %d %s", r.status, r.raw)
	}
	upid = tok.ok("PUT", "/nodes/z2g4b/certificates/acme/certificate", nil).data().(string)
	if !strings.Contains(upid, ":acmerenew::") {
		t.Fatalf("upid %s", upid)
	}
	taskOK(t, tok, "z2g4b", upid)
	renewed := certFiles(t, tok)["pveproxy-ssl.pem"]
	if renewed["fingerprint"] == issued["fingerprint"] || presented(t, b.Endpoint) != renewed["fingerprint"] {
		t.Fatal("renewal did not install a new certificate")
	}
	if rev := s.RevokedACMECertificates("z2g4b"); len(rev) != 1 || rev[0] != issued["fingerprint"] {
		t.Fatalf("revoked %v", rev)
	}

	upid = tok.ok("DELETE", "/nodes/z2g4b/certificates/acme/certificate", nil).data().(string)
	taskOK(t, tok, "z2g4b", upid)
	if certFiles(t, tok)["pveproxy-ssl.pem"] != nil || presented(t, b.Endpoint) != b.TLSFingerprint {
		t.Fatal("revoke did not fall back to pve-ssl.pem")
	}
	if r := tok.do("PUT", "/nodes/z2g4b/certificates/acme/certificate", nil); r.status != 500 || !strings.HasPrefix(r.msg(), "No current (custom) certificate found") {
		t.Fatalf("renew without certificate: %d %s", r.status, r.raw)
	}
}

func TestACMEPublicCertificateNotDue(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab"})
	root := rootOn(t, s, "z2g4a")
	taskOK(t, root, "z2g4a", root.ok("POST", "/cluster/acme/account", vals("contact", "a@lab.example", "tos_url", acmeLetsEncryptTOS)).data().(string))
	root.ok("PUT", "/nodes/z2g4a/config", vals("acmedomain0", "z2g4a.lab.example"))
	taskOK(t, root, "z2g4a", root.ok("POST", "/nodes/z2g4a/certificates/acme/certificate", nil).data().(string))
	// The listener now presents the ACME certificate; the test client trusts
	// only the PVE CA, so continue through another member.
	viaB := rootOn(t, s, "z2g4b")
	r := viaB.do("PUT", "/nodes/z2g4a/certificates/acme/certificate", nil)
	if r.status != 400 || r.errs()["force"] != "Certificate does not expire within the next 30 days, and 'force' is not set." {
		t.Fatalf("renew not due: %d %s", r.status, r.raw)
	}
	taskOK(t, viaB, "z2g4a", viaB.ok("PUT", "/nodes/z2g4a/certificates/acme/certificate", url.Values{"force": {"1"}}).data().(string))
}
