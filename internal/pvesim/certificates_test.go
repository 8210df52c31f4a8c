package pvesim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"
)

// testCert makes a self-signed certificate and its key.
func testCert(t *testing.T, cn string, notAfter time.Time) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randSerial(), Subject: pkix.Name{CommonName: cn, Organization: []string{"Lab"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		DNSNames: []string{cn}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("fd00::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}))
}

// presented dials endpoint and returns the fingerprint of the certificate
// it presents.
func presented(t *testing.T, endpoint string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(endpoint, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reading the presented certificate
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	sum := sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = strings.ToUpper(strings.TrimSpace(string("0123456789abcdef"[b>>4]) + string("0123456789abcdef"[b&15])))
	}
	return strings.Join(parts, ":")
}

// certFiles are z2g4b's certificate files (the node the tests manage
// through the cluster) by file name.
func certFiles(t *testing.T, c *client) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, e := range c.ok("GET", "/nodes/z2g4b/certificates/info", nil).data().([]any) {
		m := e.(map[string]any)
		out[m["filename"].(string)] = m
	}
	return out
}

func TestCustomCertificateUploadRotateDelete(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	c := newClient(t, info, "") // z2g4a, managing z2g4b through the cluster
	b := nodeInfo(t, s, "z2g4b")
	original := presented(t, b.Endpoint)
	if original != b.TLSFingerprint {
		t.Fatalf("presented %s, Info says %s", original, b.TLSFingerprint)
	}

	files := certFiles(t, c)
	if len(files) != 2 || files["pve-root-ca.pem"] == nil || files["pve-ssl.pem"] == nil {
		t.Fatalf("files: %v", files)
	}
	if fp := files["pve-ssl.pem"]["fingerprint"]; fp != original {
		t.Fatalf("pve-ssl.pem fingerprint %v, presented %s", fp, original)
	}
	if st := files["pve-ssl.pem"]["subject"]; st != "/O=Proxmox Virtual Environment/OU=PVE Cluster Node/CN=z2g4b.localdomain" {
		t.Fatalf("subject %v", st)
	}

	cert1, key1 := testCert(t, "z2g4b.lab.example", time.Now().AddDate(1, 0, 0))
	_, key2 := testCert(t, "other", time.Now().AddDate(1, 0, 0))

	// The key must match.
	r := c.do("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", cert1, "key", key2, "restart", "1"))
	if r.status != 500 || !strings.Contains(r.msg(), "key does not match the certificate (chain)") {
		t.Fatalf("mismatch: %d %s", r.status, r.raw)
	}
	// Not PEM.
	r = c.do("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", "hello", "key", key1))
	if r.status != 400 || r.errs()["certificates"] != "invalid format - not a valid PEM-formatted string.\n" {
		t.Fatalf("bad PEM: %d %s", r.status, r.raw)
	}
	// Without key and no existing one.
	r = c.do("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", cert1))
	if r.status != 400 || r.errs()["key"] != "Attempted to upload custom certificate without (existing) key." {
		t.Fatalf("no key: %d %s", r.status, r.raw)
	}

	got := c.ok("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", "leading text\n"+cert1, "key", key1, "restart", "1")).data().(map[string]any)
	if got["filename"] != "pveproxy-ssl.pem" || got["subject"] != "/O=Lab/CN=z2g4b.lab.example" || got["public-key-type"] != "id-ecPublicKey" || got["public-key-bits"] != float64(256) {
		t.Fatalf("info: %v", got)
	}
	san := got["san"].([]any)
	if len(san) != 3 || san[1] != "127.0.0.1" || san[2] != "fd00:0000:0000:0000:0000:0000:0000:0001" {
		t.Fatalf("san %v", san)
	}
	fp1 := got["fingerprint"].(string)
	if p := presented(t, b.Endpoint); p != fp1 {
		t.Fatalf("after restart the node presents %s, want %s", p, fp1)
	}
	if n := c.ok("GET", "/nodes", nil).data().([]any)[1].(map[string]any); n["ssl_fingerprint"] != fp1 {
		t.Fatalf("GET /nodes ssl_fingerprint %v", n["ssl_fingerprint"])
	}

	// Overwriting needs force.
	cert2, key2 := testCert(t, "z2g4b.lab.example", time.Now().AddDate(1, 0, 0))
	r = c.do("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", cert2, "key", key2, "restart", "1"))
	if r.status != 500 || r.msg() != "Custom certificate file exists but force flag is not set.\n" {
		t.Fatalf("without force: %d %s", r.status, r.raw)
	}
	// Without restart the files change but pveproxy presents the old one.
	fp2 := c.ok("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", cert2, "key", key2, "force", "1")).data().(map[string]any)["fingerprint"].(string)
	if p := presented(t, b.Endpoint); p != fp1 {
		t.Fatalf("without restart the node presents %s, want the old %s", p, fp1)
	}
	if certFiles(t, c)["pveproxy-ssl.pem"]["fingerprint"] != fp2 {
		t.Fatal("info does not show the new file")
	}
	// A new certificate without a key keeps the existing key.
	c.ok("POST", "/nodes/z2g4b/certificates/custom", vals("certificates", cert2, "force", "1", "restart", "1"))
	if p := presented(t, b.Endpoint); p != fp2 {
		t.Fatalf("after restart %s, want %s", p, fp2)
	}

	c.ok("DELETE", "/nodes/z2g4b/certificates/custom", vals("restart", "1"))
	if p := presented(t, b.Endpoint); p != original {
		t.Fatalf("after delete the node presents %s, want pve-ssl %s", p, original)
	}
	if f := certFiles(t, c); f["pveproxy-ssl.pem"] != nil {
		t.Fatal("pveproxy-ssl.pem still listed")
	}
}

func TestPEMFormats(t *testing.T) {
	cert, key := testCert(t, "x.example", time.Now().Add(time.Hour))
	for _, tc := range []struct {
		format, v string
		ok        bool
	}{
		{"pem-certificate-chain", cert, true},
		{"pem-certificate-chain", cert + "\n" + cert, true},
		{"pem-certificate-chain", "junk before\n" + cert, true},
		{"pem-certificate-chain", key, false},
		{"pem-certificate-chain", "-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n", false},
		{"pem-string", key, true},
		{"pem-string", "nope", false},
		{"pem-certificate", cert, true},
		{"pem-certificate", cert + cert, false},
	} {
		if got := checkPEM(tc.format, tc.v) == ""; got != tc.ok {
			t.Errorf("%s %.40q: ok=%v, want %v", tc.format, tc.v, got, tc.ok)
		}
	}
}
