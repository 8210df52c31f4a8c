// Package certificate manages the TLS certificates of node APIs and ACME:
// pve_node_certificate, pve_acme_account, pve_acme_plugin and
// pve_node_acme.
package certificate

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// parsedChain is a PEM certificate chain checked the way PVE and pveproxy
// will use it.
type parsedChain struct {
	leaf  *x509.Certificate
	chain []*x509.Certificate
}

// parseChain parses a PEM chain (leaf first). Text before the first PEM
// block is ignored, as PVE does.
func parseChain(s string) (*parsedChain, error) {
	rest := []byte(s)
	var pc parsedChain
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("contains a %q PEM block; only CERTIFICATE blocks belong in the chain (the key goes into private_key)", b.Type)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d of the chain cannot be parsed: %w", len(pc.chain)+1, err)
		}
		pc.chain = append(pc.chain, c)
	}
	if len(pc.chain) == 0 {
		return nil, errors.New("contains no PEM certificate (expected -----BEGIN CERTIFICATE-----)")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("has text after the last PEM block that PVE would reject")
	}
	pc.leaf = pc.chain[0]
	return &pc, nil
}

// checkKey parses keyPEM and checks it belongs to the chain's leaf.
func checkKey(chainPEM, keyPEM string) error {
	b, _ := pem.Decode([]byte(keyPEM))
	if b == nil || !strings.Contains(b.Type, "PRIVATE KEY") {
		return errors.New("contains no PEM private key (expected -----BEGIN PRIVATE KEY----- or a RSA/EC variant)")
	}
	if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
		return errors.New("is encrypted; pveproxy needs an unencrypted key")
	}
	if _, err := tls.X509KeyPair([]byte(chainPEM), []byte(keyPEM)); err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return errors.New("does not match the certificate: its public key differs from the one in the first certificate of `certificate` (is the chain in the right order, leaf first?)")
		}
		return fmt.Errorf("cannot be used with the certificate: %w", err)
	}
	return nil
}

// fingerprint is PVE's form: SHA-256, upper-case hex pairs with colons.
func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return pve.FormatFingerprint(sum[:])
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
