package pvesim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/examples/labs"
)

// testLab is a valid two-node lab every table case breaks in one place.
func testLab() *Lab {
	up := false
	return &Lab{Name: "t", Nodes: []LabNode{
		{
			Name:       "n1",
			Management: LabManagement{NIC: "eno1", CIDR: "10.0.0.1/24", Gateway: "10.0.0.254"},
			NICs: []LabNIC{
				{Name: "eno1", MAC: "00:10:18:00:00:01", SpeedMbps: 1000},
				{Name: "eno2", MAC: "00:10:18:00:00:02", SpeedMbps: 10000, Link: &up},
			},
			Disks: []LabDisk{
				{Device: "/dev/sda", Model: "M1", Serial: "S1", SizeBytes: 32 << 30, Transport: "sata", Boot: true},
				{Device: "/dev/nvme0n1", Model: "M2", Serial: "S2", SizeBytes: 1 << 30, Transport: "nvme", SyncWriteIOPS: 800},
			},
		},
		{
			Name:       "n2",
			Management: LabManagement{NIC: "eno1", CIDR: "10.0.0.2/24", Gateway: "10.0.0.254"},
			NICs:       []LabNIC{{Name: "eno1", MAC: "00:10:18:00:00:11", SpeedMbps: 1000}},
			// The diskless node: only its boot disk.
			Disks: []LabDisk{{Device: "/dev/sda", Model: "M1", Serial: "S3", SizeBytes: 600127266816, Transport: "sas", Rotational: true, RPM: 15000, Boot: true}},
		},
	}}
}

func labJSON(t *testing.T, l *Lab) []byte {
	t.Helper()
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseLabDefaults(t *testing.T) {
	lab, err := ParseLab(labJSON(t, testLab()))
	if err != nil {
		t.Fatal(err)
	}
	if lab.Start != StartFreshInstall || lab.PVERelease != DefaultRelease || lab.Domain != DefaultLabDomain || lab.ClusterName != "" {
		t.Fatalf("defaults: %+v", lab)
	}
	l := testLab()
	l.Start = StartCluster
	if lab, err = ParseLab(labJSON(t, l)); err != nil || lab.ClusterName != DefaultLabClusterName {
		t.Fatalf("cluster default: %v %+v", err, lab)
	}
}

// Every rule of a lab file, each with the node, the field and the fix.
func TestParseLabRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(l *Lab)
		want []string
	}{
		{"release", func(l *Lab) { l.PVERelease = "7.4" }, []string{`pve_release: "7.4" is not a simulated release; use one of 8.4, 9.1`}},
		{"start", func(l *Lab) { l.Start = "installed" }, []string{`start: "installed" is not a starting state; use "fresh-install"`}},
		{"cluster name", func(l *Lab) { l.ClusterName = "a-very-long-cluster-name" }, []string{`cluster_name: "a-very-long-cluster-name" is not a valid cluster name`}},
		{"domain", func(l *Lab) { l.Domain = "bad_domain" }, []string{`domain: "bad_domain" is not a DNS domain`}},
		{"no nodes", func(l *Lab) { l.Nodes = nil }, []string{"nodes: the lab has no nodes"}},
		{"node name missing", func(l *Lab) { l.Nodes[1].Name = "" }, []string{"nodes[1]: name: missing"}},
		{"node name dots", func(l *Lab) { l.Nodes[1].Name = "n2.lab" }, []string{`nodes[1] (n2.lab): name: "n2.lab" is not a valid node name`, "no dots"}},
		{"node name dash", func(l *Lab) { l.Nodes[1].Name = "-n2" }, []string{`nodes[1] (-n2): name: "-n2" is not a valid node name`}},
		{"node name duplicate", func(l *Lab) { l.Nodes[1].Name = "N1" }, []string{`nodes[1] (N1): name: "N1" is already the name of nodes[0]`}},
		{"cores", func(l *Lab) { l.Nodes[0].Cores = -1 }, []string{"nodes[0] (n1): cores: -1 is negative"}},
		{"memory", func(l *Lab) { l.Nodes[0].MemoryGiB = -1 }, []string{"nodes[0] (n1): memory_gib: -1 is negative"}},
		{"no nics", func(l *Lab) { l.Nodes[1].NICs = nil }, []string{"nodes[1] (n2): nics: the node has no NICs", `nodes[1] (n2): management.nic: "eno1" is not one of the node's NICs`}},
		{"nic name missing", func(l *Lab) { l.Nodes[0].NICs[1].Name = "" }, []string{"nodes[0] (n1): nics[1].name: missing"}},
		{"nic name too long", func(l *Lab) { l.Nodes[0].NICs[1].Name = "enp0s31f6abcdefgh" }, []string{`nodes[0] (n1): nics[1].name: "enp0s31f6abcdefgh" is not a usable interface name; Linux allows up to 15 characters`}},
		{"nic name colon", func(l *Lab) { l.Nodes[0].NICs[1].Name = "eno:1" }, []string{`nics[1].name: "eno:1" is not a usable interface name`}},
		{"nic name vmbr0", func(l *Lab) { l.Nodes[0].NICs[1].Name = "vmbr0" }, []string{`nics[1].name: "vmbr0" is taken`}},
		{"nic name duplicate", func(l *Lab) { l.Nodes[0].NICs[1].Name = "eno1" }, []string{`nodes[0] (n1): nics[1].name: "eno1" is listed twice`}},
		{"mac missing", func(l *Lab) { l.Nodes[0].NICs[1].MAC = "" }, []string{"nodes[0] (n1): nics[1].mac: missing"}},
		{"mac bad", func(l *Lab) { l.Nodes[0].NICs[1].MAC = "00:10:18:00:00" }, []string{`nics[1].mac: "00:10:18:00:00" is not a MAC address`}},
		{"mac multicast", func(l *Lab) { l.Nodes[0].NICs[1].MAC = "01:00:5e:00:00:01" }, []string{"nics[1].mac: 01:00:5e:00:00:01 is a multicast or zero address"}},
		{"mac duplicate across nodes", func(l *Lab) { l.Nodes[1].NICs[0].MAC = "00:10:18:00:00:02" }, []string{"nodes[1] (n2): nics[0].mac: 00:10:18:00:00:02 is already the MAC of n1 eno2"}},
		{"speed", func(l *Lab) { l.Nodes[0].NICs[1].SpeedMbps = 0 }, []string{"nodes[0] (n1): nics[1].speed_mbps: 0; give the link speed"}},
		{"mgmt nic missing", func(l *Lab) { l.Nodes[0].Management.NIC = "" }, []string{"nodes[0] (n1): management.nic: missing"}},
		{"mgmt nic unknown", func(l *Lab) { l.Nodes[0].Management.NIC = "eth0" }, []string{`nodes[0] (n1): management.nic: "eth0" is not one of the node's NICs`}},
		{"cidr missing", func(l *Lab) { l.Nodes[0].Management.CIDR = "" }, []string{"nodes[0] (n1): management.cidr: missing"}},
		{"cidr without prefix", func(l *Lab) { l.Nodes[0].Management.CIDR = "10.0.0.1" }, []string{`management.cidr: "10.0.0.1" is not an IPv4 address with a prefix length`}},
		{"cidr ipv6", func(l *Lab) { l.Nodes[0].Management.CIDR = "fd00::1/64" }, []string{`management.cidr: "fd00::1/64" is not an IPv4 address`}},
		{"cidr network address", func(l *Lab) { l.Nodes[0].Management.CIDR = "10.0.0.0/24" }, []string{"management.cidr: 10.0.0.0 is the network or broadcast address of 10.0.0.0/24"}},
		{"cidr broadcast", func(l *Lab) { l.Nodes[0].Management.CIDR = "10.0.0.255/24" }, []string{"management.cidr: 10.0.0.255 is the network or broadcast address"}},
		{"address duplicate", func(l *Lab) { l.Nodes[1].Management.CIDR = "10.0.0.1/24" }, []string{"nodes[1] (n2): management.cidr: 10.0.0.1 is already the management address of n1"}},
		{"gateway missing", func(l *Lab) { l.Nodes[0].Management.Gateway = "" }, []string{"nodes[0] (n1): management.gateway: missing"}},
		{"gateway bad", func(l *Lab) { l.Nodes[0].Management.Gateway = "10.0.0" }, []string{`management.gateway: "10.0.0" is not an IPv4 address`}},
		{"gateway outside", func(l *Lab) { l.Nodes[0].Management.Gateway = "10.0.1.254" }, []string{"nodes[0] (n1): management.gateway: 10.0.1.254 is outside the management subnet 10.0.0.0/24"}},
		{"gateway is self", func(l *Lab) { l.Nodes[0].Management.Gateway = "10.0.0.1" }, []string{"management.gateway: 10.0.0.1 is the node's own address"}},
		{"no disks", func(l *Lab) { l.Nodes[1].Disks = nil }, []string{"nodes[1] (n2): disks: the node has no disks"}},
		{"device", func(l *Lab) { l.Nodes[0].Disks[1].Device = "nvme0n1" }, []string{`nodes[0] (n1): disks[1].device: "nvme0n1" is not a block device path`}},
		{"device duplicate", func(l *Lab) { l.Nodes[0].Disks[1].Device = "/dev/sda"; l.Nodes[0].Disks[1].Transport = "sata" }, []string{"nodes[0] (n1): disks[1].device: /dev/sda is listed twice"}},
		{"model", func(l *Lab) { l.Nodes[0].Disks[1].Model = "" }, []string{"disks[1].model: missing"}},
		{"serial", func(l *Lab) { l.Nodes[0].Disks[1].Serial = "" }, []string{"disks[1].serial: missing"}},
		{"serial duplicate", func(l *Lab) { l.Nodes[1].Disks[0].Serial = "S1" }, []string{`nodes[1] (n2): disks[0].serial: "S1" is already the serial of n1 /dev/sda`}},
		{"size", func(l *Lab) { l.Nodes[0].Disks[1].SizeBytes = 0 }, []string{"nodes[0] (n1): disks[1].size_bytes: 0; give the disk's size in bytes"}},
		{"transport", func(l *Lab) { l.Nodes[0].Disks[0].Transport = "scsi" }, []string{`nodes[0] (n1): disks[0].transport: "scsi" is not a transport; use one of sata, sas, nvme, usb`}},
		{"nvme device on sata", func(l *Lab) { l.Nodes[0].Disks[1].Transport = "sata" }, []string{"disks[1].transport: sata on /dev/nvme0n1: NVMe namespaces"}},
		{"rotating nvme", func(l *Lab) { l.Nodes[0].Disks[1].Rotational = true }, []string{"disks[1].rotational: an NVMe drive does not rotate"}},
		{"rotational without rpm", func(l *Lab) { l.Nodes[1].Disks[0].RPM = 0 }, []string{"nodes[1] (n2): disks[0].rpm: a rotational disk needs its spindle speed"}},
		{"rpm on ssd", func(l *Lab) { l.Nodes[0].Disks[0].RPM = 7200 }, []string{"nodes[0] (n1): disks[0].rpm: 7200 on a disk that does not rotate"}},
		{"sync iops", func(l *Lab) { l.Nodes[0].Disks[1].SyncWriteIOPS = -1 }, []string{"nodes[0] (n1): disks[1].sync_write_iops: -1 is negative"}},
		{"wearout", func(l *Lab) { l.Nodes[0].Disks[1].Wearout = 101 }, []string{"disks[1].wearout: 101 is not a percentage"}},
		{"no boot disk", func(l *Lab) { l.Nodes[0].Disks[0].Boot = false; l.Nodes[1].Disks[0].Boot = false },
			[]string{`disks: no boot disk on n1, n2; mark the disk the installer used with "boot": true`}},
		{"small boot disk", func(l *Lab) { l.Nodes[0].Disks[0].SizeBytes = 8 << 30 }, []string{"nodes[0] (n1): disks[0].size_bytes: 8589934592: a boot disk under 16 GiB"}},
		{"two boot disks", func(l *Lab) { l.Nodes[0].Disks[1].Boot = true }, []string{"disks: more than one boot disk on n1; exactly one disk per node"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := testLab()
			tc.edit(l)
			_, err := ParseLab(labJSON(t, l))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if !strings.HasPrefix(err.Error(), "t is not valid:\n") {
				t.Errorf("error does not name the lab: %v", err)
			}
		})
	}
}

// JSON errors say where: line and column.
func TestParseLabJSONErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"syntax", "{\n  \"name\": \"x\",\n  \"nodes\": [,]\n}", "line 3:13: JSON syntax error: invalid character ','"},
		{"unknown field", "{\n  \"name\": \"x\",\n  \"nodez\": []\n}", `line 3:3: unknown field "nodez"; the fields a lab file knows are listed in examples/labs/README.md`},
		{"type", "{\n  \"name\": \"x\",\n  \"nodes\": [{\"name\": 5}]\n}", "line 3:22: nodes.name must be a JSON string, not number"},
		{"truncated", "{\n  \"name\": \"x\",\n", "line 3:1: the file ends before the lab object does"},
		{"trailing", "{\"name\": \"x\"}\n{}", "line 2:1: unexpected data after the lab object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLab([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLoadLabNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lab.json")
	if err := os.WriteFile(p, []byte(`{"nodes": [}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLab(p); err == nil || !strings.HasPrefix(err.Error(), p+": line 1:12:") {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadLab(p + ".missing"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("got %v", err)
	}
	l := testLab()
	if err := os.WriteFile(p, labJSON(t, l), 0o600); err != nil {
		t.Fatal(err)
	}
	if lab, err := LoadLab(p); err != nil || len(lab.Nodes) != 2 {
		t.Fatalf("got %v %+v", err, lab)
	}
}

// Every shipped lab parses, is found by name, and its disks are modelled
// as the README says.
func TestShippedLabsParse(t *testing.T) {
	want := []string{"consumer", "diskless", "reference"}
	if got := labs.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("labs.Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		lab, err := ShippedLab(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if lab.Name != name {
			t.Errorf("%s: name %q", name, lab.Name)
		}
	}
	if _, err := ShippedLab("nope"); err == nil || !strings.Contains(err.Error(), `no shipped lab "nope"; the labs are consumer, diskless, reference`) {
		t.Fatalf("got %v", err)
	}
	if _, err := labs.Get("../reference"); err == nil {
		t.Fatal("path outside the labs accepted")
	}
	diskless, _ := ShippedLab("diskless")
	if n := diskless.node("jpl-proxmox6"); n == nil || len(n.Disks) != 1 || !n.Disks[0].Boot {
		t.Fatalf("jpl-proxmox6 is not diskless: %+v", n)
	}
	consumer, _ := ShippedLab("consumer")
	for _, n := range consumer.Nodes {
		for _, d := range n.Disks {
			if d.Boot {
				continue
			}
			if d.PowerLossProtection || (!d.Rotational && d.SyncWriteIOPS >= 100) || (d.Rotational && d.RPM != 15000) {
				t.Errorf("consumer %s %s: %+v", n.Name, d.Device, d)
			}
		}
	}
}

// The reference lab file describes the disks pvesim gives nodes without a
// lab, so a test can switch to the lab and keep its disks.
func TestReferenceLabMatchesDefaultDisks(t *testing.T) {
	lab, err := ShippedLab("reference")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{lab.Nodes[0].Name, lab.Nodes[1].Name, lab.Nodes[2].Name}; !reflect.DeepEqual(got, DefaultNodes) {
		t.Fatalf("nodes %v", got)
	}
	for i, n := range lab.Nodes {
		got := labDisks(&n)
		def := defaultDisks(i)
		if len(got) != len(def) {
			t.Fatalf("%s: %d disks, default %d", n.Name, len(got), len(def))
		}
		for k := range def {
			g, d := *got[k], *def[k]
			if !d.Boot && g.PLP != (d.Type != "nvme") {
				t.Errorf("%s %s: PLP %v", n.Name, g.DevPath, g.PLP)
			}
			g.PLP, g.SyncWriteIOPS, g.VG = false, 0, ""
			if g != d {
				t.Errorf("%s disk %d:\n lab     %+v\n default %+v", n.Name, k, g, d)
			}
		}
		for _, nic := range physicalNICs {
			if !strings.Contains(string(labJSON(t, lab)), `"name": "`+nic+`"`) {
				t.Errorf("NIC %s missing", nic)
			}
		}
	}
}
