package pve

import (
	"context"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// A login whose connection dropped is sent again: it hands out a ticket
// and changes nothing else (under drop-before on writes, resources failed
// "connection ... failed: Post .../access/ticket: EOF").
func TestLoginRetriedAfterADroppedConnection(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{NoSSH: true, Faults: mustFaults(t, "POST /access/ticket=drop-before:1x")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	c, err := NewClient(Config{Endpoint: info.Endpoint, Username: "root@pam", Password: info.RootPassword,
		TLSFingerprint: info.TLSFingerprint, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Authenticate(context.Background()); err != nil {
		t.Fatalf("login after one dropped connection: %v", err)
	}
	if logins := sim.CountRequests("POST", "/access/ticket"); logins != 2 {
		t.Errorf("%d logins, want 2 (one dropped, one again)", logins)
	}
}

func mustFaults(t *testing.T, spec string) []pvesim.Fault {
	t.Helper()
	fs, err := pvesim.ParseFaultSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
