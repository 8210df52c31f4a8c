package pve

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

type recorded struct {
	method, path string
	form         url.Values
	rawBody      string
}

func recordingServer(t *testing.T, reply string) (*Client, *[]recorded) {
	t.Helper()
	var got []recorded
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		if r.Method == http.MethodGet || r.Method == http.MethodDelete {
			form = r.URL.Query()
		}
		got = append(got, recorded{r.Method, r.URL.EscapedPath(), form, string(b)})
		writeJSON(w, 200, reply)
	}))
	return clientFor(t, ts, Config{MaxParallelPerNode: 1}), &got
}

func TestNetworkRequestEncoding(t *testing.T) {
	c, got := recordingServer(t, `{"data":null}`)
	ctx := context.Background()

	err := c.CreateNetworkInterface(ctx, "pve1", "vmbr1", NetworkInterfaceRequest{
		Type:            "bridge",
		CIDR:            ptr("10.0.0.2/24"),
		Gateway:         ptr(""), // empty on create: omitted
		MTU:             ptr(int64(9000)),
		Autostart:       ptr(true),
		BridgePorts:     &[]string{"eno1", "eno2"},
		BridgeVLANAware: ptr(false), // false on create: omitted (PVE would render "yes")
		Comments:        ptr("uplink"),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CreateNetworkInterface(ctx, "pve1", "bond0", NetworkInterfaceRequest{
		Type: "bond", Slaves: &[]string{"bcm5720p0", "bcm5720p1"}, BondMode: ptr("802.3ad"),
		BondXmitHashPolicy: ptr("layer3+4"), Autostart: ptr(false),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CreateNetworkInterface(ctx, "pve1", "corosync60", NetworkInterfaceRequest{
		Type: "vlan", VLANID: ptr(int64(60)), VLANRawDevice: ptr("bridge0"), BondPrimary: nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.UpdateNetworkInterface(ctx, "pve1", "vmbr1", NetworkInterfaceRequest{
		Type:            "bridge",
		CIDR:            ptr("10.0.0.3/24"),
		Comments:        ptr(""),
		BridgeVLANAware: ptr(false),
		BridgeVIDs:      ptr("2-4094"),
		Delete:          []string{"mtu", "cidr", "mtu"}, // cidr is being set: not deleted
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.UpdateNetworkInterface(ctx, "pve1", "vmbr2", NetworkInterfaceRequest{Type: "bridge", BridgeVLANAware: ptr(true), BridgePorts: &[]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateNetworkInterface(ctx, "pve1", "vmbr2", NetworkInterfaceRequest{}); err == nil {
		t.Error("update without type accepted")
	}
	if err := c.DeleteNetworkInterface(ctx, "pve1", "bridge0.60"); err != nil {
		t.Fatal(err)
	}
	if err := c.RevertNetwork(ctx, "pve1"); err != nil {
		t.Fatal(err)
	}

	want := []recorded{
		{"POST", "/api2/json/nodes/pve1/network", url.Values{
			"iface": {"vmbr1"}, "type": {"bridge"}, "cidr": {"10.0.0.2/24"}, "mtu": {"9000"}, "autostart": {"1"},
			"bridge_ports": {"eno1 eno2"}, "comments": {"uplink"},
		}, ""},
		{"POST", "/api2/json/nodes/pve1/network", url.Values{
			"iface": {"bond0"}, "type": {"bond"}, "slaves": {"bcm5720p0 bcm5720p1"}, "bond_mode": {"802.3ad"},
			"bond_xmit_hash_policy": {"layer3+4"}, "autostart": {"0"},
		}, ""},
		{"POST", "/api2/json/nodes/pve1/network", url.Values{
			"iface": {"corosync60"}, "type": {"vlan"}, "vlan-id": {"60"}, "vlan-raw-device": {"bridge0"},
		}, ""},
		{"PUT", "/api2/json/nodes/pve1/network/vmbr1", url.Values{
			"type": {"bridge"}, "cidr": {"10.0.0.3/24"}, "bridge_vids": {"2-4094"},
			"delete": {"comments,bridge_vlan_aware,mtu"},
		}, ""},
		{"PUT", "/api2/json/nodes/pve1/network/vmbr2", url.Values{
			"type": {"bridge"}, "bridge_vlan_aware": {"1"}, "delete": {"bridge_ports"},
		}, ""},
		{"DELETE", "/api2/json/nodes/pve1/network/bridge0.60", url.Values{}, ""},
		{"DELETE", "/api2/json/nodes/pve1/network", url.Values{}, ""},
	}
	if len(*got) != len(want) {
		t.Fatalf("got %d requests, want %d: %+v", len(*got), len(want), *got)
	}
	for i, w := range want {
		g := (*got)[i]
		if g.method != w.method || g.path != w.path || !reflect.DeepEqual(g.form, w.form) {
			t.Errorf("request %d:\n got %s %s %v\nwant %s %s %v", i, g.method, g.path, g.form, w.method, w.path, w.form)
		}
		if (g.method == "DELETE") && g.rawBody != "" {
			t.Errorf("DELETE carries a body: %q", g.rawBody)
		}
	}
}

func TestApplyNetwork(t *testing.T) {
	c, got := recordingServer(t, `{"data":"`+testUPID+`"}`)
	upid, err := c.ApplyNetwork(context.Background(), "pve1")
	if err != nil || upid != testUPID {
		t.Fatalf("ApplyNetwork = %q, %v", upid, err)
	}
	if g := (*got)[0]; g.method != "PUT" || g.path != "/api2/json/nodes/pve1/network" {
		t.Errorf("request = %+v", g)
	}
}

const mixedNetworkPayload = `{"data":[{"iface":"bond0","type":"bond","slaves":"bcm5720p0 bcm5720p1","bond_mode":"802.3ad","autostart":1,"active":1,"method":"manual","families":["inet"],"priority":5},{"iface":"bridge0.60","type":"vlan","vlan-id":"60","vlan-raw-device":"bridge0","address":"169.254.60.10","netmask":"24","cidr":"169.254.60.10/24","method":"static","exists":null,"comments":"corosync\n"},{"iface":"vmbr0","type":"bridge","bridge_ports":"bond0","bridge_vlan_aware":1,"bridge_vids":"2-4094","bridge_fd":"0","bridge_stp":"off","mtu":"9000","exists":1,"autostart":"1","gateway":"10.0.0.1","address6":"fd00::2","netmask6":64,"cidr6":"fd00::2/64","method6":"static"},{"iface":"vmbr9","type":"bridge","bridge_ports":"none","active":0}],"changes":"--- /etc/network/interfaces\n+++ /etc/network/interfaces.new\n"}`

func TestListNetworkLenientDecoding(t *testing.T) {
	c, got := recordingServer(t, mixedNetworkPayload)
	l, err := c.Network(context.Background(), "pve1")
	if err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 || (*got)[0].method != "GET" || (*got)[0].path != "/api2/json/nodes/pve1/network" {
		t.Fatalf("requests = %+v", *got)
	}
	if l.Changes != "--- /etc/network/interfaces\n+++ /etc/network/interfaces.new\n" {
		t.Errorf("Changes = %q", l.Changes)
	}
	want := []NetworkInterface{
		{Iface: "bond0", Type: "bond", Slaves: []string{"bcm5720p0", "bcm5720p1"}, BondMode: "802.3ad", Autostart: true, Active: true,
			Method: "manual", Families: []string{"inet"}, Priority: 5},
		{Iface: "bridge0.60", Type: "vlan", VLANID: 60, VLANRawDevice: "bridge0", Address: "169.254.60.10", Netmask: "24",
			CIDR: "169.254.60.10/24", Method: "static", Comments: "corosync\n"},
		{Iface: "vmbr0", Type: "bridge", BridgePorts: []string{"bond0"}, BridgeVLANAware: true, BridgeVIDs: "2-4094", MTU: 9000,
			Exists: true, Autostart: true, Gateway: "10.0.0.1", Address6: "fd00::2", Netmask6: "64", CIDR6: "fd00::2/64", Method6: "static"},
		{Iface: "vmbr9", Type: "bridge"},
	}
	if !reflect.DeepEqual(l.Interfaces, want) {
		t.Errorf("interfaces:\n got %+v\nwant %+v", l.Interfaces, want)
	}
}

func TestGetNetworkInterface(t *testing.T) {
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/vmbr0") {
			writeJSON(w, 200, `{"data":{"type":"bridge","bridge_ports":"eno1,eno2","autostart":1,"mtu":1500,"exists":true}}`)
			return
		}
		writeJSON(w, 400, `{"data":null,"message":"Parameter verification failed.\n","errors":{"iface":"interface does not exist"}}`)
	}))
	c := clientFor(t, ts, Config{})
	ni, err := c.NetworkInterface(context.Background(), "pve1", "vmbr0")
	if err != nil {
		t.Fatal(err)
	}
	if ni.Iface != "vmbr0" || !reflect.DeepEqual(ni.BridgePorts, []string{"eno1", "eno2"}) || !ni.Autostart || ni.MTU != 1500 || !ni.Exists {
		t.Errorf("interface = %+v", ni)
	}
	_, err = c.NetworkInterface(context.Background(), "pve1", "vmbr7")
	if !IsNotFound(err) {
		t.Errorf("missing interface: err = %v, want not found", err)
	}
}

func TestFlexDecoders(t *testing.T) {
	var i flexInt
	for in, want := range map[string]int64{`5`: 5, `"5"`: 5, `null`: 0, `""`: 0, `"9000"`: 9000, `1.0`: 1} {
		if err := i.UnmarshalJSON([]byte(in)); err != nil || int64(i) != want {
			t.Errorf("flexInt(%s) = %d, %v; want %d", in, i, err, want)
		}
	}
	if err := i.UnmarshalJSON([]byte(`"abc"`)); err == nil {
		t.Error(`flexInt("abc") accepted`)
	}
	var b flexBool
	for in, want := range map[string]bool{`1`: true, `0`: false, `"1"`: true, `true`: true, `false`: false, `null`: false, `"yes"`: true, `"off"`: false} {
		if err := b.UnmarshalJSON([]byte(in)); err != nil || bool(b) != want {
			t.Errorf("flexBool(%s) = %v, %v; want %v", in, b, err, want)
		}
	}
	if err := b.UnmarshalJSON([]byte(`"maybe"`)); err == nil {
		t.Error(`flexBool("maybe") accepted`)
	}
}
