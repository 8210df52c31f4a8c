package pvesim

import (
	"fmt"
	"strings"
	"testing"
)

// Options beyond the basic set are accepted at create, stored and returned
// by GET config in PVE's shape: integers and booleans as numbers, numbers
// (migrate_downtime) and the rest as strings, cipassword masked.
func TestQemuOptionsRoundTripThroughConfig(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c, "keyboard", "en-us", "tags", "a;b", "args", "-no-reboot", "ciuser", "ops",
		"cipassword", "secret", "ciupgrade", "0", "ipconfig0", "ip=10.0.0.5/24,gw=10.0.0.1",
		"watchdog", "model=i6300esb,action=reset", "rng0", "source=/dev/urandom", "migrate_downtime", "0.5",
		"hugepages", "2", "affinity", "0-3,6", "usb0", "host=spice", "startdate", "now", "tdf", "1",
		"smbios1", "uuid=6f5ac3e1-6d2e-4f1c-8e43-0d2f8f2c6b11,manufacturer=UFZF", "audio0", "device=ich9-intel-hda",
		"cpu", "x86-64-v2-AES,flags=+aes;-pcid", "sshkeys", uriEscape("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0 ops@lab"))
	conf := vmConfigOf(c, false)
	want := map[string]any{
		"keyboard": "en-us", "tags": "a;b", "args": "-no-reboot", "ciuser": "ops", "cipassword": "**********",
		"ciupgrade": float64(0), "ipconfig0": "ip=10.0.0.5/24,gw=10.0.0.1", "watchdog": "model=i6300esb,action=reset",
		"rng0": "source=/dev/urandom", "migrate_downtime": "0.5", "hugepages": "2", "affinity": "0-3,6",
		"usb0": "host=spice", "startdate": "now", "tdf": float64(1), "audio0": "device=ich9-intel-hda",
		"smbios1": "uuid=6f5ac3e1-6d2e-4f1c-8e43-0d2f8f2c6b11,manufacturer=UFZF", "cpu": "x86-64-v2-AES,flags=+aes;-pcid",
		"sshkeys": uriEscape("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0 ops@lab"),
	}
	for k, v := range want {
		if conf[k] != v {
			t.Errorf("%s = %#v, want %#v", k, conf[k], v)
		}
	}
}

// Property strings are checked as check_format/parse_property_string and
// the formats' verifiers do, with their texts under the option's key.
func TestQemuOptionFormatsRefusedWithPVEText(t *testing.T) {
	cases := []struct {
		rel, key, value, want string
	}{
		{"9.1", "cpu", "notacpu", "invalid format - Built-in cputype 'notacpu' is not defined (missing 'custom-' prefix?)\n"},
		{"9.1", "cpu", "custom-mine", "invalid format - Custom cputype 'mine' not found\n"},
		{"9.1", "cpu", "flags=+aes", "invalid format - CPU is missing cputype\n"},
		{"9.1", "cpu", "host,flags=+sse4.2", "invalid format - VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, ibpb, md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd\n"},
		{"8.4", "cpu", "host,flags=+nested-virt", "invalid format - VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, ibpb, md-clear, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd\n"},
		{"9.1", "cpu", "host,flags=aes", "invalid format - format error\ncpu.flags: value does not match the regex pattern\n"},
		{"9.1", "cpu", "host,reported-model=kvm64", "invalid format - Property 'reported-model' not allowed in VM-specific CPU config.\n"},
		{"9.1", "cpu", "host,phys-bits=99", "invalid format - format error\ncpu.phys-bits: invalid format - value must be an integer between 8 and 64 or 'host'\n\n"},
		{"9.1", "cpu", "host,guest-phys-bits=65", "invalid format - format error\ncpu.guest-phys-bits: value must have a maximum value of 64\n"},
		{"8.4", "cpu", "host,guest-phys-bits=40", "invalid format - invalid key in comma-separated list property: guest-phys-bits\n"},
		{"9.1", "scsi0", "!!bad", "invalid format - format error\nscsi0.file: invalid format - unable to parse volume ID '!!bad'\n\n"},
		{"9.1", "virtio1", "local-lvm:8,import-from=nowhere", "invalid format - format error\nvirtio1.import-from: invalid format - unable to parse volume ID 'nowhere'\n\n"},
		{"9.1", "net1", "virtio,bridge=vmbr0,tag=5000", "invalid format - format error\nnet1.tag: value must have a maximum value of 4094\n"},
		{"9.1", "net1", "virtio,bridge=vmbr0,queues=65", "invalid format - format error\nnet1.queues: value must have a maximum value of 64\n"},
		{"9.1", "net1", "virtio=01:00:00:00:00:01,bridge=vmbr0", "invalid format - format error\nnet1.macaddr: invalid format - value does not look like a valid unicast MAC address\n\n"},
		{"9.1", "smbios1", "manufacturer=Big Corp", "invalid format - format error\nsmbios1.manufacturer: value does not match the regex pattern\n"},
		{"9.1", "smbios1", "uuid=nope", "invalid format - format error\nsmbios1.uuid: value does not match the regex pattern\n"},
		{"9.1", "keyboard", "xx", "value 'xx' does not have a value in the enumeration 'de, de-ch, da, en-gb, en-us, es, fi, fr, fr-be, fr-ca, fr-ch, hu, is, it, ja, lt, mk, nl, no, pl, pt, pt-br, sv, sl, tr'"},
		{"9.1", "startdate", "tomorrow", "value does not match the regex pattern"},
		{"9.1", "ipconfig0", "ip=10.0.0.300/24", "invalid format - format error\nipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration\n\n"},
		{"9.1", "amd-sev", "no-debug=1", "invalid format - format error\namd-sev.type: property is missing and it is not optional\n"},
		{"9.1", "intel-tdx", "tdx", "invalid format - format error\nintel-tdx.attestation: property is missing and it is not optional\n"},
		{"9.1", "affinity", "3-1", "invalid format - unable to parse cpuset option\n"},
		{"9.1", "bootdisk", "scsi99", "invalid format - invalid drive name 'scsi99'\n"},
		{"9.1", "hostpci0", "host=zz", "invalid format - format error\nhostpci0.host: value does not match the regex pattern\n"},
		{"9.1", "cicustom", "user=snippets.yaml", "invalid format - format error\ncicustom.user: invalid format - unable to parse volume ID 'snippets.yaml'\n\n"},
		{"8.4", "intel-tdx", "tdx,attestation=1", "property is not defined in schema and the schema does not allow additional properties"},
	}
	sims := map[string]*client{}
	for _, tc := range cases {
		c := sims[tc.rel]
		if c == nil {
			_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab", PVERelease: tc.rel})
			c = newClient(t, info, "")
			sims[tc.rel] = c
			createRefVM(t, c)
		}
		for _, path := range []string{"/nodes/z2g4a/qemu", vm100 + "/config"} {
			p := vals(tc.key, tc.value)
			if path == "/nodes/z2g4a/qemu" {
				p.Set("vmid", "101")
			}
			r := c.do("POST", path, p)
			if r.status != 400 || r.errs()[tc.key] != tc.want {
				t.Errorf("%s POST %s %s=%s: %d %q, want 400 %q", tc.rel, path, tc.key, tc.value, r.status, r.errs()[tc.key], tc.want)
			}
		}
	}
}

// A running VM takes fast-plug options at once; options qemu-server
// cannot hotplug stay in [PENDING]. cipassword goes straight to the
// config, hashed, and is masked by both views.
func TestQemuOptionsHotplugRules(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	putNodeFile(s, "z2g4a", "/var/lib/vz/snippets/hook.pl", 0o755)
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/start", nil))
	c.ok("PUT", vm100+"/config", vals("keyboard", "de", "migrate_speed", "100", "hookscript", "local:snippets/hook.pl",
		"watchdog", "i6300esb", "cipassword", "pw", "usb0", "host=spice"))
	cur := vmConfigOf(c, true)
	// usbN hotplugs into a Linux guest with the usb hotplug feature.
	if cur["migrate_speed"] != float64(100) || cur["hookscript"] != "local:snippets/hook.pl" || cur["usb0"] != "host=spice" {
		t.Errorf("fast-plug options not applied: %v", cur)
	}
	if _, ok := cur["keyboard"]; ok {
		t.Errorf("keyboard applied to a running VM: %v", cur["keyboard"])
	}
	if _, ok := cur["watchdog"]; ok {
		t.Errorf("watchdog applied to a running VM: %v", cur["watchdog"])
	}
	if cur["cipassword"] != "**********" {
		t.Errorf("cipassword = %v, want it masked", cur["cipassword"])
	}
	pending := map[string]map[string]any{}
	for _, row := range c.ok("GET", vm100+"/pending", nil).data().([]any) {
		r := row.(map[string]any)
		pending[r["key"].(string)] = r
	}
	if pending["keyboard"]["pending"] != "de" || pending["watchdog"]["pending"] != "i6300esb" {
		t.Errorf("pending rows: keyboard %v watchdog %v", pending["keyboard"], pending["watchdog"])
	}
	if pending["cipassword"]["value"] != "**********" {
		t.Errorf("pending cipassword row %v", pending["cipassword"])
	}
	// Without the usb feature it waits for the next start.
	c.ok("PUT", vm100+"/config", vals("hotplug", "network,disk"))
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/reboot", nil))
	c.ok("PUT", vm100+"/config", vals("usb1", "host=spice"))
	if cur := vmConfigOf(c, true); cur["usb1"] != nil {
		t.Errorf("usb1 hotplugged without the usb feature: %v", cur["usb1"])
	}
}

// cdrom is an alias of ide2 with media=cdrom ($resolve_cdrom_alias).
func TestQemuCdromAliasIsIde2(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c, "cdrom", "none")
	conf := vmConfigOf(c, false)
	if conf["ide2"] != "none,media=cdrom" || conf["cdrom"] != nil {
		t.Errorf("ide2 %v cdrom %v", conf["ide2"], conf["cdrom"])
	}
}

// sshkeys must be URI-encoded (format urlencoded) and, decoded, hold keys
// ssh-keygen accepts; the handler dies otherwise.
func TestQemuSSHKeysValidated(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	r := c.do("PUT", vm100+"/config", vals("sshkeys", uriEscape("not a key")))
	if r.status != 500 || !strings.Contains(r.msg(), "SSH public key validation error") {
		t.Errorf("bad key: %d %q", r.status, r.msg())
	}
	key := uriEscape("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== a@b")
	c.ok("PUT", vm100+"/config", vals("sshkeys", key))
	if got := vmConfigOf(c, false)["sshkeys"]; got != key {
		t.Errorf("sshkeys = %v, want %v", got, key)
	}
}

// uriEscape is encodeURIComponent, as PVE's GUI sends sshkeys.
func uriEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Every parameter of PVE's create and config methods exists in the
// simulator (TestSimulatorMatchesOfficialSchema checks the other way).
func TestQemuConfigSchemaComplete(t *testing.T) {
	for file, release := range map[string]string{"subset.json": "9.1", "subset-pve8.4.json": "8.4"} {
		official := loadOfficialSchema(t, file)
		rel, err := lookupRelease(release)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range buildRoutes(rel) {
			if rt.pattern != "/nodes/{node}/qemu" && rt.pattern != "/nodes/{node}/qemu/{vmid}/config" {
				continue
			}
			for verb, md := range rt.methods {
				if verb == "GET" {
					continue
				}
				for _, p := range official[rt.pattern][verb].Parameters {
					name := strings.Replace(p.Name, "[n]", "0", 1)
					if _, ok := md.params[name]; !ok {
						t.Errorf("%s %s %s: PVE has %s, the simulator does not", release, verb, rt.pattern, p.Name)
					}
				}
			}
		}
	}
}

// The simulator's inline property-string formats of the qemu config have
// PVE's keys, each with its type, optionality, default key, alias, enum
// and range.
func TestQemuPropertyFormatsMatchOfficial(t *testing.T) {
	for file, release := range map[string]string{"subset.json": "9.1", "subset-pve8.4.json": "8.4"} {
		official := loadOfficialSchema(t, file)
		rel, err := lookupRelease(release)
		if err != nil {
			t.Fatal(err)
		}
		opt := qemuOptionFormats(rel)
		sim := map[string]psFormat{
			"agent": agentFormatFor(rel), "vga": vgaFormat, "machine": machineFormatFor(rel), "memory": memoryFormat,
			"net[n]": netFormat, "unused[n]": unusedFormat, "audio0": opt["audio0"], "ivshmem": opt["ivshmem"],
			"spice_enhancements": opt["spice_enhancements"], "numa[n]": opt["numa"], "usb[n]": opt["usb"],
			"virtiofs[n]": opt["virtiofs"],
		}
		for _, k := range []string{"ide", "sata", "scsi", "virtio"} {
			sim[k+"[n]"] = driveFormatFor(rel, k+"0")
		}
		sim["efidisk0"] = driveFormatFor(rel, "efidisk0")
		sim["tpmstate0"] = driveFormatFor(rel, "tpmstate0")
		for _, p := range official["/nodes/{node}/qemu/{vmid}/config"]["PUT"].Parameters {
			of, ok := p.Format.(map[string]any)
			if !ok {
				continue
			}
			sf, ok := sim[p.Name]
			if !ok {
				t.Errorf("%s %s: no simulator format to compare", release, p.Name)
				continue
			}
			for name, raw := range of {
				o := raw.(map[string]any)
				if o["keyAlias"] != nil || (p.Name == "net[n]" && o["alias"] == "macaddr") {
					continue // <model>=<mac>, handled by parseNet
				}
				where := release + " " + p.Name + "." + name
				k, ok := sf[name]
				if !ok {
					t.Errorf("%s: PVE has the key, the simulator does not", where)
					continue
				}
				if a, _ := o["alias"].(string); a != k.alias {
					t.Errorf("%s: alias %q, PVE %q", where, k.alias, a)
				}
				if o["alias"] != nil {
					continue
				}
				if typ, _ := o["type"].(string); typ != typeNames[k.typ] {
					t.Errorf("%s: type %s, PVE %s", where, typeNames[k.typ], typ)
				}
				if (o["optional"] == float64(1)) != k.optional {
					t.Errorf("%s: optional %v, PVE %v", where, k.optional, o["optional"])
				}
				if (o["default_key"] == float64(1)) != k.defaultKey {
					t.Errorf("%s: default key %v, PVE %v", where, k.defaultKey, o["default_key"])
				}
				var enum []string
				if l, ok := o["enum"].([]any); ok {
					for _, e := range l {
						enum = append(enum, e.(string))
					}
				}
				if strings.Join(enum, ",") != strings.Join(k.enum, ",") {
					t.Errorf("%s: enum %v, PVE %v", where, k.enum, enum)
				}
				if f, _ := o["format"].(string); f != k.format {
					t.Errorf("%s: format %q, PVE %q", where, k.format, f)
				}
				if ml, _ := o["maxLength"].(float64); int(ml) != k.maxLength {
					t.Errorf("%s: maxLength %d, PVE %v", where, k.maxLength, o["maxLength"])
				}
				for bound, sb := range map[string]*float64{"minimum": k.min, "maximum": k.max} {
					ob, has := o[bound].(float64)
					if has != (sb != nil) || (has && ob != *sb) {
						t.Errorf("%s: %s %v, PVE %v", where, bound, sb, o[bound])
					}
				}
			}
			for name := range sf {
				if _, ok := of[name]; !ok {
					t.Errorf("%s %s.%s: the simulator has a key PVE does not", release, p.Name, name)
				}
			}
		}
	}
}

// delete and revert accept every option of the schema (option_exists).
func TestQemuDeleteKnowsEveryOption(t *testing.T) {
	for _, release := range []string{"9.1", "8.4"} {
		rel, err := lookupRelease(release)
		if err != nil {
			t.Fatal(err)
		}
		for k := range qemuConfigSchema(rel) {
			if !knownOption(k) {
				t.Errorf("%s: delete=%s would be refused as an unknown option", release, k)
			}
		}
	}
}

// tpmstate0 is a drive: allocated at create with PVE's fixed 4 MiB.
func TestQemuTPMStateAllocatedWithFixedSize(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c, "tpmstate0", "local-lvm:1,version=v2.0")
	if got := vmConfigOf(c, false)["tpmstate0"]; got != "local-lvm:vm-100-disk-1,size=4M,version=v2.0" {
		t.Errorf("tpmstate0 = %v", got)
	}
}

// hookscript is checked on update as check_hookscript does: a snippet
// volume, an existing, executable file.
func TestQemuHookscriptChecked(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	putNodeFile(s, "z2g4a", "/var/lib/vz/snippets/plain.sh", 0o644)
	for volid, want := range map[string]string{
		"local:iso/x.iso":            "'local:iso/x.iso' is not in the snippets directory\n",
		"local:snippets/none.sh":     "script 'local:snippets/none.sh' does not exist\n",
		"local:snippets/plain.sh":    "script 'local:snippets/plain.sh' is not executable\n",
		"nostore:snippets/hook.sh":   "storage 'nostore' does not exist\n",
		"local-lvm:snippets/hook.sh": "'local-lvm:snippets/hook.sh' is not in the snippets directory\n",
	} {
		r := c.do("PUT", vm100+"/config", vals("hookscript", volid))
		if r.status != 400 || r.errs()["hookscript"] != want {
			t.Errorf("hookscript=%s: %d %q, want 400 %q", volid, r.status, r.errs()["hookscript"], want)
		}
	}
}

// putNodeFile puts a file on a node's disk, as if copied there.
func putNodeFile(s *Sim, node, path string, mode uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.execState(node)
	if ex.Files == nil {
		ex.Files = map[string]*simFile{}
	}
	ex.Files[path] = &simFile{Content: []byte("#!/bin/sh\n"), Mode: mode, Owner: "root", Group: "root"}
}

// Create-only options: checked as PVE checks them (force and unique need
// an archive), kept out of the config, and a restore or ha-managed create,
// which pvesim does not simulate, refused in words instead of half done.
func TestQemuCreateOnlyOptions(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab", TaskDuration: -1, NoSSH: true})
	c := rootTicketClient(t, info)
	r := c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "120", "unique", "1", "bwlimit", "-1"))
	if r.status != 400 || r.errs()["archive"] != "missing property required by 'unique'" ||
		r.errs()["bwlimit"] != "value must have a minimum value of 0" {
		t.Fatalf("unique without archive: %d %v", r.status, r.errs())
	}
	r = c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "121", "archive", "local:backup/vzdump-qemu-100.vma.zst"))
	if r.status != 500 || !strings.Contains(r.msg(), "does not simulate restoring a backup") {
		t.Fatalf("restore: %d %s", r.status, r.msg())
	}
	up := c.ok("POST", "/nodes/z2g4a/qemu", vals("vmid", "122", "bwlimit", "1000", "import-working-storage", "local-lvm", "memory", "1024"))
	if st := c.waitTask("z2g4a", up.data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("create: %v", st)
	}
	conf := c.ok("GET", "/nodes/z2g4a/qemu/122/config", nil).data().(map[string]any)
	for _, k := range []string{"bwlimit", "import-working-storage"} {
		if _, ok := conf[k]; ok {
			t.Errorf("config keeps the create-only %s: %v", k, conf)
		}
	}
}

// PVE 8's drive geometry keys: accepted by 8.4's schema, refused by 9.1's,
// and a drive that has them is still a disk with a volume and a size on
// 8.4 (maxdisk, resize), as qemu-server 8's parse_drive reads it.
func TestQemuDriveGeometryPerRelease(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			_, info := startSim(t, Options{ClusterName: "lab", PVERelease: rel, TaskDuration: -1, NoSSH: true})
			c := rootTicketClient(t, info)
			r := c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "130", "scsi0", "local-lvm:4,cyls=16", "boot", "order=scsi0"))
			if rel == "9.1" {
				if r.status != 400 || !strings.Contains(fmt.Sprint(r.errs()["scsi0"]), "cyls") {
					t.Fatalf("9.1 took a geometry key: %d %v", r.status, r.errs())
				}
				return
			}
			if r.status != 200 {
				t.Fatalf("8.4 create: %d %s %v", r.status, r.msg(), r.errs())
			}
			if st := c.waitTask("z2g4a", r.data().(string)); st["exitstatus"] != "OK" {
				t.Fatalf("create: %v", st)
			}
			up := c.ok("PUT", "/nodes/z2g4a/qemu/130/resize", vals("disk", "scsi0", "size", "+1G"))
			if st := c.waitTask("z2g4a", up.data().(string)); st["exitstatus"] != "OK" {
				t.Fatalf("resize: %v", st)
			}
			cur := c.ok("GET", "/nodes/z2g4a/qemu/130/status/current", nil).data().(map[string]any)
			if cur["maxdisk"] != float64(5<<30) {
				t.Errorf("maxdisk %v, want 5 GiB", cur["maxdisk"])
			}
		})
	}
}

// vmstatus' cpus: sockets × cores clamped to the host's CPUs; vcpus wins.
func TestQemuStatusCPUsClampedToHost(t *testing.T) {
	for _, tc := range []struct {
		conf map[string]string
		want int64
	}{
		{map[string]string{"sockets": "2", "cores": "2"}, 4},
		{map[string]string{"sockets": "2", "cores": "8"}, nodeCPUs},
		{map[string]string{"sockets": "2", "cores": "8", "vcpus": "3"}, 3},
	} {
		if got := (&qemuVM{Config: tc.conf}).cpus(); got != tc.want {
			t.Errorf("%v: cpus %d, want %d", tc.conf, got, tc.want)
		}
	}
}
