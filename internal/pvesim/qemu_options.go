package pvesim

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
)

// The rest of qemu-server's json_config_properties (PVE/QemuServer.pm
// $confdesc and $confdesc_cloudinit, PVE/QemuServer/PCI.pm, USB.pm, RNG.pm,
// Memory.pm, Network.pm, Virtiofs.pm, CPUConfig.pm): each option with its
// type, range, enum, pattern and property-string format, stored as given
// and returned by GET config. Named formats of pve-common/pve-storage
// (pve-volume-id, pve-storage-id, address-list, urlencoded, ...) are
// declared by name and checked by checkFormat.

var (
	cpusetPartRE  = regexp.MustCompile(`^\s*(\d+)(?:-(\d+))?\s*$`)
	pciIDRE       = `(?:[a-f0-9]{4,}:)?[a-f0-9]{2}:[a-f0-9]{2}(?:\.[a-f0-9])?`
	usbHostRE     = `(?:(?:(0x)?([0-9A-Fa-f]{4}):(0x)?([0-9A-Fa-f]{4}))|(?:(\d+)\-(\d+(\.\d+)*))|[Ss][Pp][Ii][Cc][Ee])`
	numaRangeRE   = `\d+(?:-\d+)?(?:;\d+(?:-\d+)?)*`
	smbiosBase64  = `[A-Za-z0-9+\/]+={0,2}`
	smbiosUUIDRE  = `[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}`
	sshKeyLineRE  = regexp.MustCompile(`^\s*(?:\S+\s+)?((?:ssh|ecdsa|sk)-[a-z0-9@.\-]+)\s+([A-Za-z0-9+/]+={0,2})(?:\s.*)?$`)
	startdateRE   = regexp.MustCompile(`^(?:now|\d{4}-\d{1,2}-\d{1,2}(T\d{1,2}:\d{1,2}:\d{1,2})?)$`)
	parallelRE    = regexp.MustCompile(`^(?:/dev/parport\d+|/dev/usb/lp\d+)$`)
	bootdiskRE    = regexp.MustCompile(`^(?:(ide|sata|scsi|virtio)\d+)$`)
	cryptedPassRE = regexp.MustCompile(`^\$(?:[156]|2[ay])(\$.+){2}`)
)

// checkCpuset is pve_verify_cpuset (PVE::CpuSet::parse_cpuset).
func checkCpuset(v string) string {
	for _, part := range strings.Split(v, ",") {
		m := cpusetPartRE.FindStringSubmatch(part)
		if m == nil {
			return "unable to parse cpuset option"
		}
		if m[2] != "" {
			from, _ := strconv.Atoi(m[1])
			to, _ := strconv.Atoi(m[2])
			if to < from {
				return "unable to parse cpuset option"
			}
		}
	}
	return ""
}

// checkIPv4Config / checkIPv6Config are pve_verify_ipv4_config / _ipv6_config.
func checkIPv4Config(v string) string {
	if v == "dhcp" || v == "manual" || validCIDR(v, true) {
		return ""
	}
	return "value does not look like a valid ipv4 network configuration"
}

func checkIPv6Config(v string) string {
	if v == "auto" || v == "dhcp" || v == "manual" || validCIDR(v, false) {
		return ""
	}
	return "value does not look like a valid ipv6 network configuration"
}

// namedPS is an option whose format is a registered property-string
// format: check_format parses it with the option name as path.
func namedPS(name string, f psFormat, path string) param {
	p := psParam(f, path)
	p.format = name
	return p
}

func qemuOptionFormats(rel pveRelease) map[string]psFormat {
	b := func() psKey { return psOpt(tBoolean) }
	f := map[string]psFormat{
		"hostpci": {
			"host":          {typ: tString, optional: true, defaultKey: true, pattern: regexp.MustCompile(`^(?:` + pciIDRE + `(;` + pciIDRE + `)*)$`)},
			"mapping":       psOpt(tString).withFormat("pve-configid"),
			"rombar":        b(),
			"romfile":       psOpt(tString).matching(`[^,;]+`),
			"pcie":          b(),
			"x-vga":         b(),
			"legacy-igd":    b(),
			"mdev":          psOpt(tString).matching(`[^/\.:]+`),
			"vendor-id":     psOpt(tString).matching(`0x[0-9a-fA-F]{4}`),
			"device-id":     psOpt(tString).matching(`0x[0-9a-fA-F]{4}`),
			"sub-vendor-id": psOpt(tString).matching(`0x[0-9a-fA-F]{4}`),
			"sub-device-id": psOpt(tString).matching(`0x[0-9a-fA-F]{4}`),
		},
		"usb": {
			"host":    {typ: tString, optional: true, defaultKey: true, pattern: regexp.MustCompile(`^(?:` + usbHostRE + `)$`)},
			"mapping": psOpt(tString).withFormat("pve-configid"),
			"usb3":    b(),
		},
		"rng": {
			"source":    {typ: tString, defaultKey: true, enum: []string{"/dev/urandom", "/dev/random", "/dev/hwrng"}},
			"max_bytes": psOpt(tInteger),
			"period":    psOpt(tInteger),
		},
		"numa": {
			"cpus":      {typ: tString, pattern: regexp.MustCompile(`^(?:` + numaRangeRE + `)$`)},
			"memory":    psOpt(tNumber),
			"hostnodes": psOpt(tString).matching(numaRangeRE),
			"policy":    psEnum("preferred", "bind", "interleave"),
		},
		"ipconfig": {
			"ip":  {typ: tString, optional: true, format: "pve-ipv4-config", fn: checkIPv4Config},
			"gw":  psOpt(tString).withFormat("ipv4").needs("ip"),
			"ip6": {typ: tString, optional: true, format: "pve-ipv6-config", fn: checkIPv6Config},
			"gw6": psOpt(tString).withFormat("ipv6").needs("ip6"),
		},
		"virtiofs": {
			"dirid":        {typ: tString, defaultKey: true, format: "pve-configid"},
			"cache":        psEnum("auto", "always", "metadata", "never"),
			"direct-io":    b(),
			"expose-xattr": b(),
			"expose-acl":   b(),
		},
		"watchdog": {
			"model":  {typ: tString, optional: true, defaultKey: true, enum: []string{"i6300esb", "ib700"}},
			"action": psEnum("reset", "shutdown", "poweroff", "pause", "debug", "none"),
		},
		"audio0": {
			"device": {typ: tString, enum: []string{"ich9-intel-hda", "intel-hda", "AC97"}},
			"driver": psEnum("spice", "none"),
		},
		"ivshmem": {
			"size": {typ: tInteger, min: f64(1)},
			"name": psOpt(tString).matching(`[a-zA-Z0-9\-]+`),
		},
		"spice_enhancements": {
			"foldersharing":  b(),
			"videostreaming": psEnum("off", "all", "filter"),
		},
		"amd-sev": {
			"type":           {typ: tString, defaultKey: true, enum: []string{"std", "es", "snp"}, maxLength: 3},
			"no-debug":       b(),
			"no-key-sharing": b(),
			"allow-smt":      b(),
			"kernel-hashes":  b(),
		},
		"cicustom": {
			"meta":    {typ: tString, optional: true, format: "pve-volume-id"},
			"network": {typ: tString, optional: true, format: "pve-volume-id"},
			"user":    {typ: tString, optional: true, format: "pve-volume-id"},
			"vendor":  {typ: tString, optional: true, format: "pve-volume-id"},
		},
		"smbios1": {
			"uuid":         psOpt(tString).matching(smbiosUUIDRE),
			"version":      psOpt(tString).matching(smbiosBase64),
			"serial":       psOpt(tString).matching(smbiosBase64),
			"manufacturer": psOpt(tString).matching(smbiosBase64),
			"product":      psOpt(tString).matching(smbiosBase64),
			"sku":          psOpt(tString).matching(smbiosBase64),
			"family":       psOpt(tString).matching(smbiosBase64),
			"base64":       b(),
		},
	}
	if rel.atLeast9() {
		// attestation has no `optional`: the key must be given.
		f["intel-tdx"] = psFormat{
			"type":        {typ: tString, defaultKey: true, enum: []string{"tdx"}},
			"attestation": {typ: tBoolean},
			"vsock-cid":   psOpt(tInteger).atLeast(2),
			"vsock-port":  psOpt(tInteger).atLeast(0),
		}
	}
	return f
}

// ideFormat is pve-qm-ide, the format of the `cdrom` alias (no import-from).
func ideFormat() psFormat {
	f := driveFormat("ide2")
	delete(f, "import-from")
	return f
}

// addQemuOptions adds to sc the options json_config_properties has beyond
// the ones qemuConfigSchema declares, cpu and smbios1 with their full
// formats among them.
func addQemuOptions(rel pveRelease, sc schema) {
	f := qemuOptionFormats(rel)
	num := func(lo int64) param { return param{typ: tNumber, optional: true, min: i64(lo)} }
	pat := func(re *regexp.Regexp) param { p := pStr(); p.pattern = re; return p }

	sc["cpu"] = cpuParam(rel)
	smbios := namedPS("pve-qm-smbios1", f["smbios1"], "smbios1")
	smbios.maxLength = 512
	sc["smbios1"] = smbios

	affinity := pFmt("pve-cpuset")
	affinity.formatFn = checkCpuset
	sc["affinity"] = affinity
	sc["amd-sev"] = namedPS("pve-qemu-sev-fmt", f["amd-sev"], "amd-sev")
	sc["arch"] = pEnum("x86_64", "aarch64")
	sc["args"] = pStr()
	sc["audio0"] = psParam(f["audio0"], "audio0")
	bootdisk := pat(bootdiskRE)
	bootdisk.format = "pve-qm-bootdisk"
	bootdisk.formatFn = func(v string) string {
		if !isDriveKey(v) {
			return fmt.Sprintf("invalid drive name '%s'", v)
		}
		return ""
	}
	sc["bootdisk"] = bootdisk
	sc["cdrom"] = namedPS("pve-qm-ide", ideFormat(), "cdrom")
	sc["cicustom"] = namedPS("pve-qm-cicustom", f["cicustom"], "cicustom")
	sc["cipassword"] = pStr()
	sc["citype"] = pEnum("configdrive2", "nocloud", "opennebula")
	sc["ciupgrade"] = pBool()
	sc["ciuser"] = pStr()
	sc["freeze"] = pBool()
	sc["hookscript"] = pFmt("pve-volume-id")
	sc["hugepages"] = pEnum("any", "2", "1024")
	sc["ivshmem"] = psParam(f["ivshmem"], "ivshmem")
	sc["keephugepages"] = pBool()
	sc["keyboard"] = pEnum("de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch",
		"hu", "is", "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr")
	sc["migrate_downtime"] = num(0)
	sc["migrate_speed"] = pInt(i64(0), nil)
	sc["nameserver"] = pFmt("address-list")
	sc["reboot"] = pBool()
	sc["rng0"] = namedPS("pve-qm-rng", f["rng"], "rng0")
	sc["searchdomain"] = pStr()
	sc["smp"] = pInt(i64(1), nil)
	sc["spice_enhancements"] = psParam(f["spice_enhancements"], "spice_enhancements")
	sc["sshkeys"] = pFmt("urlencoded")
	sc["startdate"] = pat(startdateRE)
	sc["tdf"] = pBool()
	tpm := pStr()
	tpm.formatFn = diskParamFormat("tpmstate0")
	sc["tpmstate0"] = tpm
	sc["vmstatestorage"] = pFmt("pve-storage-id")
	sc["watchdog"] = namedPS("pve-qm-watchdog", f["watchdog"], "watchdog")
	if rel.atLeast9() {
		sc["intel-tdx"] = namedPS("pve-qemu-tdx-fmt", f["intel-tdx"], "intel-tdx")
	}
	if !rel.atLeast9() {
		for k := range sc {
			if !isDriveKey(k) {
				continue
			}
			sc[k] = psParam(driveFormatFor(rel, k), k) // built once, not per request
		}
		sc["agent"] = psParam(agentFormatFor(rel), "agent")
		sc["machine"] = psParam(machineFormatFor(rel), "machine")
	}
	indexed := func(prefix string, n int, mk func(k string) param) {
		for i := 0; i < n; i++ {
			k := prefix + strconv.Itoa(i)
			sc[k] = mk(k)
		}
	}
	indexed("hostpci", 16, func(k string) param { return namedPS("pve-qm-hostpci", f["hostpci"], k) })
	indexed("usb", 14, func(k string) param { return namedPS("pve-qm-usb", f["usb"], k) })
	indexed("numa", 8, func(k string) param { return psParam(f["numa"], k) })
	indexed("ipconfig", 32, func(k string) param { return namedPS("pve-qm-ipconfig", f["ipconfig"], k) })
	indexed("parallel", 3, func(string) param { return pat(parallelRE) })
	indexed("virtiofs", 10, func(k string) param { return namedPS("pve-qm-virtiofs", f["virtiofs"], k) })
}

// resolveCdromAlias is $resolve_cdrom_alias: cdrom is ide2 with
// media=cdrom.
func resolveCdromAlias(params map[string]string) {
	if v := params["cdrom"]; v != "" {
		if !strings.Contains(v, "media=") {
			v += ",media=cdrom"
		}
		params["ide2"] = v
	}
	delete(params, "cdrom")
}

// checkSSHKeys is validate_ssh_public_keys on the URI-unescaped value
// (ssh-keygen -l per line, approximated by its shape: type and base64).
func checkSSHKeys(params map[string]string) *apiError {
	v, ok := params["sshkeys"]
	if !ok {
		return nil
	}
	raw := uriUnescape(v)
	for _, line := range strings.Split(raw, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := sshKeyLineRE.FindStringSubmatch(line)
		if m == nil {
			return die("SSH public key validation error")
		}
		if _, err := base64.StdEncoding.DecodeString(m[2]); err != nil {
			return die("SSH public key validation error")
		}
	}
	return nil
}

// uriUnescape is URI::Escape::uri_unescape: %XX decoded, nothing else.
func uriUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// prepareOptionUpdate is update_vm_api's per-option handling of the
// options above: cipassword is hashed (unless already crypt()ed or the
// guest is Windows) and written to the config directly, not to [PENDING].
func prepareOptionUpdate(vm *qemuVM, params map[string]string) {
	pw, ok := params["cipassword"]
	if !ok {
		return
	}
	delete(params, "cipassword")
	if !strings.HasPrefix(vm.Config["ostype"], "w") && !cryptedPassRE.MatchString(pw) {
		pw = encryptPassword(pw)
	}
	vm.Config["cipassword"] = pw
	delete(vm.Pending, "cipassword")
	vm.removePendingDelete("cipassword")
}

// encryptPassword stands in for PVE::Tools::encrypt_pw (crypt() with a
// $5$ salt): a value of the same shape; nobody reads it back through the
// API, which masks it.
func encryptPassword(pw string) string {
	salt := fmt.Sprintf("%08x%08x", randIntN(1<<30), randIntN(1<<30))
	sum := sha256.Sum256([]byte(salt + pw))
	return "$5$" + salt + "$" + strings.TrimRight(base64.RawStdEncoding.EncodeToString(sum[:]), "=")
}

// maskConfigPassword is what vm_config and vm_pending do to cipassword.
func maskConfigPassword(conf map[string]any) {
	if v, ok := conf["cipassword"].(string); ok && v != "" && v != "0" {
		conf["cipassword"] = "**********"
	}
}

func maskPendingPassword(rows []map[string]any) {
	for _, r := range rows {
		if r["key"] != "cipassword" {
			continue
		}
		if _, ok := r["value"]; ok {
			r["value"] = "**********"
		}
		if _, ok := r["pending"]; ok {
			r["pending"] = "********** "
		}
	}
}

// driveFormatFor is driveFormat as the release has it: PVE 8.4 had no
// efidisk0 ms-cert and no tpmstate0 format.
func driveFormatFor(rel pveRelease, key string) psFormat {
	f := driveFormat(key)
	if !rel.atLeast9() {
		switch key {
		case "efidisk0":
			delete(f, "ms-cert")
		case "tpmstate0":
			delete(f, "format")
		default:
			addDriveGeometry(f)
		}
	}
	return f
}

// addDriveGeometry adds the geometry keys qemu-server 9 dropped.
func addDriveGeometry(f psFormat) {
	for _, g := range []string{"cyls", "heads", "secs"} {
		f[g] = psOpt(tInteger)
	}
	f["trans"] = psEnum("none", "lba", "auto")
}

// storedDriveFormat parses drives already in a config, which their
// release's schema checked when they were written: it knows every
// release's keys, so an 8.4 drive with geometry keys still has a volume
// and a size.
func storedDriveFormat(key string) psFormat {
	f := driveFormat(key)
	if key != "efidisk0" && key != "tpmstate0" {
		addDriveGeometry(f)
	}
	return f
}

// agentFormatFor: before 9.0 freeze-fs-on-backup was the key itself, not
// an alias of freeze-fs.
func agentFormatFor(rel pveRelease) psFormat {
	if rel.atLeast9() {
		return agentFormat
	}
	f := maps.Clone(agentFormat)
	delete(f, "freeze-fs")
	delete(f, "guest-fsfreeze")
	f["freeze-fs-on-backup"] = psOpt(tBoolean)
	return f
}

// machineFormatFor: aw-bits came with PVE 9.
func machineFormatFor(rel pveRelease) psFormat {
	if rel.atLeast9() {
		return machineFormat
	}
	f := maps.Clone(machineFormat)
	delete(f, "aw-bits")
	return f
}

// usbHotpluggable is vmconfig_hotplug_pending's $is_usb_hotplug_supported:
// the usb hotplug feature and a Linux or Windows 8+ guest (the sim's QEMU
// is always newer than 7.1).
func (vm *qemuVM) usbHotpluggable(hp map[string]bool) bool {
	os := vm.Config["ostype"]
	win := 0
	if n, ok := strings.CutPrefix(os, "win"); ok {
		win, _ = strconv.Atoi(n)
	}
	return hp["usb"] && (os == "l26" || win > 7)
}

var snippetNameRE = regexp.MustCompile(`^snippets/([^/]+)$`)

// checkHookscriptLocked is update_vm_api's check_hookscript
// (pve-guest-common PVE/GuestHelpers.pm): the volume must be a snippet on a
// storage with a path, and an executable file on this node. Its die
// becomes the parameter's error.
func (s *Sim) checkHookscriptLocked(node string, params map[string]string) *apiError {
	volid, ok := params["hookscript"]
	if !ok {
		return nil
	}
	fail := func(format string, a ...any) *apiError {
		return paramErr1("hookscript", fmt.Sprintf(format, a...)+"\n")
	}
	store, name, err := splitVolid(volid)
	if err != nil {
		return fail("%v", err)
	}
	e, err := s.storageEntryLocked(node, store)
	if err != nil {
		return fail("%v", err)
	}
	m := snippetNameRE.FindStringSubmatch(name)
	if m == nil || e.Opts["path"] == "" {
		return fail("'%s' is not in the snippets directory", volid)
	}
	f := s.execState(node).Files[strings.TrimSuffix(e.Opts["path"], "/")+"/snippets/"+m[1]]
	if f == nil {
		return fail("script '%s' does not exist", volid)
	}
	if f.Mode&0o111 == 0 {
		return fail("script '%s' is not executable", volid)
	}
	return nil
}
