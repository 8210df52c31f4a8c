package pve

import (
	"context"
	"time"
)

// Node certificates: pve-root-ca.pem, the node's PVE-signed pve-ssl.pem and
// an optional custom (or ACME) pveproxy-ssl.pem that pveproxy prefers.

// CertificateInfo is one certificate file as GET
// /nodes/{node}/certificates/info reports it.
type CertificateInfo struct {
	Filename      string // pve-root-ca.pem, pve-ssl.pem or pveproxy-ssl.pem
	Fingerprint   string // SHA-256, upper-case hex pairs joined by colons
	Issuer        string // OpenSSL one-line form, "/O=.../CN=..."
	Subject       string
	PEM           string // the first certificate of the file
	PublicKeyType string // rsaEncryption, id-ecPublicKey, ...
	NotBefore     time.Time
	NotAfter      time.Time
	SAN           []string
	PublicKeyBits int64
}

// Certificate file names PVE reports.
const (
	CertFileRootCA = "pve-root-ca.pem"
	CertFileNode   = "pve-ssl.pem"
	CertFileCustom = "pveproxy-ssl.pem"
)

type certInfoWire struct {
	Filename      flexString `json:"filename"`
	Fingerprint   flexString `json:"fingerprint"`
	Issuer        flexString `json:"issuer"`
	Subject       flexString `json:"subject"`
	PEM           flexString `json:"pem"`
	PublicKeyType flexString `json:"public-key-type"`
	PublicKeyBits flexInt    `json:"public-key-bits"`
	NotBefore     flexInt    `json:"notbefore"`
	NotAfter      flexInt    `json:"notafter"`
	SAN           []string   `json:"san"`
}

func (w certInfoWire) info() CertificateInfo {
	ci := CertificateInfo{
		Filename: string(w.Filename), Fingerprint: string(w.Fingerprint), Issuer: string(w.Issuer),
		Subject: string(w.Subject), PEM: string(w.PEM), PublicKeyType: string(w.PublicKeyType),
		PublicKeyBits: int64(w.PublicKeyBits), SAN: w.SAN,
	}
	if w.NotBefore != 0 {
		ci.NotBefore = time.Unix(int64(w.NotBefore), 0).UTC()
	}
	if w.NotAfter != 0 {
		ci.NotAfter = time.Unix(int64(w.NotAfter), 0).UTC()
	}
	return ci
}

func certificatesPath(node string) string { return "/nodes/" + PathEscape(node) + "/certificates" }

// NodeCertificates lists the node's certificate files.
//
//pve:operation GET /nodes/{node}/certificates/info
func (c *Client) NodeCertificates(ctx context.Context, node string) ([]CertificateInfo, error) {
	var w []certInfoWire
	if err := c.Get(ctx, certificatesPath(node)+"/info", nil, &w); err != nil {
		return nil, err
	}
	out := make([]CertificateInfo, 0, len(w))
	for _, x := range w {
		out = append(out, x.info())
	}
	return out, nil
}

// UploadCustomCertificate installs chainPEM (leaf first) and keyPEM as the
// node's pveproxy-ssl.pem/.key. keyPEM may be empty to keep the existing
// key. force overwrites an existing custom certificate; restart reloads
// pveproxy so the node presents it at once.
//
//pve:operation POST /nodes/{node}/certificates/custom
func (c *Client) UploadCustomCertificate(ctx context.Context, node, chainPEM, keyPEM string, force, restart bool) (*CertificateInfo, error) {
	p := Params{}
	p.Set("certificates", chainPEM)
	if keyPEM != "" {
		p.Set("key", keyPEM)
	}
	if force {
		p.SetBool("force", true)
	}
	if restart {
		p.SetBool("restart", true)
	}
	var w certInfoWire
	if err := c.Post(ctx, certificatesPath(node)+"/custom", p, &w); err != nil {
		return nil, err
	}
	ci := w.info()
	return &ci, nil
}

// DeleteCustomCertificate removes pveproxy-ssl.pem/.key; the node falls
// back to pve-ssl.pem (after a pveproxy restart when restart is set).
//
//pve:operation DELETE /nodes/{node}/certificates/custom
func (c *Client) DeleteCustomCertificate(ctx context.Context, node string, restart bool) error {
	p := Params{}
	if restart {
		p.SetBool("restart", true)
	}
	return c.Delete(ctx, certificatesPath(node)+"/custom", p, nil)
}

// OrderNodeCertificate orders a certificate for the node's configured ACME
// domains (task acmenewcert); force overwrites an existing custom one.
//
//pve:operation POST /nodes/{node}/certificates/acme/certificate
func (c *Client) OrderNodeCertificate(ctx context.Context, node string, force bool) (upid string, err error) {
	return c.acmeCertTask(ctx, "POST", node, force)
}

// RenewNodeCertificate renews the node's ACME certificate (task acmerenew).
// PVE refuses unless it expires within 30 days or force is set.
//
//pve:operation PUT /nodes/{node}/certificates/acme/certificate
func (c *Client) RenewNodeCertificate(ctx context.Context, node string, force bool) (upid string, err error) {
	return c.acmeCertTask(ctx, "PUT", node, force)
}

// RevokeNodeCertificate revokes the node's ACME certificate at the CA and
// removes it (task acmerevoke); the node falls back to pve-ssl.pem.
//
//pve:operation DELETE /nodes/{node}/certificates/acme/certificate
func (c *Client) RevokeNodeCertificate(ctx context.Context, node string) (upid string, err error) {
	var s flexString
	err = c.Delete(ctx, certificatesPath(node)+"/acme/certificate", nil, &s)
	return string(s), err
}

func (c *Client) acmeCertTask(ctx context.Context, method, node string, force bool) (string, error) {
	p := Params{}
	if force {
		p.SetBool("force", true)
	}
	var s flexString
	var err error
	if method == "POST" {
		err = c.Post(ctx, certificatesPath(node)+"/acme/certificate", p, &s)
	} else {
		err = c.Put(ctx, certificatesPath(node)+"/acme/certificate", p, &s)
	}
	return string(s), err
}
