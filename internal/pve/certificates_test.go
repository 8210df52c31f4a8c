package pve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// simClients starts a clustered simulator and returns a token client and a
// root@pam ticket client, both on the first node.
func simClients(t *testing.T) (*pvesim.Sim, *pve.Client, *pve.Client) {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "lab", TaskDuration: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	tok, err := pve.NewClient(pve.Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	root, err := pve.NewClient(pve.Config{Endpoint: info.Endpoint, Username: "root@pam", Password: info.RootPassword, TLSFingerprint: info.TLSFingerprint, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sim, tok, root
}

func selfSigned(t *testing.T, cn string) (string, string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}))
}

func wait(t *testing.T, c *pve.Client, upid string, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitTask(context.Background(), upid); err != nil {
		t.Fatal(err)
	}
}

func TestClientCertificates(t *testing.T) {
	sim, tok, _ := simClients(t)
	ctx := context.Background()
	cert, key := selfSigned(t, "z2g4b.lab.example")
	ci, err := tok.UploadCustomCertificate(ctx, "z2g4b", cert, key, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if ci.Filename != pve.CertFileCustom || ci.Subject != "/CN=z2g4b.lab.example" || !reflect.DeepEqual(ci.SAN, []string{"z2g4b.lab.example"}) ||
		ci.PublicKeyBits != 256 || ci.NotAfter.Sub(ci.NotBefore) != 49*time.Hour {
		t.Fatalf("info %+v", ci)
	}
	if got := sim.ServedFingerprint("z2g4b"); got != ci.Fingerprint {
		t.Fatalf("served %s, uploaded %s", got, ci.Fingerprint)
	}
	list, err := tok.NodeCertificates(ctx, "z2g4b")
	if err != nil || len(list) != 3 || list[2].Fingerprint != ci.Fingerprint {
		t.Fatalf("list %+v %v", list, err)
	}
	if err := tok.DeleteCustomCertificate(ctx, "z2g4b", true); err != nil {
		t.Fatal(err)
	}
	if list, _ := tok.NodeCertificates(ctx, "z2g4b"); len(list) != 2 || sim.ServedFingerprint("z2g4b") != list[1].Fingerprint {
		t.Fatalf("after delete %+v", list)
	}
}

func TestClientACME(t *testing.T) {
	_, tok, root := simClients(t)
	ctx := context.Background()
	dir := "https://ca.lab.example/acme/acme/directory"
	if _, err := tok.RegisterACMEAccount(ctx, "internal", []string{"ops@lab.example"}, dir, ""); err == nil {
		t.Fatal("a token registered an account")
	}
	upid, err := root.RegisterACMEAccount(ctx, "internal", []string{"ops@lab.example", "x@lab.example"}, dir, "")
	wait(t, root, upid, err)
	names, err := tok.ACMEAccounts(ctx)
	if err != nil || !reflect.DeepEqual(names, []string{"internal"}) {
		t.Fatalf("names %v %v", names, err)
	}
	a, err := root.ACMEAccount(ctx, "internal")
	if err != nil || a.Directory != dir || !reflect.DeepEqual(a.Contact, []string{"ops@lab.example", "x@lab.example"}) || a.Status != "valid" || a.Location == "" {
		t.Fatalf("account %+v %v", a, err)
	}
	upid, err = root.UpdateACMEAccount(ctx, "internal", []string{"new@lab.example"})
	wait(t, root, upid, err)
	if a, _ := root.ACMEAccount(ctx, "internal"); !reflect.DeepEqual(a.Contact, []string{"new@lab.example"}) {
		t.Fatalf("contact %v", a.Contact)
	}

	if err := tok.CreateACMEPlugin(ctx, pve.ACMEPlugin{ID: "pdns", Type: "dns", API: "pdns", Data: map[string]string{"PDNS_Url": "http://ns1:8081", "PDNS_Token": "s3cret"}, ValidationDelay: new(int64(5))}); err != nil {
		t.Fatal(err)
	}
	p, err := tok.ACMEPlugin(ctx, "pdns")
	if err != nil || p.Data["PDNS_Token"] != "s3cret" || p.ValidationDelay == nil || *p.ValidationDelay != 5 || p.Digest == "" {
		t.Fatalf("plugin %+v %v", p, err)
	}
	if err := tok.UpdateACMEPlugin(ctx, pve.ACMEPlugin{ID: "pdns", Disable: true}, []string{"validation-delay"}, p.Digest); err != nil {
		t.Fatal(err)
	}
	if p, _ := tok.ACMEPlugin(ctx, "pdns"); !p.Disable || p.ValidationDelay != nil {
		t.Fatalf("after update %+v", p)
	}
	if err := tok.DeleteACMEPlugin(ctx, "pdns"); err != nil {
		t.Fatal(err)
	}
	if _, err := tok.ACMEPlugin(ctx, "pdns"); !pve.IsNotFound(err) {
		t.Fatalf("deleted plugin: %v", err)
	}

	if err := tok.UpdateNodeConfig(ctx, "z2g4b", map[string]string{"acme": "account=internal", "acmedomain0": pve.ACMEDomain{Domain: "z2g4b.lab.example"}.String(), "description": "rack 2"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	nc, err := tok.NodeConfig(ctx, "z2g4b")
	if err != nil || nc.ACMEAccount != "internal" || nc.ACMEDomains[0].Domain != "z2g4b.lab.example" || nc.Description != "rack 2" || nc.Digest == "" {
		t.Fatalf("config %+v %v", nc, err)
	}
	upid, err = tok.OrderNodeCertificate(ctx, "z2g4b", false)
	wait(t, tok, upid, err)
	upid, err = tok.RenewNodeCertificate(ctx, "z2g4b", false) // 24 h certificate: due
	wait(t, tok, upid, err)
	upid, err = tok.RevokeNodeCertificate(ctx, "z2g4b")
	wait(t, tok, upid, err)
	if err := tok.UpdateNodeConfig(ctx, "z2g4b", nil, []string{"acme", "acmedomain0"}, nc.Digest); err != nil {
		t.Fatal(err)
	}

	upid, err = root.DeactivateACMEAccount(ctx, "internal")
	wait(t, root, upid, err)
	if _, err := root.ACMEAccount(ctx, "internal"); !pve.IsNotFound(err) {
		t.Fatalf("deactivated account: %v", err)
	}
}
