package pvesim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // PVE's config digest is a SHA-1
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
)

// ACME after pve-manager PVE::API2::ACMEAccount, ACMEPlugin and ACME
// (certificate order/renew/revoke). Accounts and plugins live in
// /etc/pve/priv/acme, so they belong to the trust domain (the whole cluster).
//
// The CA behind a directory URL is simulated and never contacted: every
// http(s) directory answers. The Let's Encrypt directories publish terms of
// service, so registering there needs tos_url (as with the real CA); any
// other directory is a private CA without terms (like the reference lab's
// internal one). Certificates from Let's Encrypt directories live 90 days,
// from private ones 24 hours (the reference lab's internal CA).

const (
	acmePublicCertLifetime  = 90 * 24 * time.Hour
	acmePrivateCertLifetime = 24 * time.Hour
	// acmeRenewWindow is PVE's "expires within the next 30 days".
	acmeRenewWindow         = 30 * 24 * time.Hour
	acmeDefaultDirectory    = "https://acme-v02.api.letsencrypt.org/directory"
	acmeStagingDirectory    = "https://acme-staging-v02.api.letsencrypt.org/directory"
	acmeLetsEncryptTOS      = "https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf"
	acmeAccountDir          = "/etc/pve/priv/acme"
	acmeMaxDeactivatedSlots = 100
)

// acmeConfig is /etc/pve/priv/acme of one trust domain, plus what the
// simulated CAs know.
type acmeConfig struct {
	// Accounts maps account file names (deactivated ones renamed to
	// _deactivated_NAME_N) to their content.
	Accounts map[string]*acmeAccount `json:"accounts,omitempty"`
	// Plugins is plugins.cfg: id -> options including "type".
	Plugins map[string]map[string]string `json:"plugins,omitempty"`
	// CAs are the simulated CAs by directory URL.
	CAs map[string]*acmeCA `json:"cas,omitempty"`
}

type acmeAccount struct {
	Directory string   `json:"directory"`
	Location  string   `json:"location"`
	TOS       string   `json:"tos,omitempty"`
	Contact   []string `json:"contact"`
	Status    string   `json:"status"`
	CreatedAt string   `json:"created_at"`
}

type acmeCA struct {
	CertPEM  string `json:"cert"`
	KeyPEM   string `json:"key"`
	Accounts int    `json:"accounts"`
	// Revoked holds fingerprints of revoked certificates.
	Revoked []string `json:"revoked,omitempty"`
}

func acmeOf(c *call) *acmeConfig {
	d := c.s.domainFor(c.listener)
	if d.ACME == nil {
		d.ACME = &acmeConfig{}
	}
	if d.ACME.Accounts == nil {
		d.ACME.Accounts = map[string]*acmeAccount{}
	}
	if d.ACME.Plugins == nil {
		d.ACME.Plugins = map[string]map[string]string{}
	}
	if d.ACME.CAs == nil {
		d.ACME.CAs = map[string]*acmeCA{}
	}
	return d.ACME
}

// acmeMeta is the directory's meta object.
func acmeMeta(directory string) map[string]any {
	if directory == acmeDefaultDirectory || directory == acmeStagingDirectory {
		return map[string]any{
			"termsOfService": acmeLetsEncryptTOS,
			"website":        "https://letsencrypt.org",
			"caaIdentities":  []string{"letsencrypt.org"},
		}
	}
	return map[string]any{}
}

func acmeCertLifetime(directory string) time.Duration {
	if _, public := acmeMeta(directory)["termsOfService"]; public {
		return acmePublicCertLifetime
	}
	return acmePrivateCertLifetime
}

var (
	directoryRE = regexp.MustCompile(`^https?://.*`)
	emailRE     = regexp.MustCompile(`^[\w+\-~]+(?:\.[\w+\-~]+)*@[a-zA-Z0-9\-]+(?:\.[a-zA-Z0-9\-]+)*$`)
	acmeDomRE   = regexp.MustCompile(`^(?i:[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*)+)$`)
	acmeAliasRE = regexp.MustCompile(`^(?i:[a-z0-9_][a-z0-9_-]*(?:\.[a-z0-9_][a-z0-9_-]*)+)$`)
)

// checkCertFormat checks the formats certificates.go and acme.go add.
func checkCertFormat(format, v string) string {
	switch format {
	case "email":
		if !emailRE.MatchString(v) {
			return "value does not look like a valid email address"
		}
	case "pve-acme-domain":
		if !acmeDomRE.MatchString(v) {
			return fmt.Sprintf("value '%s' does not look like a valid domain name!", v)
		}
	case "pve-acme-alias":
		if !acmeAliasRE.MatchString(v) {
			return fmt.Sprintf("value '%s' does not look like a valid alias name!", v)
		}
	default:
		return checkPEM(format, v)
	}
	return ""
}

func directoryParam() param {
	p := pStr()
	p.pattern = directoryRE
	return p
}

// pluginSchema is the parameter schema of POST (create) and PUT
// /cluster/acme/plugins; `api` is the release's enumeration.
func pluginSchema(rel pveRelease, create bool) schema {
	p := schema{
		"id":               pFmt("pve-configid").req(),
		"api":              pEnum(acmeDNSAPIs(rel)...),
		"data":             pStr(),
		"disable":          pBool(),
		"nodes":            pFmt("pve-node-list"),
		"validation-delay": pInt(i64(0), i64(172800)),
	}
	if create {
		p["type"] = pEnum("dns", "standalone").req()
	} else {
		p["delete"] = pFmt("pve-configid-list").maxLen(4096)
		p["digest"] = pStr().maxLen(64)
	}
	return p
}

func registerACME(t *routeTable) {
	nameP := pFmt("pve-configid")
	t.add("GET", "/cluster/acme", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return []map[string]string{{"name": "account"}, {"name": "tos"}, {"name": "meta"}, {"name": "directories"}, {"name": "plugins"}, {"name": "challenge-schema"}}, nil
	}})
	t.add("GET", "/cluster/acme/account", &method{params: schema{}, handler: listACMEAccounts})
	t.add("POST", "/cluster/acme/account", &method{rootOnly: true, params: schema{
		"name":         nameP,
		"contact":      pFmt("email-list").req(),
		"tos_url":      pStr(),
		"directory":    directoryParam(),
		"eab-kid":      pStr().needs("eab-hmac-key"),
		"eab-hmac-key": pStr().needs("eab-kid"),
	}, handler: registerACMEAccount})
	t.add("GET", "/cluster/acme/account/{name}", &method{rootOnly: true, params: schema{"name": nameP}, handler: getACMEAccount})
	t.add("PUT", "/cluster/acme/account/{name}", &method{rootOnly: true, params: schema{"name": nameP, "contact": pFmt("email-list")}, handler: func(c *call) (any, *apiError) {
		contact := mailtoList(c.params["contact"])
		if len(contact) > 0 {
			return updateACMEAccount(c, "update", func(a *acmeAccount) { a.Contact = contact })
		}
		return updateACMEAccount(c, "refresh", func(*acmeAccount) {})
	}})
	t.add("DELETE", "/cluster/acme/account/{name}", &method{rootOnly: true, params: schema{"name": nameP}, handler: func(c *call) (any, *apiError) {
		return updateACMEAccount(c, "deactivate", func(a *acmeAccount) { a.Status = "deactivated" })
	}})
	t.add("GET", "/cluster/acme/directories", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return []map[string]string{
			{"name": "Let's Encrypt V2", "url": acmeDefaultDirectory},
			{"name": "Let's Encrypt V2 Staging", "url": acmeStagingDirectory},
		}, nil
	}})
	t.add("GET", "/cluster/acme/tos", &method{params: schema{"directory": directoryParam()}, handler: func(c *call) (any, *apiError) {
		if tos, ok := acmeMeta(directoryOf(c))["termsOfService"]; ok {
			return tos, nil
		}
		return nil, nil
	}})
	t.add("GET", "/cluster/acme/meta", &method{params: schema{"directory": directoryParam()}, handler: func(c *call) (any, *apiError) {
		return acmeMeta(directoryOf(c)), nil
	}})

	typeP := pEnum("dns", "standalone")
	t.add("GET", "/cluster/acme/plugins", &method{params: schema{"type": typeP}, handler: listACMEPlugins})
	t.add("POST", "/cluster/acme/plugins", &method{params: pluginSchema(t.rel, true), handler: addACMEPlugin})
	t.add("GET", "/cluster/acme/plugins/{id}", &method{params: schema{"id": pFmt("pve-configid").req()}, handler: func(c *call) (any, *apiError) {
		cfg := acmeOf(c)
		id := c.params["id"]
		p := pluginsWithStandalone(cfg)[id]
		if p == nil {
			return nil, die("ACME plugin '%s' not defined", id)
		}
		return pluginForAPI(cfg, id, p), nil
	}})
	t.add("PUT", "/cluster/acme/plugins/{id}", &method{params: pluginSchema(t.rel, false), handler: updateACMEPlugin})
	t.add("DELETE", "/cluster/acme/plugins/{id}", &method{params: schema{"id": pFmt("pve-configid").req()}, handler: func(c *call) (any, *apiError) {
		delete(acmeOf(c).Plugins, c.params["id"])
		c.s.saveLocked()
		return nil, nil
	}})

	nodeForce := schema{"node": nodeParam(), "force": pBool()}
	t.add("GET", "/nodes/{node}/certificates/acme", &method{params: schema{"node": nodeParam()}, handler: func(*call) (any, *apiError) {
		return []map[string]string{{"name": "certificate"}}, nil
	}})
	t.add("POST", "/nodes/{node}/certificates/acme/certificate", &method{params: nodeForce, handler: orderACMECert})
	t.add("PUT", "/nodes/{node}/certificates/acme/certificate", &method{params: nodeForce, handler: renewACMECert})
	t.add("DELETE", "/nodes/{node}/certificates/acme/certificate", &method{params: schema{"node": nodeParam()}, handler: revokeACMECert})
}

func directoryOf(c *call) string {
	if d := c.params["directory"]; d != "" {
		return d
	}
	return acmeDefaultDirectory
}

func mailtoList(s string) []string {
	out := []string{}
	for _, a := range splitList(s) {
		out = append(out, "mailto:"+a)
	}
	return out
}

func listACMEAccounts(c *call) (any, *apiError) {
	cfg := acmeOf(c)
	names := make([]string, 0, len(cfg.Accounts))
	for n := range cfg.Accounts {
		if configIDRE.MatchString(n) { // _deactivated_* files are not accounts
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := []map[string]string{}
	for _, n := range names {
		out = append(out, map[string]string{"name": n})
	}
	return out, nil
}

func accountName(c *call) string {
	if n := c.params["name"]; n != "" {
		return n
	}
	return "default"
}

// nodeTaskCall makes a cluster-wide call fork its worker on the node that
// received it, as fork_worker does.
func nodeTaskCall(c *call) *call {
	cc := *c
	cc.params = map[string]string{}
	for k, v := range c.params {
		cc.params[k] = v
	}
	cc.params["node"] = c.listener
	return &cc
}

func registerACMEAccount(c *call) (any, *apiError) {
	cfg := acmeOf(c)
	name := accountName(c)
	if cfg.Accounts[name] != nil {
		return nil, paramErr1("name", fmt.Sprintf("ACME account config file '%s' already exists.", name))
	}
	directory := directoryOf(c)
	contact := mailtoList(c.params["contact"])
	tosURL := c.params["tos_url"]
	return c.s.startTaskLocked(nodeTaskCall(c), "acmeregister", "", func(t *task) (int, error) {
		if cfg.Accounts[name] != nil {
			return 0, taskErr("ACME account config file '%s' already exists.", name)
		}
		t.Log = append(t.Log, "Generating ACME account key..", "Registering ACME account..")
		if _, needsTOS := acmeMeta(directory)["termsOfService"]; needsTOS && tosURL == "" {
			return 0, taskErr("Registration failed: Error: POST to %s {\"type\":\"urn:ietf:params:acme:error:malformed\",\"detail\":\"must agree to terms of service\",\"status\":400}",
				acmeEndpoint(directory, "acme/new-acct"))
		}
		ca, err := c.s.acmeCAFor(cfg, directory)
		if err != nil {
			return 0, err
		}
		ca.Accounts++
		a := &acmeAccount{
			Directory: directory, Contact: contact, Status: "valid", TOS: tosURL,
			Location:  acmeEndpoint(directory, fmt.Sprintf("acme/acct/%d", 100000+ca.Accounts)),
			CreatedAt: time.Now().UTC().Format(time.RFC3339),
		}
		cfg.Accounts[name] = a
		t.Log = append(t.Log, fmt.Sprintf("Registration successful, account URL: '%s'", a.Location))
		return 0, nil
	}), nil
}

// acmeEndpoint is a URL on the CA's host.
func acmeEndpoint(directory, p string) string {
	u, err := url.Parse(directory)
	if err != nil || u.Host == "" {
		return directory + "/" + p
	}
	return u.Scheme + "://" + u.Host + "/" + p
}

func getACMEAccount(c *call) (any, *apiError) {
	name := accountName(c)
	a := acmeOf(c).Accounts[name]
	if a == nil {
		return nil, paramErr1("name", fmt.Sprintf("ACME account config file '%s' does not exist.", name))
	}
	res := map[string]any{
		"account": map[string]any{
			"contact": a.Contact, "status": a.Status, "createdAt": a.CreatedAt,
			"termsOfServiceAgreed": a.TOS != "",
		},
		"directory": a.Directory,
		"location":  a.Location,
	}
	if a.TOS != "" {
		res["tos"] = a.TOS
	}
	return res, nil
}

func updateACMEAccount(c *call, what string, change func(*acmeAccount)) (any, *apiError) {
	cfg := acmeOf(c)
	name := accountName(c)
	if cfg.Accounts[name] == nil {
		return nil, paramErr1("name", fmt.Sprintf("ACME account config file '%s' does not exist.", name))
	}
	return c.s.startTaskLocked(nodeTaskCall(c), "acme"+what, "", func(t *task) (int, error) {
		a := cfg.Accounts[name]
		if a == nil {
			return 0, taskErr("ACME account config file '%s' does not exist.", name)
		}
		change(a)
		if a.Status != "deactivated" {
			return 0, nil
		}
		for i := 0; i <= acmeMaxDeactivatedSlots; i++ {
			cand := fmt.Sprintf("_deactivated_%s_%d", name, i)
			if cfg.Accounts[cand] == nil {
				t.Log = append(t.Log, fmt.Sprintf("Renaming account file from '%s/%s' to '%s/%s'", acmeAccountDir, name, acmeAccountDir, cand))
				cfg.Accounts[cand] = a
				delete(cfg.Accounts, name)
				return 0, nil
			}
		}
		t.Log = append(t.Log, fmt.Sprintf("No free slot to rename deactivated account file '%s/%s', leaving in place", acmeAccountDir, name))
		return 1, nil
	}), nil
}

// pluginOptions are the options each challenge type takes (true =
// optional), after PVE::ACME::DNSChallenge and StandAlone.
var pluginOptions = map[string]map[string]bool{
	"dns":        {"api": false, "data": true, "nodes": true, "disable": true, "validation-delay": true},
	"standalone": {"nodes": true, "disable": true},
}

// pluginsWithStandalone is load_config: the standalone plugin always exists.
func pluginsWithStandalone(cfg *acmeConfig) map[string]map[string]string {
	out := map[string]map[string]string{}
	for id, p := range cfg.Plugins {
		out[id] = p
	}
	if p := out["standalone"]; p == nil || p["type"] != "standalone" {
		out["standalone"] = map[string]string{"type": "standalone"}
	}
	return out
}

// pluginsDigest is the SHA-1 of plugins.cfg as SectionConfig writes it.
func pluginsDigest(cfg *acmeConfig) string {
	ids := make([]string, 0, len(cfg.Plugins))
	for id := range cfg.Plugins {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		p := cfg.Plugins[id]
		fmt.Fprintf(&b, "%s: %s\n", p["type"], id)
		keys := make([]string, 0, len(p))
		for k := range p {
			if k != "type" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\t%s %s\n", k, p[k])
		}
		b.WriteString("\n")
	}
	sum := sha1.Sum([]byte(b.String())) //nolint:gosec // PVE's digest
	return hex.EncodeToString(sum[:])
}

func pluginForAPI(cfg *acmeConfig, id string, p map[string]string) map[string]any {
	out := map[string]any{"plugin": id, "digest": pluginsDigest(cfg)}
	for k, v := range p {
		switch k {
		case "disable":
			out[k] = v == "1"
		case "validation-delay":
			out[k] = atoiOr(v, 30)
		default:
			out[k] = v
		}
	}
	return out
}

func atoiOr(s string, def int) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return def
		}
		n = n*10 + int(r-'0')
	}
	if s == "" {
		return def
	}
	return n
}

func listACMEPlugins(c *call) (any, *apiError) {
	cfg := acmeOf(c)
	all := pluginsWithStandalone(cfg)
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := []map[string]any{}
	for _, id := range ids {
		if f := c.params["type"]; f != "" && all[id]["type"] != f {
			continue
		}
		out = append(out, pluginForAPI(cfg, id, all[id]))
	}
	return out, nil
}

// checkPluginOptions is SectionConfig::check_config for one type.
func checkPluginOptions(typ string, params map[string]string, create bool) (map[string]string, *apiError) {
	opts := pluginOptions[typ]
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	set := map[string]string{}
	for _, k := range keys {
		switch k {
		case "id", "type", "delete", "digest":
			continue
		}
		if _, ok := opts[k]; !ok {
			return nil, die("unexpected property '%s'", k)
		}
		set[k] = params[k]
	}
	if create {
		req := make([]string, 0)
		for k, optional := range opts {
			if !optional {
				req = append(req, k)
			}
		}
		sort.Strings(req)
		for _, k := range req {
			if _, ok := set[k]; !ok {
				return nil, die("missing value for required option '%s'", k)
			}
		}
	}
	return set, nil
}

func addACMEPlugin(c *call) (any, *apiError) {
	cfg := acmeOf(c)
	id := c.params["id"]
	if cfg.Plugins[id] != nil {
		return nil, die("ACME plugin ID '%s' already exists", id)
	}
	typ := c.params["type"]
	set, err := checkPluginOptions(typ, c.params, true)
	if err != nil {
		return nil, err
	}
	set["type"] = typ
	cfg.Plugins[id] = set
	c.s.saveLocked()
	return nil, nil
}

func updateACMEPlugin(c *call) (any, *apiError) {
	cfg := acmeOf(c)
	id := c.params["id"]
	if d := c.params["digest"]; d != "" && d != pluginsDigest(cfg) {
		return nil, die("detected modified configuration - file changed by other user? Try again.")
	}
	p := cfg.Plugins[id]
	if p == nil {
		return nil, die("ACME plugin ID '%s' does not exist", id)
	}
	typ := p["type"]
	next := map[string]string{}
	for k, v := range p {
		next[k] = v
	}
	for _, k := range splitList(c.params["delete"]) {
		optional, ok := pluginOptions[typ][k]
		if !ok {
			return nil, die("no such option '%s'", k)
		}
		if !optional {
			return nil, die("unable to delete required option '%s'", k)
		}
		delete(next, k)
	}
	set, err := checkPluginOptions(typ, c.params, false)
	if err != nil {
		return nil, err
	}
	for k, v := range set {
		next[k] = v
	}
	cfg.Plugins[id] = next
	c.s.saveLocked()
	return nil, nil
}

// acmeCAFor returns (creating on first use) the simulated CA of directory.
func (s *Sim) acmeCAFor(cfg *acmeConfig, directory string) (*acmeCA, error) {
	if ca := cfg.CAs[directory]; ca != nil {
		return ca, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	host := directory
	if u, err := url.Parse(directory); err == nil && u.Host != "" {
		host = u.Host
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randSerial(),
		Subject:               pkix.Name{CommonName: "pvesim ACME CA " + host, Organization: []string{"pvesim"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	ca := &acmeCA{
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		KeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
	}
	cfg.CAs[directory] = ca
	return ca, nil
}

// issue signs a certificate for domains (the first is the subject) with a
// fresh RSA key, as PVE's generate_csr makes one per order. The chain is
// leaf + CA.
func (ca *acmeCA) issue(domains []string, lifetime time.Duration) (string, string, error) {
	cb, _ := pem.Decode([]byte(ca.CertPEM))
	kb, _ := pem.Decode([]byte(ca.KeyPEM))
	if cb == nil || kb == nil {
		return "", "", errors.New("simulated ACME CA: bad PEM")
	}
	caCert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return "", "", err
	}
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return "", "", err
	}
	// PVE asks for RSA 4096; 2048 keeps the simulator fast.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: randSerial(),
		Subject:      pkix.Name{CommonName: domains[0]},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     domains,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return "", "", err
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + "\n" + ca.CertPEM
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return chain, keyPEM, nil
}

// issuedBy reports whether certPEM's first certificate was signed by ca.
func (ca *acmeCA) issuedBy(certPEM string) bool {
	b, _ := pem.Decode([]byte(certPEM))
	cb, _ := pem.Decode([]byte(ca.CertPEM))
	if b == nil || cb == nil {
		return false
	}
	leaf, err1 := x509.ParseCertificate(b.Bytes)
	caCert, err2 := x509.ParseCertificate(cb.Bytes)
	return err1 == nil && err2 == nil && leaf.CheckSignatureFrom(caCert) == nil
}

// acmeNodeConf is get_acme_conf's result: the account and the domains in
// the node config's order.
type acmeNodeConf struct {
	account string
	domains []acmeNodeDomain
}

type acmeNodeDomain struct{ domain, plugin, alias string }

// taskErr is a task failure with PVE's exact text, which is capitalised
// and ends with a full stop.
func taskErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// orderPreamble are the checks new/renew/revoke share before forking.
func acmeNodeDomains(c *call) (*acmeNodeConf, *apiError) {
	ac, err := acmeConf(c.node(), acmeOf(c))
	if err != nil {
		return nil, die("%s", err.Error())
	}
	if ac == nil || len(ac.domains) == 0 {
		return nil, die("ACME domain list in node configuration is missing!")
	}
	return ac, nil
}

// orderCert runs $order_certificate inside a task and installs the result.
func (s *Sim) orderCertLocked(t *task, ns *nodeState, cfg *acmeConfig, ac *acmeNodeConf) (*acmeAccount, error) {
	a := cfg.Accounts[ac.account]
	if a == nil {
		return nil, taskErr("ACME account config file '%s' does not exist.", ac.account)
	}
	t.Log = append(t.Log, "Loading ACME account details")
	plugins := pluginsWithStandalone(cfg)
	ca, err := s.acmeCAFor(cfg, a.Directory)
	if err != nil {
		return nil, err
	}
	t.Log = append(t.Log, "Placing ACME order", "Order URL: "+acmeEndpoint(a.Directory, fmt.Sprintf("acme/order/%d", randInt(1<<40))))
	var names []string
	for _, d := range ac.domains {
		t.Log = append(t.Log, "", fmt.Sprintf("Getting authorization details from '%s'", acmeEndpoint(a.Directory, "acme/authz/"+randHex(8))))
		t.Log = append(t.Log, fmt.Sprintf("The validation for %s is pending!", d.domain))
		if plugins[d.plugin] == nil {
			return nil, taskErr("plugin '%s' for domain '%s' not found!", d.plugin, d.domain)
		}
		if plugins[d.plugin]["type"] == "dns" {
			t.Log = append(t.Log, fmt.Sprintf("[%s] Adding TXT record for _acme-challenge.%s", time.Now().Format(time.ANSIC), d.domain))
		} else {
			t.Log = append(t.Log, "Setting up webserver")
		}
		t.Log = append(t.Log, "Triggering validation", "Sleeping for 5 seconds", fmt.Sprintf("Status is 'valid', domain '%s' OK!", d.domain))
		names = append(names, d.domain)
	}
	t.Log = append(t.Log, "", "All domains validated!", "", "Creating CSR", "Checking order status", "Order is ready, finalizing order", "valid!", "", "Downloading certificate")
	chain, key, err := ca.issue(names, acmeCertLifetime(a.Directory))
	if err != nil {
		return nil, err
	}
	t.Log = append(t.Log, "Setting pveproxy certificate and key")
	ns.changeCertFilesLocked(chain, key, true)
	t.Log = append(t.Log, "Restarting pveproxy")
	return a, nil
}

func orderACMECert(c *call) (any, *apiError) {
	ns := c.node()
	if c.params["force"] != "1" && ns.CustomCertPEM != "" {
		return nil, paramErr1("force", "Custom certificate exists but 'force' is not set.")
	}
	ac, aerr := acmeNodeDomains(c)
	if aerr != nil {
		return nil, aerr
	}
	cfg := acmeOf(c)
	force := c.params["force"] == "1"
	return c.s.startTaskLocked(c, "acmenewcert", "", func(t *task) (int, error) {
		if !force && ns.CustomCertPEM != "" {
			return 0, taskErr("Custom certificate file exists but force flag is not set.")
		}
		_, err := c.s.orderCertLocked(t, ns, cfg, ac)
		return 0, err
	}), nil
}

func renewACMECert(c *call) (any, *apiError) {
	ns := c.node()
	if ns.CustomCertPEM == "" {
		return nil, errNoCustomCert()
	}
	info := certInfo("pveproxy-ssl.pem", ns.CustomCertPEM)
	notAfter, _ := info["notafter"].(int64)
	expiresSoon := info == nil || time.Unix(notAfter, 0).Before(time.Now().Add(acmeRenewWindow))
	if !expiresSoon && c.params["force"] != "1" {
		return nil, paramErr1("force", "Certificate does not expire within the next 30 days, and 'force' is not set.")
	}
	ac, aerr := acmeNodeDomains(c)
	if aerr != nil {
		return nil, aerr
	}
	cfg := acmeOf(c)
	old := ns.CustomCertPEM
	return c.s.startTaskLocked(c, "acmerenew", "", func(t *task) (int, error) {
		a, err := c.s.orderCertLocked(t, ns, cfg, ac)
		if err != nil {
			return 0, err
		}
		t.Log = append(t.Log, "Revoking old certificate")
		if ca := cfg.CAs[a.Directory]; ca != nil && ca.issuedBy(old) {
			ca.Revoked = append(ca.Revoked, certFingerprint(old))
			return 0, nil
		}
		t.Log = append(t.Log, "Revoke request to CA failed: "+errNotIssuedHere)
		return 1, nil
	}), nil
}

const errNotIssuedHere = `{"type":"urn:ietf:params:acme:error:unauthorized","detail":"The key authorizing the revocation is not authorized to revoke this certificate","status":403}`

func revokeACMECert(c *call) (any, *apiError) {
	ns := c.node()
	ac, aerr := acmeNodeDomains(c)
	if aerr != nil {
		return nil, aerr
	}
	if ns.CustomCertPEM == "" {
		return nil, errf(http.StatusInternalServerError, "unable to open file '/etc/pve/nodes/%s/pveproxy-ssl.pem' - No such file or directory", ns.Name)
	}
	cfg := acmeOf(c)
	cert := ns.CustomCertPEM
	return c.s.startTaskLocked(c, "acmerevoke", "", func(t *task) (int, error) {
		a := cfg.Accounts[ac.account]
		if a == nil {
			return 0, taskErr("ACME account config file '%s' does not exist.", ac.account)
		}
		t.Log = append(t.Log, "Loading ACME account details", "Revoking old certificate")
		ca := cfg.CAs[a.Directory]
		if ca == nil || !ca.issuedBy(cert) {
			return 0, taskErr("Revoke request to CA failed: %s", errNotIssuedHere)
		}
		ca.Revoked = append(ca.Revoked, certFingerprint(cert))
		t.Log = append(t.Log, "Deleting certificate files")
		ns.changeCertFilesLocked("", "", true)
		t.Log = append(t.Log, "Restarting pveproxy to revert to self-signed certificates")
		return 0, nil
	}), nil
}
