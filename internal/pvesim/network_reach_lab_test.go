package pvesim

import (
	"fmt"
	"strings"
	"testing"
)

// The shipped reference lab: every node answers from the installer's
// state, the cutover to bridge0 over bond0 in one reload keeps it
// answering, and so does the hand-built end state.
func TestReachLabFreshInstallCutover(t *testing.T) {
	s, info := startSim(t, Options{Lab: shippedLab(t, "reference"), NoSSH: true})
	for _, n := range info.Nodes {
		if ok, why := s.Reachable(n.Name); !ok {
			t.Fatalf("%s fresh from the installer: %s", n.Name, why)
		}
	}
	if f := s.NetworkInterfacesFile("z2g4a"); !strings.HasSuffix(f, "\n\nsource /etc/network/interfaces.d/*\n") {
		t.Errorf("the installer's file does not end in its source line:\n%s", f)
	}
	s.mu.Lock()
	m := *s.st.Nodes["z2g4a"].Mgmt
	s.mu.Unlock()
	c := standaloneClient(t, info, 0)
	base := "/nodes/z2g4a/network"
	c.ok("DELETE", base+"/vmbr0", nil)
	c.ok("POST", base, vals("iface", "bond0", "type", "bond", "slaves", m.NIC+" bcm5720p1", "bond_mode", "802.3ad", "autostart", "1"))
	c.ok("POST", base, vals("iface", "bridge0", "type", "bridge", "bridge_ports", "bond0", "autostart", "1",
		"cidr", fmt.Sprintf("%s/%d", m.Address, m.Prefix), "gateway", m.Gateway))
	if ok, _ := s.Reachable("z2g4a"); !ok {
		t.Fatal("staging cut the node off")
	}
	upid := c.ok("PUT", base, nil).data().(string)
	if st := c.waitTask("z2g4a", upid); st["exitstatus"] != "OK" {
		t.Fatalf("reload: %v", st)
	}
	if ok, why := s.Reachable("z2g4a"); !ok {
		t.Fatalf("after the cutover: %s", why)
	}
	if br := findIface(c.ok("GET", base, nil).data(), "bridge0"); br["active"] != float64(1) {
		t.Errorf("bridge0 = %v", br)
	}
	if f := s.NetworkInterfacesFile("z2g4a"); !strings.HasSuffix(f, "\nsource /etc/network/interfaces.d/*\n") {
		t.Errorf("PVE's writer dropped the source line:\n%s", f)
	}
}

func TestReachLabHandBuilt(t *testing.T) {
	s, info := startHandBuiltForTest(t, referenceLabForTest())
	for _, n := range info.Nodes {
		if ok, why := s.Reachable(n.Name); !ok {
			t.Errorf("%s hand-built: %s", n.Name, why)
		}
	}
}
