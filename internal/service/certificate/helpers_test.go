package certificate_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

type testCert struct{ cert, key string }

// newCert makes a certificate for cn valid from notBefore to notAfter,
// signed by a fresh CA (so the chain is leaf + CA).
func newCert(t *testing.T, cn string, notBefore, notAfter time.Time) testCert {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Lab test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		DNSNames: []string{cn}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: notBefore, NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	return testCert{
		cert: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		key:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})),
	}
}

func validCert(t *testing.T, cn string) testCert {
	return newCert(t, cn, time.Now().Add(-time.Hour), time.Now().AddDate(0, 6, 0))
}

func leafFingerprint(pemText string) string {
	b, _ := pem.Decode([]byte(pemText))
	sum := sha256.Sum256(b.Bytes)
	return pve.FormatFingerprint(sum[:])
}

// nodeEndpoint is the node's own API address: the simulator's listener,
// or NAME:8006 against a real cluster.
func nodeEndpoint(e *acctest.Env, node string) string {
	if e.Sim != nil {
		for _, n := range e.Sim.Info().Nodes {
			if n.Name == node {
				return strings.TrimPrefix(n.Endpoint, "https://")
			}
		}
	}
	return net.JoinHostPort(node, "8006")
}

// presents checks, with a TLS handshake, which certificate the node's API
// actually serves: the observable result of a rotation.
func presents(e *acctest.Env, node string, want func() string) func(*terraform.State) error {
	return func(*terraform.State) error {
		d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only reading the presented certificate
		conn, err := d.DialContext(context.Background(), "tcp", nodeEndpoint(e, node))
		if err != nil {
			return err
		}
		defer conn.Close()
		tc, ok := conn.(*tls.Conn)
		if !ok {
			return fmt.Errorf("not a TLS connection")
		}
		sum := sha256.Sum256(tc.ConnectionState().PeerCertificates[0].Raw)
		if got, w := pve.FormatFingerprint(sum[:]), want(); got != w {
			return fmt.Errorf("node %s presents %s, want %s", node, got, w)
		}
		return nil
	}
}

// nodeSSLFingerprint is the fingerprint of the node's PVE-signed
// certificate (what it falls back to).
func nodeSSLFingerprint(t *testing.T, e *acctest.Env, node string) string {
	t.Helper()
	list, err := e.Client.NodeCertificates(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range list {
		if ci.Filename == pve.CertFileNode {
			return ci.Fingerprint
		}
	}
	t.Fatalf("node %s has no pve-ssl.pem", node)
	return ""
}

// rootProvider is a provider block authenticating as root@pam with a
// password, as the ACME account API requires. It talks to the same
// endpoint and pin as the token provider.
func rootProvider(t *testing.T, e *acctest.Env) string {
	t.Helper()
	if e.Sim == nil {
		if os.Getenv("PVE_USERNAME") != "root@pam" {
			t.Skip("needs PVE_USERNAME=root@pam and PVE_PASSWORD against a real cluster")
		}
		return "provider \"pve\" {}\n"
	}
	info := e.Sim.Info()
	return fmt.Sprintf(`provider "pve" {
  endpoint        = %q
  username        = "root@pam"
  password        = %q
  tls_fingerprint = %q
}
`, info.Endpoint, info.RootPassword, info.TLSFingerprint)
}

func tfjsonPath(attr string) tfjsonpath.Path { return tfjsonpath.New(attr) }

func knownString(v string) knownvalue.Check { return knownvalue.StringExact(v) }
