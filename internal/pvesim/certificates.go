package pvesim

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Node certificates after pve-manager PVE::API2::Certificates and
// PVE::CertHelpers, with pve-common PVE::Certificate for the PEM formats
// and the info records. A node has pve-ssl.pem (signed by the domain's
// pve-root-ca.pem) and optionally pveproxy-ssl.pem/.key, a custom or ACME
// certificate that pveproxy prefers. pveproxy reads its certificate when it
// (re)starts, so an upload without restart changes the files but not what
// the listener presents.

// nodeCertState is the per-node part of nodeState kept here.
type nodeCertState struct {
	// CustomCertPEM and CustomKeyPEM are pveproxy-ssl.pem and .key.
	CustomCertPEM string `json:"custom_cert,omitempty"`
	CustomKeyPEM  string `json:"custom_key,omitempty"`
	// ProxyServes is what pveproxy still presents because it was not
	// restarted since the files changed; nil means it presents the files.
	ProxyServes *servedCert `json:"proxy_serves,omitempty"`
	// Config is /etc/pve/nodes/{node}/config (nodeconfig.go).
	Config *nodeConfig `json:"config,omitempty"`
}

type servedCert struct {
	CertPEM string `json:"cert"`
	KeyPEM  string `json:"key"`
}

// filesCert is what a freshly (re)started pveproxy would present.
func (ns *nodeState) filesCert() (string, string) {
	if ns.CustomCertPEM != "" && ns.CustomKeyPEM != "" {
		return ns.CustomCertPEM, ns.CustomKeyPEM
	}
	return ns.CertPEM, ns.KeyPEM
}

// servedCertPEM is the chain and key the node's listener presents.
func (ns *nodeState) servedCertPEM() (string, string) {
	if ns.ProxyServes != nil {
		return ns.ProxyServes.CertPEM, ns.ProxyServes.KeyPEM
	}
	return ns.filesCert()
}

// servedFingerprint is the fingerprint of the certificate the listener
// presents.
func (ns *nodeState) servedFingerprint() string {
	c, _ := ns.servedCertPEM()
	return certFingerprint(c)
}

// fingerprintPEM is PVE::Cluster::get_node_fingerprint: the custom
// certificate's fingerprint when one exists, else pve-ssl.pem's.
func (ns *nodeState) fingerprintPEM() string {
	if ns.CustomCertPEM != "" {
		return ns.CustomCertPEM
	}
	return ns.CertPEM
}

// changeCertFilesLocked replaces pveproxy-ssl.* (empty strings delete them)
// and restarts pveproxy when restart is set; otherwise pveproxy keeps
// presenting what it had.
func (ns *nodeState) changeCertFilesLocked(certPEM, keyPEM string, restart bool) {
	if !restart && ns.ProxyServes == nil {
		c, k := ns.filesCert()
		ns.ProxyServes = &servedCert{CertPEM: c, KeyPEM: k}
	}
	ns.CustomCertPEM, ns.CustomKeyPEM = certPEM, keyPEM
	if restart {
		ns.ProxyServes = nil
	}
}

func registerCertificates(t *routeTable) {
	node := schema{"node": nodeParam()}
	t.add("GET", "/nodes/{node}/certificates", &method{params: node, handler: func(*call) (any, *apiError) {
		return []map[string]string{{"name": "acme"}, {"name": "custom"}, {"name": "info"}}, nil
	}})
	t.add("GET", "/nodes/{node}/certificates/info", &method{params: node, handler: certificatesInfo})
	t.add("POST", "/nodes/{node}/certificates/custom", &method{params: schema{
		"node":         nodeParam(),
		"certificates": pFmt("pem-certificate-chain").req(),
		"key":          pFmt("pem-string"),
		"force":        pBool(),
		"restart":      pBool(),
	}, handler: uploadCustomCert})
	t.add("DELETE", "/nodes/{node}/certificates/custom", &method{params: schema{
		"node":    nodeParam(),
		"restart": pBool(),
	}, handler: func(c *call) (any, *apiError) {
		c.node().changeCertFilesLocked("", "", c.params["restart"] == "1")
		c.s.saveLocked()
		return nil, nil
	}})
}

func certificatesInfo(c *call) (any, *apiError) {
	ns := c.node()
	d := c.s.st.Domains[ns.Domain]
	out := []map[string]any{}
	for _, f := range []struct{ name, pem string }{
		{"pve-root-ca.pem", d.CACertPEM}, {"pve-ssl.pem", ns.CertPEM}, {"pveproxy-ssl.pem", ns.CustomCertPEM},
	} {
		if f.pem == "" {
			continue
		}
		if info := certInfo(f.name, f.pem); info != nil {
			out = append(out, info)
		}
	}
	return out, nil
}

func uploadCustomCert(c *call) (any, *apiError) {
	ns := c.node()
	certs := stripLeadingText(c.params["certificates"])
	key := c.params["key"]
	if key != "" {
		key = stripLeadingText(key)
	} else if ns.CustomKeyPEM == "" {
		return nil, paramErr1("key", "Attempted to upload custom certificate without (existing) key.")
	}
	force := c.params["force"] == "1"
	if !force && ns.CustomCertPEM != "" {
		return nil, die("Custom certificate file exists but force flag is not set.")
	}
	useKey := key
	if useKey == "" {
		useKey = ns.CustomKeyPEM
	}
	info := certInfo("pveproxy-ssl.pem", certs)
	if info == nil {
		// get_certificate_info cannot read the first certificate.
		return nil, die("Setting certificate files failed - unable to read certificate from '/etc/pve/nodes/%s/pveproxy-ssl.pem'", ns.Name)
	}
	if _, err := tls.X509KeyPair([]byte(certs), []byte(useKey)); err != nil {
		// PVE removes the new files and restores the old ones, if any.
		return nil, die("Setting certificate files failed - %d: key does not match the certificate (chain) (%s)", c.s.st.NextPID, sslErrText(err))
	}
	ns.changeCertFilesLocked(certs, useKey, c.params["restart"] == "1")
	c.s.saveLocked()
	return info, nil
}

// sslErrText stands in for OpenSSL's error queue in the message.
func sslErrText(err error) string {
	if strings.Contains(err.Error(), "does not match") {
		return "Key values mismatch"
	}
	return "No such file or directory"
}

var leadingTextRE = regexp.MustCompile(`(?s)^.*?(-----BEGIN [^\n]*?-----)`)

// stripLeadingText is PVE::Certificate::strip_leading_text.
func stripLeadingText(s string) string {
	if loc := leadingTextRE.FindStringSubmatchIndex(s); loc != nil {
		return s[loc[2]:]
	}
	return s
}

var (
	pemCertRE  = `-----BEGIN CERTIFICATE-----\s*(?:[0-9A-Za-z+/]+\s*\n)*[0-9A-Za-z+/]*(?:=\s*\n=|={0,2})?\s*\n-----END CERTIFICATE-----\s*`
	pemAnyRE   = `-----BEGIN .*?-----\s*(?:[0-9A-Za-z+/]+\s*\n)*[0-9A-Za-z+/]*(?:=\s*\n=|={0,2})?\s*\n-----END .*?-----\s*`
	pemCertOne = regexp.MustCompile(`^(?:` + pemCertRE + `)$`)
	pemChain   = regexp.MustCompile(`^(?:(?:` + pemCertRE + `\n+)*` + pemCertRE + `)$`)
	pemString  = regexp.MustCompile(`^(?:` + pemAnyRE + `)$`)
)

// checkPEM is PVE::Certificate::check_pem for the three PEM formats.
func checkPEM(format, v string) string {
	v = stripLeadingText(v)
	var ok bool
	switch format {
	case "pem-certificate":
		ok = pemCertOne.MatchString(v)
	case "pem-certificate-chain":
		ok = pemChain.MatchString(v)
	default:
		ok = pemString.MatchString(v)
	}
	if !ok {
		return "not a valid PEM-formatted string."
	}
	return ""
}

// certInfo is PVE::Certificate::get_certificate_info for the first
// certificate in pemText, or nil when none can be read.
func certInfo(filename, pemText string) map[string]any {
	b, _ := pem.Decode([]byte(stripLeadingText(pemText)))
	if b == nil || b.Type != "CERTIFICATE" {
		return nil
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(cert.Raw)
	parts := make([]string, len(sum))
	for i, x := range sum {
		parts[i] = fmt.Sprintf("%02X", x)
	}
	san := []string{}
	san = append(san, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		if v4 := ip.To4(); v4 != nil {
			san = append(san, v4.String())
			continue
		}
		// unpack("H4" x 8): eight zero-padded lower-case groups.
		var g []string
		for i := 0; i < 16; i += 2 {
			g = append(g, fmt.Sprintf("%02x%02x", ip[i], ip[i+1]))
		}
		san = append(san, strings.Join(g, ":"))
	}
	info := map[string]any{
		"filename":    filename,
		"fingerprint": strings.Join(parts, ":"),
		"subject":     x509NameOneline(cert.RawSubject),
		"issuer":      x509NameOneline(cert.RawIssuer),
		"notbefore":   cert.NotBefore.Unix(),
		"notafter":    cert.NotAfter.Unix(),
		"san":         san,
		"pem":         string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})),
	}
	switch k := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		info["public-key-type"], info["public-key-bits"] = "rsaEncryption", k.N.BitLen()
	case *ecdsa.PublicKey:
		info["public-key-type"], info["public-key-bits"] = "id-ecPublicKey", k.Curve.Params().BitSize
	case ed25519.PublicKey:
		info["public-key-type"], info["public-key-bits"] = "ED25519", 253
	}
	return info
}

var shortAttr = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
	"2.5.4.5": "serialNumber", "1.2.840.113549.1.9.1": "emailAddress",
}

// x509NameOneline is OpenSSL's X509_NAME_oneline: "/O=.../OU=.../CN=..." in
// the order the name is encoded.
func x509NameOneline(raw []byte) string {
	var seq pkix.RDNSequence
	if _, err := asn1.Unmarshal(raw, &seq); err != nil {
		return ""
	}
	var b strings.Builder
	for _, rdn := range seq {
		for _, atv := range rdn {
			name := shortAttr[atv.Type.String()]
			if name == "" {
				name = atv.Type.String()
			}
			fmt.Fprintf(&b, "/%s=%v", name, atv.Value)
		}
	}
	return b.String()
}

// errNoCertificate is the 500 of PUT/DELETE on a node without one.
func errNoCustomCert() *apiError {
	return errf(http.StatusInternalServerError, "No current (custom) certificate found, please order a new certificate!")
}
