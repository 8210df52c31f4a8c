package pvesim

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestAuthAndEnvelope(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")

	t.Run("no credentials", func(t *testing.T) {
		anon := newClient(t, info, "")
		anon.token = ""
		r := anon.do("GET", "/version", nil)
		if r.status != 401 || r.reason != "No ticket" || len(r.raw) != 0 {
			t.Fatalf("got %d %q %q", r.status, r.reason, r.raw)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		bad := newClient(t, info, "")
		bad.token = "root@pam!terraform=00000000-0000-0000-0000-000000000000"
		r := bad.do("GET", "/version", nil)
		if r.status != 401 || r.reason != "authentication failure" {
			t.Fatalf("got %d %q", r.status, r.reason)
		}
	})
	t.Run("version with token", func(t *testing.T) {
		r := c.ok("GET", "/version", nil)
		if r.data().(map[string]any)["version"] != "9.1.2" {
			t.Fatalf("version: %s", r.raw)
		}
	})
	t.Run("token space separator", func(t *testing.T) {
		req, _ := http.NewRequest("GET", c.base+"/version", nil)
		req.Header.Set("Authorization", "PVEAPIToken "+info.APIToken)
		res, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Server") != "pve-api-daemon/3.0" {
			t.Fatalf("got %d %q", res.StatusCode, res.Header.Get("Server"))
		}
	})
	t.Run("root-only 403 before param checks", func(t *testing.T) {
		r := c.do("POST", "/cluster/config", vals("bogus", "x"))
		if r.status != 403 || r.msg() != "Permission check failed (user != root@pam)\n" {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
		for _, p := range []struct{ m, path string }{
			{"POST", "/cluster/config/join"}, {"POST", "/nodes/z2g4a/ceph/osd"},
			{"DELETE", "/nodes/z2g4a/ceph/osd/3"}, {"PUT", "/nodes/z2g4a/disks/wipedisk"},
		} {
			if r := c.do(p.m, p.path, nil); r.status != 403 {
				t.Fatalf("%s %s: %d", p.m, p.path, r.status)
			}
		}
	})
	t.Run("501", func(t *testing.T) {
		r := c.do("GET", "/nope", nil)
		if r.status != 501 || r.msg() != "Method 'GET /nope' not implemented\n" || r.reason != "Method 'GET /nope' not implemented" {
			t.Fatalf("got %d %q %s", r.status, r.reason, r.raw)
		}
		if r := c.do("PATCH", "/version", nil); r.status != 501 {
			t.Fatalf("PATCH: %d", r.status)
		}
		if r := c.do("DELETE", "/version", nil); r.status != 501 || r.msg() != "Method 'DELETE /version' not implemented\n" {
			t.Fatalf("DELETE: %d %s", r.status, r.raw)
		}
		req, _ := http.NewRequest("DELETE", c.base+"/nodes/z2g4a/network", strings.NewReader("a=b"))
		req.Header.Set("Authorization", "PVEAPIToken="+info.APIToken)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 501 || res.Status != "501 Unexpected content for method 'DELETE'" {
			t.Fatalf("body on DELETE: %q", res.Status)
		}
	})
	t.Run("500 unknown node", func(t *testing.T) {
		r := c.do("GET", "/nodes/nope/network", nil)
		want := "hostname lookup 'nope' failed - failed to get address info for: nope: Name or service not known\n"
		if r.status != 500 || r.msg() != want || r.env["data"] != nil {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
	})
	t.Run("400 shapes", func(t *testing.T) {
		r := c.do("POST", "/nodes/z2g4a/network", vals("iface", "vmbr9", "type", "bridge", "autostart", "true", "mtu", "1279", "bogus", "1", "bond_mode", "fast"))
		if r.status != 400 || r.msg() != "Parameter verification failed.\n" || r.reason != "Parameter verification failed." {
			t.Fatalf("got %d %q %s", r.status, r.reason, r.raw)
		}
		want := map[string]string{
			"autostart": "type check ('boolean') failed - got 'true'",
			"mtu":       "value must have a minimum value of 1280",
			"bogus":     "property is not defined in schema and the schema does not allow additional properties",
			"bond_mode": "value 'fast' does not have a value in the enumeration 'balance-rr, active-backup, balance-xor, broadcast, 802.3ad, balance-tlb, balance-alb, balance-slb, lacp-balance-slb, lacp-balance-tcp'",
		}
		for k, v := range want {
			if r.errs()[k] != v {
				t.Errorf("errors[%s] = %v, want %q", k, r.errs()[k], v)
			}
		}
		r = c.do("POST", "/nodes/z2g4a/network", vals("iface", "vmbr9", "type", "bridge", "mtu", "65521", "address", "10.0.0.1"))
		if r.errs()["mtu"] != "value must have a maximum value of 65520" || r.errs()["netmask"] != "missing property required by 'address'" {
			t.Fatalf("got %s", r.raw)
		}
		r = c.do("POST", "/nodes/z2g4a/network", vals("type", "bridge"))
		if r.errs()["iface"] != "property is missing and it is not optional" {
			t.Fatalf("got %s", r.raw)
		}
		r = c.do("POST", "/nodes/z2g4a/network", vals("iface", "9x", "type", "bridge", "cidr", "10.1.1.1"))
		if r.errs()["iface"] != "invalid format - invalid network interface name '9x'\n" ||
			r.errs()["cidr"] != "invalid format - value does not look like a valid IPv4 CIDR network\n" {
			t.Fatalf("got %s", r.raw)
		}
	})
}

func TestTicketLoginAndCSRF(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")
	c.token = ""
	if r := c.do("POST", "/access/ticket", vals("username", "root@pam", "password", "wrong")); r.status != 401 || r.reason != "authentication failure" {
		t.Fatalf("bad password: %d %q", r.status, r.reason)
	}
	r := c.ok("POST", "/access/ticket", vals("username", "root", "realm", "pam", "password", info.RootPassword))
	d := r.data().(map[string]any)
	ticket, _ := d["ticket"].(string)
	if !regexp.MustCompile(`^PVE:root@pam:[0-9A-F]{8}::[A-Za-z0-9+/=]+$`).MatchString(ticket) || d["username"] != "root@pam" {
		t.Fatalf("ticket response: %s", r.raw)
	}
	if _, ok := d["clustername"]; ok {
		t.Fatal("standalone login must not report a clustername")
	}
	c.ticket = ticket
	// GET needs no CSRF token.
	c.ok("GET", "/nodes", nil)
	// POST without CSRF token fails.
	r = c.do("POST", "/nodes/z2g4a/network", vals("iface", "vmbr5", "type", "bridge"))
	if r.status != 401 || r.reason != "Permission denied - invalid csrf token" {
		t.Fatalf("no csrf: %d %q", r.status, r.reason)
	}
	c.csrf = "0000:bogus"
	if r := c.do("POST", "/nodes/z2g4a/network", vals("iface", "vmbr5", "type", "bridge")); r.status != 401 {
		t.Fatalf("bad csrf: %d", r.status)
	}
	c.csrf = d["CSRFPreventionToken"].(string)
	c.ok("POST", "/nodes/z2g4a/network", vals("iface", "vmbr5", "type", "bridge"))
	// root@pam with a ticket passes the root-only permission check.
	if r := c.do("DELETE", "/cluster/config/nodes/z2g4a", nil); r.status == 403 || r.status == 401 {
		t.Fatalf("root ticket on root-only method: %d %s", r.status, r.raw)
	}
	// Ticket renewal with the old ticket as password.
	c.ok("POST", "/access/ticket", vals("username", "root@pam", "password", ticket))
	// Expired ticket.
	d2 := info
	_ = d2
	old := makeTicket(newTestDomain(t), "root@pam", time.Now().Add(-3*time.Hour))
	c.ticket = old
	if r := c.do("GET", "/version", nil); r.status != 401 {
		t.Fatalf("foreign/expired ticket: %d", r.status)
	}
}

func newTestDomain(t *testing.T) *authDomain {
	d, err := newAuthDomain()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTicketExpiry(t *testing.T) {
	d := newTestDomain(t)
	now := time.Now()
	tk := makeTicket(d, "root@pam", now.Add(-2*time.Hour-time.Minute))
	if _, ok := verifyTicket(d, tk, now); ok {
		t.Fatal("ticket older than 2h accepted")
	}
	tk = makeTicket(d, "root@pam", now.Add(-time.Hour))
	if u, ok := verifyTicket(d, tk, now); !ok || u != "root@pam" {
		t.Fatal("fresh ticket rejected")
	}
}

func TestAuthFailureDelay(t *testing.T) {
	_, info := startSim(t, Options{AuthFailureDelay: 200 * time.Millisecond})
	c := newClient(t, info, "")
	c.token = ""
	start := time.Now()
	if r := c.do("GET", "/version", nil); r.status != 401 {
		t.Fatal(r.status)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Fatal("401 was not delayed")
	}
}

func TestJSONBodyAndQueryOverride(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")
	req, _ := http.NewRequest("POST", c.base+"/nodes/z2g4a/network?mtu=9000",
		strings.NewReader(`{"iface":"vmbr7","type":"bridge","autostart":true,"mtu":1500,"bridge_vlan_aware":false}`))
	req.Header.Set("Authorization", "PVEAPIToken="+info.APIToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %s", res.Status)
	}
	r := c.ok("GET", "/nodes/z2g4a/network/vmbr7", nil)
	m := r.data().(map[string]any)
	if m["mtu"] != "9000" || m["autostart"] != float64(1) || m["bridge_vlan_aware"] != float64(1) {
		t.Fatalf("got %s", r.raw)
	}
}
