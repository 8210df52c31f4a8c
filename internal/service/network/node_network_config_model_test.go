package network

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func nics(extra ...pve.NetworkInterface) []pve.NetworkInterface {
	out := []pve.NetworkInterface{
		{Iface: "bcm5720p0", Type: "eth"}, {Iface: "bcm5720p1", Type: "eth"},
		{Iface: "i219", Type: "eth"}, {Iface: "cx354ap1", Type: "eth"},
	}
	for _, x := range extra {
		i := slices.IndexFunc(out, func(n pve.NetworkInterface) bool { return n.Iface == x.Iface })
		if i >= 0 {
			out[i] = x
		} else {
			out = append(out, x)
		}
	}
	return out
}

// desiredFrom builds the planned interfaces from API-shaped literals.
func desiredFrom(t *testing.T, ins ...pve.NetworkInterface) map[string]ifaceSettings {
	t.Helper()
	out := map[string]ifaceSettings{}
	for i := range ins {
		var s ifaceSettings
		if d := s.fromAPI(context.Background(), &ins[i]); d.HasError() {
			t.Fatal(d)
		}
		out[ins[i].Iface] = s
	}
	return out
}

func stepNames(steps []stagingStep) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.String())
	}
	return strings.Join(out, ", ")
}

var referenceLab = []pve.NetworkInterface{
	{Iface: "bond0", Type: "bond", Slaves: []string{"bcm5720p0", "bcm5720p1"}, BondMode: "802.3ad", Autostart: true},
	{Iface: "bridge0", Type: "bridge", BridgePorts: []string{"bond0"}, BridgeVLANAware: true, BridgeVIDs: "2-4094",
		CIDR: "172.27.2.10/24", Gateway: "172.27.2.254", Autostart: true},
	{Iface: "bridge0.60", Type: "vlan", CIDR: "169.254.60.10/24", Autostart: true},
	{Iface: "cx354ap1", Type: "eth", CIDR: "169.254.50.10/24", MTU: 9000, Autostart: true},
}

// The installer's vmbr0 holds the gateway and bcm5720p0: it goes first,
// then everything is created after what it uses.
func TestPlanStagingCutover(t *testing.T) {
	current := &pve.NetworkList{Interfaces: nics(pve.NetworkInterface{Iface: "vmbr0", Type: "bridge",
		BridgePorts: []string{"bcm5720p0"}, CIDR: "172.27.2.10/24", Gateway: "172.27.2.254", Autostart: true})}
	steps, err := planStaging(context.Background(), "z2g4a", desiredFrom(t, referenceLab...), current)
	if err != nil {
		t.Fatal(err)
	}
	want := "delete vmbr0, update cx354ap1, create bond0, create bridge0, create bridge0.60"
	if got := stepNames(steps); got != want {
		t.Errorf("steps = %s\nwant    %s", got, want)
	}
}

// Nothing to do on a node that already has the set: no step, no reload.
func TestPlanStagingUnchanged(t *testing.T) {
	current := &pve.NetworkList{Interfaces: nics(referenceLab...)}
	steps, err := planStaging(context.Background(), "z2g4a", desiredFrom(t, referenceLab...), current)
	if err != nil || len(steps) != 0 {
		t.Errorf("steps = %s, err = %v; want none", stepNames(steps), err)
	}
}

// An interface that stays gives up its gateway and its port before the
// new holder takes them; leaving interfaces go users first; an unlisted NIC
// with configuration is reset.
func TestPlanStagingMovesGatewayAndPorts(t *testing.T) {
	current := &pve.NetworkList{Interfaces: nics(
		pve.NetworkInterface{Iface: "vmbr0", Type: "bridge", BridgePorts: []string{"bcm5720p0"},
			CIDR: "172.27.2.10/24", Gateway: "172.27.2.254", Autostart: true},
		pve.NetworkInterface{Iface: "bond9", Type: "bond", Slaves: []string{"bcm5720p1"}},
		pve.NetworkInterface{Iface: "vmbr9", Type: "bridge", BridgePorts: []string{"bond9"}},
		pve.NetworkInterface{Iface: "vmbr9.5", Type: "vlan"},
		pve.NetworkInterface{Iface: "i219", Type: "eth", MTU: 9000},
	)}
	desired := desiredFrom(t,
		pve.NetworkInterface{Iface: "vmbr0", Type: "bridge", CIDR: "10.0.0.1/24", Autostart: true},
		pve.NetworkInterface{Iface: "bridge0", Type: "bridge", BridgePorts: []string{"bcm5720p0"},
			CIDR: "172.27.2.10/24", Gateway: "172.27.2.254", Autostart: true},
	)
	steps, err := planStaging(context.Background(), "z2g4a", desired, current)
	if err != nil {
		t.Fatal(err)
	}
	want := "strip vmbr0, reset i219, delete vmbr9.5, delete vmbr9, delete bond9, create bridge0, update vmbr0"
	if got := stepNames(steps); got != want {
		t.Fatalf("steps = %s\nwant    %s", got, want)
	}
	strip := steps[0].Req
	if strip.Gateway != nil || !slices.Contains(strip.Delete, "gateway") || !slices.Contains(strip.Delete, "bridge_ports") ||
		strip.CIDR == nil || *strip.CIDR != "172.27.2.10/24" {
		t.Errorf("strip must drop gateway and ports and keep the address: %+v", strip)
	}
	reset := steps[1].Req
	if reset.Type != "eth" || !slices.Contains(reset.Delete, "mtu") {
		t.Errorf("reset must drop the NIC's MTU: %+v", reset)
	}
}

// A bridge that becomes a bond under the same name is deleted and created
// in the same pass; a bond's primary that stops being a slave is dropped
// when the slave goes.
func TestPlanStagingTypeChangeAndPrimary(t *testing.T) {
	current := &pve.NetworkList{Interfaces: nics(
		pve.NetworkInterface{Iface: "x0", Type: "bridge"},
		pve.NetworkInterface{Iface: "bond1", Type: "bond", Slaves: []string{"bcm5720p0", "bcm5720p1"}, BondMode: "active-backup", BondPrimary: "bcm5720p1"},
	)}
	desired := desiredFrom(t,
		pve.NetworkInterface{Iface: "x0", Type: "bond", Slaves: []string{"bcm5720p1"}},
		pve.NetworkInterface{Iface: "bond1", Type: "bond", Slaves: []string{"bcm5720p0"}, BondMode: "active-backup"},
	)
	steps, err := planStaging(context.Background(), "n", desired, current)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepNames(steps), "strip bond1, delete x0, update bond1, create x0"; got != want {
		t.Fatalf("steps = %s\nwant    %s", got, want)
	}
	if steps[0].Req.BondPrimary != nil || !slices.Contains(steps[0].Req.Delete, "bond-primary") {
		t.Errorf("strip must drop the primary that is no longer a slave: %+v", steps[0].Req)
	}
}

func TestPlanStagingRefusesMissingNIC(t *testing.T) {
	current := &pve.NetworkList{Interfaces: nics()}
	_, err := planStaging(context.Background(), "n", desiredFrom(t, pve.NetworkInterface{Iface: "enp9s0", Type: "eth"}), current)
	if err == nil || !strings.Contains(err.Error(), `no physical interface "enp9s0"`) {
		t.Errorf("err = %v", err)
	}
}

func TestDependencyOrderCycle(t *testing.T) {
	deps := map[string][]string{"a": {"b"}, "b": {"a"}, "c": nil}
	_, err := dependencyOrder([]string{"a", "b", "c"}, func(string) string { return typeBridge },
		func(n string) []string { return deps[n] })
	if err == nil || !strings.Contains(err.Error(), "a, b") {
		t.Errorf("err = %v", err)
	}
	order, err := dependencyOrder([]string{"v.1", "br", "bo", "e"}, func(n string) string {
		return map[string]string{"v.1": typeVLAN, "br": typeBridge, "bo": typeBond, "e": typeEth}[n]
	}, func(n string) []string { return map[string][]string{"v.1": {"br"}, "br": {"bo"}, "bo": {"e"}}[n] })
	if err != nil || fmt.Sprint(order) != "[e bo br v.1]" {
		t.Errorf("order = %v, %v", order, err)
	}
}

// MTU changes of interfaces PVE's MTU rule binds together come last:
// lowered top down, raised bottom up.
func TestPlanStagingMTUOrder(t *testing.T) {
	set := func(mtu int64) []pve.NetworkInterface {
		return []pve.NetworkInterface{
			{Iface: "bcm5720p0", Type: "eth", MTU: mtu, Autostart: true},
			{Iface: "bcm5720p1", Type: "eth", MTU: mtu, Autostart: true},
			{Iface: "bond0", Type: "bond", Slaves: []string{"bcm5720p0", "bcm5720p1"}, BondMode: "802.3ad", MTU: mtu, Autostart: true},
			{Iface: "bridge0", Type: "bridge", BridgePorts: []string{"bond0"}, MTU: mtu, Autostart: true},
		}
	}
	for _, tc := range []struct {
		from, to int64
		want     string
	}{
		{9000, 1500, "mtu bridge0, mtu bcm5720p1, mtu bcm5720p0, mtu bond0"},
		{1500, 9000, "mtu bond0, mtu bcm5720p0, mtu bcm5720p1, mtu bridge0"},
	} {
		steps, err := planStaging(context.Background(), "n", desiredFrom(t, set(tc.to)...), &pve.NetworkList{Interfaces: nics(set(tc.from)...)})
		if err != nil {
			t.Fatal(err)
		}
		if got := stepNames(steps); got != tc.want {
			t.Errorf("%d -> %d: steps = %s\nwant %s", tc.from, tc.to, got, tc.want)
		}
	}
}
