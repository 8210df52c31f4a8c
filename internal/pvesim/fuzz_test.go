package pvesim

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/examples/labs"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// Fuzz targets for the simulator's parsers of request input and node
// files: whatever a client sends, they answer with PVE's error text, never
// a panic. Seeds are the shapes the unit tests and the shipped labs use.

// fuzzFormats are the property-string formats the simulator checks, by a
// name for messages.
func fuzzFormats() (names []string, formats []psFormat) {
	add := func(n string, f psFormat) { names, formats = append(names, n), append(formats, f) }
	for _, rel := range []string{"8.4", "9.1"} {
		r := releases[rel]
		dc := datacenterFormats(r)
		keys := make([]string, 0, len(dc))
		for k := range dc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(rel+" datacenter "+k, dc[k])
		}
		qo := qemuOptionFormats(r)
		keys = keys[:0]
		for k := range qo {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(rel+" qemu "+k, qo[k])
		}
		add(rel+" cpu", vmCPUFormat(r))
	}
	for _, k := range []string{"scsi0", "virtio0", "sata0", "ide2", "efidisk0", "tpmstate0"} {
		add("drive "+k, driveFormat(k))
	}
	add("unused", unusedFormat)
	add("net", netFormat)
	add("agent", agentFormat)
	add("vga", vgaFormat)
	add("machine", machineFormat)
	add("memory", memoryFormat)
	add("boot", bootFormat)
	add("corosync link", corosyncLinkFormat)
	add("wakeonlan", wakeOnLANPS)
	add("acme", acmePS)
	add("acmedomain", acmeDomainPS)
	add("draid", draidConfigFormat)
	add("ceph ec", cephECFormat)
	add("prune-backups", pruneBackupsFormat)
	return names, formats
}

func FuzzParsePropertyString(f *testing.F) {
	names, formats := fuzzFormats()
	for _, s := range []string{
		"", "ceph:vm-100-disk-0,cache=writeback,size=32G", "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1",
		"order=scsi0;net0", "type=secure,network=10.0.0.0/24", "ha=static,ha-rebalance-on-start=1", "keep-last=3,keep-all=0",
		"x", "a,b", "k=v,k=w", "=", "current=512", "address=10.0.0.1,priority=10", "host=0000:01:00.0;0000:02:00.0,pcie=1",
		"k=1,m=2", "data=2,parity=1,spares=0", "file=local:iso/x.iso,media=cdrom", "1e999", "min=-0",
	} {
		f.Add(uint16(0), s)
		f.Add(uint16(len(formats)/2), s)
	}
	f.Fuzz(func(t *testing.T, sel uint16, data string) {
		i := int(sel) % len(formats)
		res, msg := parsePropertyString(formats[i], "p", data)
		if msg != "" {
			return
		}
		if res == nil {
			t.Fatalf("%s: parsePropertyString(%q) gave neither a value nor an error", names[i], data)
		}
	})
}

func FuzzParsePropString(f *testing.F) {
	for _, s := range []string{"account=default,domains=a.example;b.example", "a.example,alias=b.example,plugin=pdns", "domain=a,domain=b", "x,y", "=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		_, _ = parsePropString(data, acmeFormat, "")
		_, _ = parsePropString(data, acmeDomainFormat, "domain")
	})
}

func FuzzParseDrive(f *testing.F) {
	for _, s := range []string{
		"ceph:vm-100-disk-0,cache=writeback,discard=on,iothread=1,size=32G,ssd=1", "none,media=cdrom",
		"local:iso/debian.iso,media=cdrom", "local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M",
		"ceph:32,import-from=local:import/x.qcow2", "file=a,volume=b", "size=1T", "x,size=-1", "x,size=99999999999999999999T",
	} {
		f.Add("scsi0", s)
		f.Add("efidisk0", s)
	}
	f.Fuzz(func(t *testing.T, key, v string) {
		d, msg := parseDrive(key, v)
		if msg != "" || d == nil {
			return
		}
		_ = d.file()
		_ = d.isCdrom()
		again, msg := parseDrive(key, d.print())
		if msg != "" {
			t.Fatalf("parseDrive(%q, %q) printed %q, which it refuses: %s", key, v, d.print(), msg)
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("parseDrive(%q, %q) = %v, printed %q, which parses as %v", key, v, d, d.print(), again)
		}
	})
}

func FuzzParseNet(f *testing.F) {
	for _, s := range []string{
		"virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=on,tag=20", "model=e1000,macaddr=BC:24:11:00:00:01", "virtio,bridge=vmbr0",
		"e1000=x", "bridge=vmbr0", "virtio=BC:24:11:00:00:03,bridge=vnet1,link_down=1,mtu=1500,queues=4,rate=12.5,trunks=10;20-30",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m, msg := parseNet("net0", v)
		if msg != "" || m == nil {
			return
		}
		if _, ok := m["macaddr"]; !ok {
			m["macaddr"] = "BC:24:11:00:00:01" // what create/update fill in before printing (qemu.go)
		}
		again, msg := parseNet("net0", printNet(m))
		if msg != "" {
			t.Fatalf("parseNet(%q) printed %q, which it refuses: %s", v, printNet(m), msg)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("parseNet(%q) = %v, printed %q, which parses as %v", v, m, printNet(m), again)
		}
	})
}

func FuzzParseDiskSize(f *testing.F) {
	for _, s := range []string{"32G", "528K", "1.5T", "1024", "0", "99999999999999999999T", "+1G", "G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := parseDiskSize(s); ok && n < 0 { // beyond int64 is the largest size, not a wrapped one
			t.Fatalf("parseDiskSize(%q) = %d", s, n)
		}
	})
}

func FuzzParseInterfaces(f *testing.F) {
	for _, s := range []string{
		"auto lo\niface lo inet loopback\n\nauto eno1\niface eno1 inet manual\n\nauto vmbr0\niface vmbr0 inet static\n" +
			"\taddress 10.0.0.1/24\n\tgateway 10.0.0.254\n\tbridge-ports eno1\n\tbridge-stp off\n\tbridge-fd 0\n\tbridge-vlan-aware yes\n\tbridge-vids 2-4094\n\nsource /etc/network/interfaces.d/*\n",
		"auto bond0\niface bond0 inet manual\n\tbond-slaves eno1 eno2\n\tbond-miimon 100\n\tbond-mode 802.3ad\n\tbond-xmit-hash-policy layer3+4\n",
		"auto vmbr0.20\niface vmbr0.20 inet6 static\n\taddress fd00::1/64\n\tmtu 1500\n", "iface x inet bogus\n", "\taddress 1.2.3.4\n",
		"allow-hotplug eno1\niface eno1 inet dhcp\n# comment\n", "auto vlan5\niface vlan5 inet manual\n\tvlan-raw-device eno1\n",
		"iface a inet static\n\taddress 300.1.1.1/99\n\tpost-up echo hi\n", "iface", "auto\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cfg, _ := parseInterfaces(text, []string{"eno1", "eno2"})
		if cfg == nil {
			t.Fatalf("parseInterfaces(%q) returned no configuration", text)
		}
		// What the simulator writes back must read without new errors.
		out := cfg.render()
		again, errs := parseInterfaces(out, []string{"eno1", "eno2"})
		if again == nil {
			t.Fatalf("parseInterfaces(render) returned no configuration")
		}
		if again.render() != out {
			t.Fatalf("parseInterfaces(%q) renders %q, which renders again as %q (errors %q)", text, out, again.render(), errs)
		}
	})
}

func FuzzParseLab(f *testing.F) {
	for _, name := range labs.Names() {
		b, err := labs.Get(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `{"name":"x","nodes":[]}`, `{"name":"x","nodez":[]}`, `[`, `null`, `{"name":"x","nodes":[{"name":"n1"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lab, err := ParseLab(b)
		if err == nil && lab == nil {
			t.Fatal("ParseLab gave neither a lab nor an error")
		}
	})
}

func FuzzParseShellLine(f *testing.F) {
	for _, s := range []string{
		"ls -la /etc/pve", "ceph config set client.hostile log_file '/tmp/x; rm -rf /'", `echo "a b" 'c'\''d'`, "a | b", "a && b",
		"x=1 cmd", "~/x", "#c", "echo $HOME", "echo `id`", "a\nb", "'unterminated", `"unterminated`, `back\`, "{a,b}", "*",
	} {
		f.Add(s, "x", "y")
	}
	f.Add("", "it's", "$(id)\n;|&*?~#{}\"\\")
	f.Fuzz(func(t *testing.T, line, a, b string) {
		_, _ = parseShellLine(line)
		// The provider's quoting reads back as the same argv.
		cmd := nodeexec.Cmd("ceph", a, b)
		words, err := parseShellLine(cmd.String())
		if strings.ContainsRune(a+b, 0) {
			return // no argv element can hold NUL
		}
		if err != nil {
			t.Fatalf("parseShellLine(%q) of argv %q: %v", cmd.String(), []string{"ceph", a, b}, err)
		}
		if fmt.Sprintf("%q", words) != fmt.Sprintf("%q", []string{"ceph", a, b}) {
			t.Fatalf("parseShellLine(%q) = %q, want %q", cmd.String(), words, []string{"ceph", a, b})
		}
	})
}

func FuzzParseCephConf(f *testing.F) {
	for _, s := range []string{
		"[global]\n\tauth_client_required = cephx\n\tfsid = 0a1b\n\tpublic_network = 10.0.0.0/24\n[mon.a]\n\tpublic_addr = 10.0.0.1\n",
		"[global]\r\nfsid=x\r\n", "[]\nk=v\n", "[ ]\nk=v", "[a\nk='v'", "[a]\nk=\\", "k=v\n", "[a]\n;c\n#c\n k = \"q\" ; c\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_ = parseCephConf(raw)
		_, _, _ = parseConfLine(raw)
	})
}

func FuzzParseIEC(f *testing.F) {
	for _, s := range []string{"1G", "1GiB", "1Gi", "512", "", "8E", "9E", "-1", "1.5G", "0x10", " 4K "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, msg := parseIEC(s); msg == "" && n < 0 && !strings.HasPrefix(strings.TrimSpace(s), "-") {
			t.Fatalf("parseIEC(%q) = %d", s, n)
		}
	})
}

func FuzzParseCorosyncLink(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "address=10.0.0.1,priority=10", "10.0.0.1,priority=256", "priority=1", "fd00::1,priority=-1", "a,b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		l, msg := parseCorosyncLink("link0", v)
		if msg == "" && (l.Priority < 0 || l.Priority > 255) {
			t.Fatalf("parseCorosyncLink(%q) = %+v: priority out of 0..255", v, l)
		}
	})
}

func FuzzParseTimeSpan(f *testing.F) {
	for _, s := range []string{"90", "90s", "2min", "1min 30s", "1m30s", "1.5h", "", "infinity", "9999999999999999h", "1e9s", "-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := parseTimeSpan(s); ok && d < 0 {
			t.Fatalf("parseTimeSpan(%q) = %v", s, d)
		}
	})
}
