package pvesim

import (
	"strings"
	"testing"
)

func TestInterfacesRenderParseRoundTrip(t *testing.T) {
	one := 1
	vids := "2-100 200"
	configs := map[string]*netConfig{
		"installer": func() *netConfig {
			cfg, _ := parseInterfaces(installerInterfaces, physicalNICs)
			return cfg
		}(),
		"bond and bridge": func() *netConfig {
			cfg, _ := parseInterfaces(bondBridgeInterfaces, physicalNICs)
			return cfg
		}(),
		"api-built": {Ifaces: map[string]*netIface{
			"bcm5720p0": {Type: "eth", Autostart: true},
			"bcm5720p1": {Type: "eth", Autostart: true, MTU: 9000},
			"bond0": {Type: "bond", Autostart: true, Slaves: "bcm5720p0 bcm5720p1", BondMode: "active-backup",
				BondPrimary: "bcm5720p0", MTU: 9000, Comments: "uplinks\nsecond line\n"},
			"vmbr1":    {Type: "bridge", Autostart: true, BridgePorts: "bond0", BridgeVlanAware: &one, BridgeVids: &vids, MTU: 9000},
			"vmbr1.60": {Type: "vlan", Autostart: true, Address: "169.254.60.10", Netmask: "24", MTU: 1500},
			"storage":  {Type: "vlan", Autostart: true, VlanRawDevice: "vmbr1", VlanID: 50, Address: "169.254.50.10", Netmask: "24"},
			"vmbr0": {Type: "bridge", Autostart: true, BridgePorts: "i219", Address: "172.27.2.10", Netmask: "24",
				Gateway: "172.27.2.254", Address6: "fd00::10", Netmask6: "64", Gateway6: "fd00::1", Comments6: "v6 too\n"},
			"i219":     {Type: "eth"},
			"cx354ap1": {Type: "eth", Method: "dhcp"},
			"bond1":    {Type: "bond", Slaves: "", BondMode: "802.3ad", BondXmitHashPolicy: "layer3+4"},
		}, Options: []string{"source /etc/network/interfaces.d/*"}},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			cfg.fixup()
			cfg.renumber()
			text := cfg.render()
			back, errs := parseInterfaces(text, physicalNICs)
			if len(errs) > 0 {
				t.Fatalf("parse errors: %v\n%s", errs, text)
			}
			if again := back.render(); again != text {
				t.Errorf("render(parse(render)) differs:\n--- first\n%s\n--- again\n%s", text, again)
			}
			for n, d := range cfg.Ifaces {
				b := back.Ifaces[n]
				if b == nil {
					t.Errorf("%s lost", n)
					continue
				}
				if b.Type != d.Type || b.Autostart != d.Autostart || b.Address != d.Address || b.Gateway6 != d.Gateway6 {
					t.Errorf("%s = %+v, want %+v", n, b, d)
				}
			}
		})
	}
}

func TestInterfacesParseUserSyntax(t *testing.T) {
	text := `# written by hand
auto lo
iface lo inet loopback

allow-hotplug eno1
iface eno1 inet manual

auto bond0
iface bond0 inet manual
	bond_slaves eno2 eno1
	bond-mode 4
	bond-miimon 100

auto br0
iface br0 inet static
	address 10.0.0.5
	netmask 255.255.255.0
	gateway 10.0.0.1
	bridge_ports bond0
	bridge_stp off
	bridge_fd 0
	mtu 9000
#management bridge

# a file comment after a blank line
iface br0 inet6 static
	address fd00::5/64

auto vlan30
iface vlan30 inet manual
	vlan-raw-device br0

source-directory /etc/network/interfaces.d
`
	cfg, errs := parseInterfaces(text, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	br := cfg.Ifaces["br0"]
	if br.Type != "bridge" || br.Address != "10.0.0.5" || br.Netmask != "24" || br.Gateway != "10.0.0.1" || br.BridgePorts != "bond0" ||
		br.MTU != 9000 || br.Comments != "management bridge\n" || br.Address6 != "fd00::5" || br.Netmask6 != "64" || !br.Autostart {
		t.Errorf("br0 = %+v", br)
	}
	if b := cfg.Ifaces["bond0"]; b.Type != "bond" || b.Slaves != "eno1 eno2" || b.BondMode != "802.3ad" {
		t.Errorf("bond0 = %+v", b)
	}
	if e := cfg.Ifaces["eno1"]; e.Type != "eth" || !e.Autostart {
		t.Errorf("eno1 (allow-hotplug counts as auto, as PVE reads it) = %+v", e)
	}
	if v := cfg.Ifaces["vlan30"]; v.Type != "vlan" || v.VlanRawDevice != "br0" {
		t.Errorf("vlan30 = %+v", v)
	}
	if len(cfg.Options) != 1 || cfg.Options[0] != "source-directory /etc/network/interfaces.d" {
		t.Errorf("options = %q", cfg.Options)
	}
	out := cfg.render()
	for _, want := range []string{"\taddress 10.0.0.5/24\n", "iface br0 inet6 static\n\taddress fd00::5/64\n", "bond-slaves eno1 eno2", "bond-mode 802.3ad",
		"#management bridge\n", "source-directory /etc/network/interfaces.d\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "a file comment") {
		t.Errorf("a comment after a blank line became the interface's:\n%s", out)
	}
}
