package pvesim

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// VMs after qemu-server (PVE/API2/Qemu.pm, PVE/QemuServer.pm,
// PVE/QemuConfig.pm, PVE/QemuMigrate.pm) and pve-guest-common
// (PVE/AbstractConfig.pm): create with disk allocation, config with
// [PENDING] changes for running VMs, the digest check and the config lock,
// resize, move_disk, unlink, power state, destroy and migrate. Volumes
// come from storage_model.go.

// fastPlugOptions apply at once, running or not ($fast_plug_option).
var fastPlugOptions = map[string]bool{
	"description": true, "hookscript": true, "lock": true, "migrate_downtime": true, "migrate_speed": true,
	"name": true, "onboot": true, "protection": true, "shares": true, "startup": true, "tags": true,
	"vmstatestorage": true, "cicustom": true, "cipassword": true, "citype": true, "ciupgrade": true,
	"ciuser": true, "nameserver": true, "searchdomain": true, "sshkeys": true,
}

// numericConfigKeys are integer and boolean options: the config parser
// turns them into numbers, so GET config returns JSON numbers.
var numericConfigKeys = map[string]bool{
	"acpi": true, "autostart": true, "balloon": true, "cores": true, "cpuunits": true, "kvm": true,
	"localtime": true, "numa": true, "onboot": true, "protection": true, "shares": true, "sockets": true,
	"tablet": true, "template": true, "vcpus": true, "migrate_speed": true, "keephugepages": true,
	"reboot": true, "tdf": true, "freeze": true, "smp": true, "allow-ksm": true, "ciupgrade": true,
}

func vmidParam() param { p := pInt(i64(100), i64(999999999)).req(); p.format = "pve-vmid"; return p }

// qemuConfigSchema is json_config_properties: the options of create and
// update.
func qemuConfigSchema(rel pveRelease) schema {
	vmgenid := pStr()
	vmgenid.pattern = regexp.MustCompile(`^(?:[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}|[01])$`)
	name := pStr()
	name.formatFn = func(v string) string {
		if !dnsNameRE.MatchString(v) {
			return fmt.Sprintf("value does not look like a valid DNS name: '%s'", v)
		}
		return ""
	}
	tags := pStr()
	tags.formatFn = func(v string) string {
		for _, t := range regexp.MustCompile(`[;,\s]+`).Split(v, -1) {
			if t != "" && !tagListRE.MatchString(t) {
				return fmt.Sprintf("invalid tag '%s'", t)
			}
		}
		return ""
	}
	cpulimit := param{typ: tNumber, optional: true, min: i64(0), max: i64(128)}
	sc := schema{
		"acpi":        pBool(),
		"agent":       psParam(agentFormat, "agent"),
		"autostart":   pBool(),
		"balloon":     pInt(i64(0), nil),
		"bios":        pEnum("seabios", "ovmf"),
		"boot":        psParam(bootFormat, "boot"),
		"cores":       pInt(i64(1), nil),
		"cpu":         psParam(cpuFormat, "cpu"),
		"cpulimit":    cpulimit,
		"cpuunits":    pInt(i64(1), i64(262144)),
		"description": pStr().maxLen(8192),
		"hotplug":     pFmt("pve-hotplug-features"),
		"kvm":         pBool(),
		"localtime":   pBool(),
		"lock":        pEnum("backup", "clone", "create", "migrate", "rollback", "snapshot", "snapshot-delete", "suspending", "suspended"),
		"machine":     psParam(machineFormat, "machine"),
		"memory":      psParam(memoryFormat, "memory"),
		"name":        name,
		"numa":        pBool(),
		"onboot":      pBool(),
		"ostype":      pEnum("other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris"),
		"protection":  pBool(),
		"scsihw":      pEnum("lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"),
		"shares":      pInt(i64(0), i64(50000)),
		"smbios1":     pStr().maxLen(512),
		"sockets":     pInt(i64(1), nil),
		"startup":     pFmt("pve-startup-order"),
		"tablet":      pBool(),
		"tags":        tags,
		"template":    pBool(),
		"vcpus":       pInt(i64(1), nil),
		"vga":         psParam(vgaFormat, "vga"),
		"vmgenid":     vmgenid,
	}
	disk := func(k string) param { p := pStr(); p.formatFn = diskParamFormat(k); return p }
	for _, b := range driveBuses {
		for i := 0; i <= b.max; i++ {
			k := b.bus + strconv.Itoa(i)
			sc[k] = disk(k)
		}
	}
	sc["efidisk0"] = disk("efidisk0")
	for i := 0; i < 32; i++ {
		k := "net" + strconv.Itoa(i)
		p := pStr()
		p.formatFn = netParamFormat(k)
		sc[k] = p
	}
	for i := 0; i < 4; i++ {
		p := pStr()
		p.pattern = regexp.MustCompile(`^(?:/dev/.+|socket)$`)
		sc["serial"+strconv.Itoa(i)] = p
	}
	for i := 0; i < 256; i++ {
		k := "unused" + strconv.Itoa(i)
		sc[k] = psParam(unusedFormat, k)
	}
	if rel.Release >= "9" {
		sc["allow-ksm"] = pBool()
	}
	addQemuOptions(rel, sc)
	return sc
}

func registerQemu(t *routeTable) {
	base := func() schema { return schema{"node": nodeParam(), "vmid": vmidParam()} }
	create := qemuConfigSchema(t.rel)
	create["node"] = nodeParam()
	create["vmid"] = vmidParam()
	create["start"] = pBool()
	create["storage"] = pFmt("pve-storage-id")
	// Create-only options of qemu-server's create_vm: a restore (archive and
	// what only applies to it) and the working storage of import-from.
	create["archive"] = pStr().maxLen(255)
	create["bwlimit"] = pInt(i64(0), nil)
	create["force"] = pBool().needs("archive")
	create["unique"] = pBool().needs("archive")
	create["live-restore"] = pBool()
	create["import-working-storage"] = pFmt("pve-storage-id")
	if t.rel.Release >= "9" {
		create["ha-managed"] = pBool()
	}
	t.add("POST", "/nodes/{node}/qemu", &method{params: create, handler: createVM})
	t.add("GET", "/nodes/{node}/qemu", &method{params: schema{"node": nodeParam(), "full": pBool()}, handler: listVMs})
	t.add("GET", "/nodes/{node}/qemu/{vmid}", &method{params: base(), handler: func(c *call) (any, *apiError) {
		if _, err := c.vm(); err != nil {
			return nil, err
		}
		return subdirs("config", "pending", "status", "unlink", "vncproxy", "termproxy", "migrate", "resize", "move", "rrd", "rrddata", "monitor", "agent", "snapshot", "spiceproxy", "sendkey", "firewall", "mtunnel", "remote_migrate"), nil
	}})
	update := func(async bool) schema {
		sc := qemuConfigSchema(t.rel)
		sc["node"] = nodeParam()
		sc["vmid"] = vmidParam()
		sc["delete"] = pFmt("pve-configid-list")
		sc["revert"] = pFmt("pve-configid-list")
		sc["force"] = pBool().needs("delete")
		sc["digest"] = pStr().maxLen(40)
		sc["skiplock"] = pBool()
		if async {
			sc["background_delay"] = pInt(i64(1), i64(30))
			sc["import-working-storage"] = pFmt("pve-storage-id")
		}
		return sc
	}
	t.add("POST", "/nodes/{node}/qemu/{vmid}/config", &method{params: update(true), handler: func(c *call) (any, *apiError) { return updateVM(c, false) }})
	t.add("PUT", "/nodes/{node}/qemu/{vmid}/config", &method{params: update(false), handler: func(c *call) (any, *apiError) { return updateVM(c, true) }})
	getCfg := base()
	getCfg["current"] = pBool()
	snap := pFmt("pve-configid").maxLen(40)
	getCfg["snapshot"] = snap
	t.add("GET", "/nodes/{node}/qemu/{vmid}/config", &method{params: getCfg, handler: vmConfig})
	t.add("GET", "/nodes/{node}/qemu/{vmid}/pending", &method{params: base(), handler: vmPending})
	unlink := base()
	unlink["idlist"] = pFmt("pve-configid-list").req()
	unlink["force"] = pBool()
	t.add("PUT", "/nodes/{node}/qemu/{vmid}/unlink", &method{params: unlink, handler: unlinkVM})

	// Drive.pm valid_drive_names order (ide, scsi, virtio, sata), which
	// the enumeration's error text lists.
	diskEnum := func(unused bool) []string {
		var out []string
		for _, bus := range []string{"ide", "scsi", "virtio", "sata"} {
			for _, b := range driveBuses {
				for i := 0; b.bus == bus && i <= b.max; i++ {
					out = append(out, b.bus+strconv.Itoa(i))
				}
			}
		}
		out = append(out, "efidisk0", "tpmstate0")
		if unused {
			for i := 0; i < 256; i++ {
				out = append(out, "unused"+strconv.Itoa(i))
			}
		}
		return out
	}
	resize := base()
	resize["disk"] = pEnum(diskEnum(false)...).req()
	sz := pStr().req()
	sz.pattern = regexp.MustCompile(`^\+?\d+(\.\d+)?[KMGT]?$`)
	resize["size"] = sz
	resize["digest"] = pStr().maxLen(40)
	resize["skiplock"] = pBool()
	t.add("PUT", "/nodes/{node}/qemu/{vmid}/resize", &method{params: resize, handler: resizeVM})

	move := base()
	move["disk"] = pEnum(diskEnum(true)...).req()
	move["storage"] = pFmt("pve-storage-id")
	move["format"] = pEnum("raw", "qcow2", "vmdk")
	move["delete"] = pBool()
	move["digest"] = pStr().maxLen(40)
	move["bwlimit"] = pInt(i64(0), nil)
	move["target-vmid"] = vmidParam()
	move["target-vmid"] = func() param { p := vmidParam(); p.optional = true; return p }()
	move["target-disk"] = pEnum(diskEnum(true)...)
	move["target-digest"] = pStr().maxLen(40)
	t.add("POST", "/nodes/{node}/qemu/{vmid}/move_disk", &method{params: move, handler: moveDisk})

	t.add("GET", "/nodes/{node}/qemu/{vmid}/status", &method{params: base(), handler: func(c *call) (any, *apiError) {
		if _, err := c.vm(); err != nil {
			return nil, err
		}
		return subdirs("current", "start", "stop", "reset", "shutdown", "suspend", "reboot", "resume"), nil
	}})
	t.add("GET", "/nodes/{node}/qemu/{vmid}/status/current", &method{params: base(), handler: vmStatusCurrent})
	start := base()
	start["skiplock"] = pBool()
	start["timeout"] = pInt(i64(0), nil)
	start["machine"] = psParam(machineFormat, "machine")
	start["migratedfrom"] = nodeParam()
	start["migratedfrom"] = func() param { p := nodeParam(); p.optional = true; return p }()
	start["stateuri"] = pStr().maxLen(128)
	start["force-cpu"] = pStr()
	start["migration_type"] = pEnum("secure", "insecure")
	start["migration_network"] = pFmt("CIDR")
	start["targetstorage"] = pFmt("storage-pair-list")
	if t.rel.Release >= "9" {
		start["with-conntrack-state"] = pBool()
		mtu := pStr()
		mtu.pattern = regexp.MustCompile(`^net\d+=\d+(,net\d+=\d+)*$`)
		start["nets-host-mtu"] = mtu
	}
	t.add("POST", "/nodes/{node}/qemu/{vmid}/status/start", &method{params: start, handler: startVM})
	stop := base()
	stop["skiplock"] = pBool()
	stop["timeout"] = pInt(i64(0), nil)
	stop["keepActive"] = pBool()
	stop["migratedfrom"] = func() param { p := nodeParam(); p.optional = true; return p }()
	stop["overrule-shutdown"] = pBool()
	t.add("POST", "/nodes/{node}/qemu/{vmid}/status/stop", &method{params: stop, handler: func(c *call) (any, *apiError) { return stopVM(c, "qmstop") }})
	shutdown := base()
	shutdown["skiplock"] = pBool()
	shutdown["timeout"] = pInt(i64(0), nil)
	shutdown["keepActive"] = pBool()
	shutdown["forceStop"] = pBool()
	t.add("POST", "/nodes/{node}/qemu/{vmid}/status/shutdown", &method{params: shutdown, handler: func(c *call) (any, *apiError) { return stopVM(c, "qmshutdown") }})
	reboot := base()
	reboot["timeout"] = pInt(i64(0), nil)
	t.add("POST", "/nodes/{node}/qemu/{vmid}/status/reboot", &method{params: reboot, handler: rebootVM})

	destroy := base()
	destroy["skiplock"] = pBool()
	destroy["purge"] = pBool()
	destroy["destroy-unreferenced-disks"] = pBool()
	t.add("DELETE", "/nodes/{node}/qemu/{vmid}", &method{params: destroy, handler: destroyVM})

	migrate := base()
	migrate["target"] = nodeParam()
	migrate["online"] = pBool()
	migrate["with-local-disks"] = pBool()
	migrate["force"] = pBool()
	migrate["bwlimit"] = pInt(i64(0), nil)
	migrate["migration_type"] = pEnum("secure", "insecure")
	migrate["migration_network"] = pFmt("CIDR")
	migrate["targetstorage"] = pFmt("storage-pair-list")
	if t.rel.Release >= "9" {
		migrate["with-conntrack-state"] = pBool()
	}
	t.add("POST", "/nodes/{node}/qemu/{vmid}/migrate", &method{params: migrate, handler: migrateVM})

	nextid := schema{"vmid": func() param { p := vmidParam(); p.optional = true; return p }()}
	t.add("GET", "/cluster/nextid", &method{params: nextid, handler: nextID})
}

// vm is the VM of the call's node, or load_config's error.
func (c *call) vm() (*qemuVM, *apiError) {
	vmid, _ := strconv.Atoi(c.params["vmid"])
	node := c.params["node"]
	if vm := c.s.st.Nodes[node].VMs[vmid]; vm != nil {
		vm.normalize()
		return vm, nil
	}
	return nil, die("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
}

// normalize fills a VM made elsewhere (HA tests' hooks) to what qemu.go
// expects.
func (vm *qemuVM) normalize() {
	if vm.Config == nil {
		vm.Config = map[string]string{}
	}
	if vm.Pending == nil {
		vm.Pending = map[string]string{}
	}
	if vm.Status == "" {
		vm.Status = "stopped"
	}
	if vm.Lock != "" && vm.Config["lock"] == "" {
		vm.Config["lock"] = vm.Lock
	}
}

func (vm *qemuVM) setLock(l string) {
	vm.Lock = l
	if l == "" {
		delete(vm.Config, "lock")
	} else {
		vm.Config["lock"] = l
	}
}

// checkLock is check_lock.
func (vm *qemuVM) checkLock() *apiError {
	if l := vm.Config["lock"]; l != "" {
		return die("VM is locked (%s)", l)
	}
	return nil
}

func (vm *qemuVM) running() bool { return vm.Status == "running" }

// writeLocked is write_config's side effects on the model.
func (s *Sim) writeVMLocked(vm *qemuVM) {
	vm.cleanupUnused()
	// The description is the file's leading comment; parse_vm_config
	// strips trailing whitespace, so that is what the next read sees.
	if d, ok := vm.Config["description"]; ok {
		if d = strings.TrimRight(d, " \t\r\n"); d == "" {
			delete(vm.Config, "description")
		} else {
			vm.Config["description"] = d
		}
	}
	if d, ok := vm.Pending["description"]; ok {
		vm.Pending["description"] = strings.TrimRight(d, " \t\r\n")
	}
	vm.Lock = vm.Config["lock"]
	s.saveLocked()
}

// volumeOwner is the vmid encoded in a volume name (vm-<id>-..., <id>/...).
var volOwnerRE = regexp.MustCompile(`(?:^|/)(?:vm|base)-(\d+)-`)

func volumeOwner(volid string) int {
	_, name, _ := strings.Cut(volid, ":")
	if m := volOwnerRE.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// registerUnusedLocked is vmconfig_register_unused_drive.
func (s *Sim) registerUnusedLocked(vm *qemuVM, d drive) {
	if d.isCdrom() {
		return
	}
	volid := d.file()
	store, _, err := splitVolid(volid)
	if err != nil {
		return
	}
	if _, err := s.storageEntryLocked(s.vmNodeLocked(vm), store); err != nil {
		return
	}
	if volumeOwner(volid) == vm.VMID {
		_, _ = vm.addUnused(volid)
	}
}

// vmNodeLocked is the node whose VMs map holds vm.
func (s *Sim) vmNodeLocked(vm *qemuVM) string {
	for _, name := range s.st.NodeOrder {
		if s.st.Nodes[name].VMs[vm.VMID] == vm {
			return name
		}
	}
	return ""
}

// freeOwnedLocked is try_deallocate_drive: a volume the VM owns is freed,
// another VM's is only dropped from the config.
func (s *Sim) freeOwnedLocked(node string, vm *qemuVM, volid string) error {
	if volumeOwner(volid) != vm.VMID {
		return nil
	}
	if _, err := s.volumeLocked(node, volid); err != nil {
		return nil //nolint:nilerr // a volume already gone is not an error here
	}
	return s.freeVolumeLocked(node, volid)
}

// allocDrivesLocked is create_disks for the drive params: allocation
// syntax allocates (vdisk_alloc), an existing volume gets its size. It
// returns the drive strings to write and the volumes it allocated.
func (s *Sim) allocDrivesLocked(node string, vmid int, params map[string]string, defaultStorage string, log *[]string) (map[string]string, []string, error) {
	out := map[string]string{}
	var allocated []string
	keys := sortedKeys(params)
	for _, k := range keys {
		if !isDriveKey(k) {
			continue
		}
		d, msg := parseDrive(k, params[k])
		if msg != "" {
			return out, allocated, fmt.Errorf("unable to parse drive options")
		}
		file := d.file()
		switch {
		case file == "" || file == "none" || file == "cdrom":
			delete(d, "size")
			out[k] = d.print()
		case newDiskRE.MatchString(file):
			m := newDiskRE.FindStringSubmatch(file)
			store := m[2]
			if store == "" {
				store = defaultStorage
			}
			if store == "" {
				return out, allocated, fmt.Errorf("no storage ID specified (and no default storage)")
			}
			gib, _ := strconv.ParseFloat(m[3], 64)
			size := int64(math.Round(gib * (1 << 30)))
			if k == "efidisk0" {
				size = 528 << 10
			}
			if k == "tpmstate0" {
				size = 4 << 20 // TPMSTATE_DISK_SIZE, whatever size was asked
			}
			format, _ := d["format"].(string)
			v, err := s.allocVolumeLocked(node, store, vmid, size, format)
			if err != nil {
				return out, allocated, err
			}
			allocated = append(allocated, v.volid())
			d["file"] = v.volid()
			d["size"] = formatSize(v.Size)
			delete(d, "format")
			out[k] = d.print()
			*log = append(*log, fmt.Sprintf("%s: successfully created disk '%s'", k, out[k]))
		default:
			if _, _, err := splitVolid(file); err != nil || strings.HasPrefix(file, "/") {
				out[k] = d.print()
				continue
			}
			v, err := s.volumeLocked(node, file)
			if err != nil {
				if d.isCdrom() {
					out[k] = d.print()
					continue
				}
				return out, allocated, fmt.Errorf("volume %s does not exist", file)
			}
			if !d.isCdrom() {
				d["size"] = formatSize(v.Size)
			}
			out[k] = d.print()
		}
	}
	return out, allocated, nil
}

// checkDriveParamsLocked is $check_drive_param + $check_storage_access:
// drive strings normalised, allocation storages checked.
func (s *Sim) checkDriveParamsLocked(node string, params map[string]string, defaultStorage string) *apiError {
	for _, k := range sortedKeys(params) {
		if !isDriveKey(k) {
			continue
		}
		d, msg := parseDrive(k, params[k])
		if msg != "" {
			return paramErr1(k, "unable to parse drive options")
		}
		if m := newDiskRE.FindStringSubmatch(d.file()); m != nil && !d.isCdrom() {
			store := m[2]
			if store == "" {
				store = defaultStorage
			}
			if store == "" {
				return die("no storage ID specified (and no default storage)")
			}
			e, err := s.storageEntryLocked(node, store)
			if err != nil {
				return die("%s", err.Error())
			}
			if !e.contentTypes()["images"] {
				return paramErr1("storage", fmt.Sprintf("storage '%s' does not support vm images", store))
			}
		}
		params[k] = d.print()
	}
	for _, k := range sortedKeys(params) {
		if !strings.HasPrefix(k, "unused") {
			continue
		}
		d, _ := parseDrive(k, params[k])
		if _, _, err := splitVolid(d.file()); err != nil {
			return paramErr1(k, "not a valid volid: "+d.file())
		}
	}
	return nil
}

// normalizeNets adds MAC addresses and prints NICs as print_net does.
func (s *Sim) normalizeNetsLocked(node string, params map[string]string) {
	prefix := proxmoxOUI
	if dc := s.st.Domains[s.st.Nodes[node].Domain].Datacenter; dc != nil && dc.Values["mac_prefix"] != "" {
		prefix = dc.Values["mac_prefix"]
	}
	for k, v := range params {
		if bus, idx := splitIndexed(k); bus != "net" || idx < 0 {
			continue
		}
		m, msg := parseNet(k, v)
		if msg != "" {
			continue
		}
		if _, ok := m["macaddr"]; !ok {
			m["macaddr"] = randomMAC(prefix)
		}
		params[k] = printNet(m)
	}
}

// memoryMiB is get_current_memory.
func memoryMiB(v string) int64 {
	if v == "" {
		return 512
	}
	m, msg := parseFixedShared("memory", memoryFormat, "memory", v)
	if msg != "" {
		return 512
	}
	n, _ := strconv.ParseInt(fmt.Sprint(m["current"]), 10, 64)
	return n
}

// defaultBoot is get_default_bootdevices + print_bootorder: the first
// disk, then CD drives, then NICs.
func defaultBoot(conf map[string]string) string {
	var disk string
	var cds, nets []string
	for _, b := range driveBuses {
		for i := 0; i <= b.max; i++ {
			k := b.bus + strconv.Itoa(i)
			v, ok := conf[k]
			if !ok {
				continue
			}
			d, _ := parseDrive(k, v)
			if d != nil && d.isCdrom() {
				cds = append(cds, k)
			} else if disk == "" {
				disk = k
			}
		}
	}
	for i := 0; i < 32; i++ {
		if _, ok := conf["net"+strconv.Itoa(i)]; ok {
			nets = append(nets, "net"+strconv.Itoa(i))
		}
	}
	var order []string
	if disk != "" {
		order = append(order, disk)
	}
	order = append(order, cds...)
	order = append(order, nets...)
	if len(order) == 0 {
		return ""
	}
	return "order=" + strings.Join(order, ";")
}

func createVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	vmid, _ := strconv.Atoi(c.params["vmid"])
	params := map[string]string{}
	for k, v := range c.params {
		switch k {
		case "node", "vmid", "start", "storage", "bwlimit", "import-working-storage", "unique", "force", "live-restore":
			continue
		}
		params[k] = v
	}
	// Not simulated: refused in so many words rather than half done.
	if c.params["archive"] != "" {
		return nil, die("pvesim does not simulate restoring a backup (archive)")
	}
	if c.params["ha-managed"] == "1" {
		return nil, die("pvesim does not simulate ha-managed on create; add the VM with POST /cluster/ha/resources")
	}
	delete(params, "archive")
	delete(params, "ha-managed")
	start := c.params["start"] == "1"
	storage := c.params["storage"]
	if perr := checkSSHKeys(params); perr != nil {
		return nil, perr
	}
	resolveCdromAlias(params)
	if perr := s.checkDriveParamsLocked(node, params, storage); perr != nil {
		return nil, perr
	}
	s.normalizeNetsLocked(node, params)
	emsg := fmt.Sprintf("unable to create VM %d -", vmid)
	if other, _ := s.guestNodeLocked(node, vmid); other != "" {
		return nil, die("%s VM %d already exists on node '%s'", emsg, vmid, other)
	}
	if b, ok := params["balloon"]; ok {
		bal, _ := strconv.ParseInt(b, 10, 64)
		if bal > memoryMiB(params["memory"]) {
			return nil, die("%s balloon value too large (must be smaller than assigned memory)", emsg)
		}
	}
	ns := s.st.Nodes[node]
	if ns.VMs == nil {
		ns.VMs = map[int]*qemuVM{}
	}
	// create_and_lock_config: the config exists with `lock: create` while
	// the worker allocates the disks.
	vm := &qemuVM{VMID: vmid, Config: map[string]string{"lock": "create"}, Pending: map[string]string{}, Status: "stopped", Lock: "create"}
	ns.VMs[vmid] = vm
	s.saveLocked()
	upid := s.startTaskLocked(c, "qmcreate", strconv.Itoa(vmid), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(1))
		if lerr != nil {
			delete(ns.VMs, vmid)
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		s.workLocked()
		created, vols, err := s.allocDrivesLocked(node, vmid, params, storage, &t.Log)
		if err != nil {
			for _, v := range vols {
				_ = s.freeVolumeLocked(node, v)
			}
			delete(ns.VMs, vmid)
			s.saveLocked()
			return 0, fmt.Errorf("%s %w", emsg, err)
		}
		conf := map[string]string{}
		for k, v := range params {
			conf[k] = v
		}
		for k, v := range created {
			conf[k] = v
		}
		if conf["boot"] == "" {
			if b := defaultBoot(conf); b != "" {
				conf["boot"] = b
			}
		}
		if conf["smbios1"] == "" {
			conf["smbios1"] = "uuid=" + newUUID()
		}
		if v := conf["vmgenid"]; v == "" || v == "1" {
			conf["vmgenid"] = newUUID()
		}
		if tags, ok := conf["tags"]; ok {
			conf["tags"] = uniqueTags(tags)
		}
		conf["meta"] = fmt.Sprintf("creation-qemu=%s,ctime=%d", qemuVersion(s.rel), time.Now().Unix())
		vm.Config = conf
		s.writeVMLocked(vm)
		if start {
			t.Log = append(t.Log, "Execute autostart")
			s.powerOnLocked(node, vm)
		}
		return 0, nil
	})
	return upid, nil
}

func qemuVersion(rel pveRelease) string {
	if rel.Release >= "9" {
		return "10.1.2"
	}
	return "9.2.0"
}

func newUUID() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(randIntN(256))
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// configView is load_current_config as the API returns it.
func (vm *qemuVM) configView(current bool) map[string]any {
	conf := map[string]string{}
	for k, v := range vm.Config {
		conf[k] = v
	}
	if !current {
		for k, v := range vm.Pending {
			conf[k] = v
		}
		for _, e := range vm.PendingDelete {
			delete(conf, strings.TrimPrefix(e, "!"))
		}
	}
	out := map[string]any{"digest": vm.digest()}
	for k, v := range conf {
		out[k] = configValue(k, v)
	}
	return out
}

func configValue(k, v string) any {
	if numericConfigKeys[k] {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return v
}

func vmConfig(c *call) (any, *apiError) {
	if c.params["snapshot"] != "" && c.params["current"] == "1" {
		msg := "cannot use 'snapshot' parameter with 'current'"
		return nil, paramErr(map[string]string{"snapshot": msg, "current": msg})
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if snap := c.params["snapshot"]; snap != "" {
		return nil, die("snapshot '%s' does not exist", snap)
	}
	conf := vm.configView(c.params["current"] == "1")
	maskConfigPassword(conf)
	return conf, nil
}

func vmPending(c *call) (any, *apiError) {
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	seen := map[string]bool{}
	row := func(k string) map[string]any {
		r := map[string]any{"key": k}
		if v, ok := vm.Config[k]; ok {
			r["value"] = configValue(k, v)
		}
		if v, ok := vm.Pending[k]; ok {
			r["pending"] = configValue(k, v)
		}
		if found, force := vm.pendingDeleteHas(k); found {
			r["delete"] = 1
			if force {
				r["delete"] = 2
			}
		}
		return r
	}
	for _, k := range sortedKeys(vm.Config) {
		out = append(out, row(k))
		seen[k] = true
	}
	out = append(out, map[string]any{"key": "digest", "value": vm.digest()})
	for _, k := range sortedKeys(vm.Pending) {
		if !seen[k] {
			out = append(out, row(k))
			seen[k] = true
		}
	}
	for _, e := range vm.PendingDelete {
		if k := strings.TrimPrefix(e, "!"); !seen[k] {
			out = append(out, row(k))
		}
	}
	maskPendingPassword(out)
	return out, nil
}

// configUpdate is one update_vm_api request, checked and ready to apply.
type configUpdate struct {
	vmid     int
	node     string
	params   map[string]string
	deletes  []string
	revert   map[string]bool
	force    bool
	digest   string
	skiplock bool
	user     string
}

func knownOption(k string) bool {
	if isDriveKey(k) {
		return true
	}
	if bus, idx := splitIndexed(k); idx >= 0 {
		switch bus {
		case "net", "unused", "serial", "numa", "usb", "hostpci", "ipconfig", "parallel", "virtiofs":
			return true
		}
	}
	switch k {
	case "acpi", "affinity", "agent", "arch", "args", "audio0", "autostart", "balloon", "bios", "boot", "bootdisk", "cdrom", "freeze",
		"cicustom", "cipassword", "citype", "ciupgrade", "ciuser", "cores", "cpu", "cpulimit", "cpuunits",
		"description", "hookscript", "hotplug", "hugepages", "ivshmem", "keephugepages", "keyboard", "kvm",
		"localtime", "lock", "machine", "memory", "migrate_downtime", "migrate_speed", "name", "nameserver",
		"numa", "onboot", "ostype", "protection", "reboot", "rng0", "scsihw", "searchdomain", "shares", "smbios1",
		"smp", "sockets", "spice_enhancements", "sshkeys", "startdate", "startup", "tablet", "tags", "tdf",
		"template", "vcpus", "vga", "vmgenid", "vmstatestorage", "watchdog", "allow-ksm", "amd-sev", "intel-tdx",
		"meta", "tpmstate0", "efidisk0":
		return true
	}
	return false
}

func (s *Sim) parseConfigUpdate(c *call) (*configUpdate, *apiError) {
	u := &configUpdate{node: c.params["node"], params: map[string]string{}, revert: map[string]bool{}, user: c.user}
	u.vmid, _ = strconv.Atoi(c.params["vmid"])
	for k, v := range c.params {
		switch k {
		case "node", "vmid", "digest", "background_delay", "skiplock", "delete", "revert", "force", "import-working-storage":
			continue
		}
		u.params[k] = v
	}
	u.digest = c.params["digest"]
	u.force = c.params["force"] == "1"
	u.skiplock = c.params["skiplock"] == "1"
	if u.skiplock && c.user != "root@pam" {
		return nil, paramErr1("skiplock", "Only root may use this option.")
	}
	if perr := checkSSHKeys(u.params); perr != nil {
		return nil, perr
	}
	if c.params["delete"] == "" && c.params["revert"] == "" && len(u.params) == 0 {
		return nil, die("no options specified")
	}
	for _, opt := range splitList(c.params["revert"]) {
		if !knownOption(opt) {
			return nil, paramErr1("revert", fmt.Sprintf("unknown option '%s'", opt))
		}
		if _, ok := u.params[opt]; ok {
			return nil, paramErr1("delete", fmt.Sprintf("you can't use '-%s' and -revert %s' at the same time", opt, opt))
		}
		u.revert[opt] = true
	}
	resolveCdromAlias(u.params)
	for _, opt := range splitList(c.params["delete"]) {
		if opt == "cdrom" {
			opt = "ide2"
		}
		if _, ok := u.params[opt]; ok {
			return nil, paramErr1("delete", fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", opt, opt))
		}
		if u.revert[opt] {
			return nil, paramErr1("revert", fmt.Sprintf("you can't use '-delete %s' and -revert %s' at the same time", opt, opt))
		}
		if !knownOption(opt) {
			return nil, paramErr1("delete", fmt.Sprintf("unknown option '%s'", opt))
		}
		u.deletes = append(u.deletes, opt)
	}
	if perr := s.checkDriveParamsLocked(u.node, u.params, ""); perr != nil {
		return nil, perr
	}
	s.normalizeNetsLocked(u.node, u.params)
	if perr := s.checkHookscriptLocked(u.node, u.params); perr != nil {
		return nil, perr
	}
	if v, ok := u.params["vmgenid"]; ok && v == "1" {
		u.params["vmgenid"] = newUUID()
	}
	return u, nil
}

// loadAndCheck is $load_and_check_config.
func (s *Sim) loadAndCheck(c *call, u *configUpdate) (*qemuVM, *apiError) {
	vm := s.st.Nodes[u.node].VMs[u.vmid]
	if vm == nil {
		return nil, die("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", u.node, u.vmid)
	}
	vm.normalize()
	if u.digest != "" && u.digest != vm.digest() {
		return nil, die("checksum mismatch (file change by other user?)")
	}
	if !u.skiplock {
		if err := vm.checkLock(); err != nil {
			return nil, err
		}
	}
	_, hasMem := u.params["memory"]
	if b, hasBal := u.params["balloon"]; hasMem || hasBal {
		mem := u.params["memory"]
		if mem == "" {
			mem = vm.Pending["memory"]
		}
		if mem == "" {
			mem = vm.Config["memory"]
		}
		if !hasBal {
			b = vm.Pending["balloon"]
			if b == "" {
				b = vm.Config["balloon"]
			}
		}
		bal, _ := strconv.ParseInt(b, 10, 64)
		if bal > 0 && bal > memoryMiB(mem) {
			return nil, die("balloon value too large (must be smaller than assigned memory)")
		}
	}
	_ = c
	return vm, nil
}

func updateVM(c *call, sync bool) (any, *apiError) {
	s := c.s
	u, perr := s.parseConfigUpdate(c)
	if perr != nil {
		return nil, perr
	}
	vm, perr := s.loadAndCheck(c, u)
	if perr != nil {
		return nil, perr
	}
	if sync {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return nil, lerr
		}
		defer release()
		var log []string
		if err := s.applyConfigUpdateLocked(c, u, &log); err != nil {
			return nil, err
		}
		return nil, nil
	}
	upid := s.startTaskLocked(c, "qmconfig", strconv.Itoa(u.vmid), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		s.workLocked()
		warnings := 0
		t.Log = append(t.Log, fmt.Sprintf("update VM %d: %s", u.vmid, u.logLine()))
		before := len(t.Log)
		if err := s.applyConfigUpdateLocked(c, u, &t.Log); err != nil {
			msg := err.Message
			for k, v := range err.Errors {
				msg += fmt.Sprintf("\n%s: %s", k, v)
			}
			return 0, fmt.Errorf("%s", msg)
		}
		for _, l := range t.Log[before:] {
			if strings.HasPrefix(l, "WARN: ") {
				warnings++
			}
		}
		return warnings, nil
	})
	if d := intParam(c.params, "background_delay", 0); d > 0 {
		// Wait up to background_delay seconds: null when the task ended
		// well in time, its error when it failed, else the UPID.
		ns := s.st.Nodes[u.node]
		deadline := time.Now().Add(time.Duration(d) * time.Second)
		for time.Now().Before(deadline) {
			var tk *task
			for _, x := range ns.Tasks {
				if x.UPID == upid {
					tk = x
				}
			}
			if tk != nil && tk.Status == "stopped" {
				if tk.ExitStatus == "OK" || strings.HasPrefix(tk.ExitStatus, "WARNINGS") {
					return nil, nil
				}
				return nil, die("failed to update VM %d: %s", u.vmid, tk.ExitStatus)
			}
			s.mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			s.mu.Lock()
		}
	}
	return upid, nil
}

func (u *configUpdate) logLine() string {
	var parts []string
	all := map[string]string{}
	for k, v := range u.params {
		all[k] = v
	}
	if len(u.deletes) > 0 {
		all["delete"] = strings.Join(u.deletes, ",")
	}
	for _, k := range sortedKeys(all) {
		parts = append(parts, "-"+k, all[k])
	}
	return strings.Join(parts, " ")
}

// applyConfigUpdateLocked is $updatefn: write the changes to [PENDING],
// then hotplug them (running) or apply them (stopped). Caller holds the
// config lock.
func (s *Sim) applyConfigUpdateLocked(c *call, u *configUpdate, log *[]string) *apiError {
	vm, perr := s.loadAndCheck(c, u)
	if perr != nil {
		return perr
	}
	node := u.node
	prepareOptionUpdate(vm, u.params)
	modified := map[string]bool{}
	deletes := append([]string(nil), u.deletes...)
	for opt := range u.revert {
		if v, ok := vm.Config[opt]; ok {
			u.params[opt] = v
		} else if _, ok := vm.Pending[opt]; ok {
			deletes = append(deletes, opt)
		}
	}
	var bootOrder []string
	if b := vm.Config["boot"]; b != "" {
		if m, msg := parsePropertyString(bootFormat, "boot", b); msg == "" {
			if o, ok := m["order"].(string); ok {
				bootOrder = strings.Split(o, ";")
			}
		}
	}
	bootDeleted := contains(deletes, "boot")
	for _, opt := range deletes {
		modified[opt] = true
		val, ok := vm.Config[opt]
		_, isPending := vm.Pending[opt]
		if !ok {
			val, ok = vm.Pending[opt]
		}
		if !ok {
			*log = append(*log, fmt.Sprintf("WARN: cannot delete '%s' - not set in current configuration!", opt))
			modified[opt] = false
			continue
		}
		delete(vm.Pending, opt)
		if !bootDeleted && contains(bootOrder, opt) {
			var keep []string
			for _, d := range bootOrder {
				if d != opt {
					keep = append(keep, d)
				}
			}
			bootOrder = keep
			vm.Pending["boot"] = "order=" + strings.Join(bootOrder, ";")
			modified["boot"] = true
		}
		switch {
		case strings.HasPrefix(opt, "unused"):
			d, _ := parseDrive(opt, val)
			if vm.Config["protection"] == "1" {
				return die("can't remove unused disk '%s' - protection mode enabled", d.file())
			}
			if err := s.freeOwnedLocked(node, vm, d.file()); err != nil {
				return die("%v", err)
			}
			delete(vm.Config, opt)
		case isDriveKey(opt):
			if vm.Config["protection"] == "1" {
				return die("can't remove drive '%s' - protection mode enabled", opt)
			}
			if isPending {
				d, _ := parseDrive(opt, val)
				s.registerUnusedLocked(vm, d)
			}
			vm.addPendingDelete(opt, u.force)
		case opt == "tags":
			delete(vm.Config, opt)
		default:
			vm.addPendingDelete(opt, u.force)
		}
		s.writeVMLocked(vm)
	}
	for _, opt := range sortedKeys(u.params) {
		val := u.params[opt]
		modified[opt] = true
		if cur, ok := vm.Pending[opt]; ok && cur == val {
			continue
		}
		switch {
		case isDriveKey(opt):
			if old, ok := vm.Pending[opt]; ok {
				d, _ := parseDrive(opt, old)
				s.registerUnusedLocked(vm, d)
			}
			created, _, err := s.allocDrivesLocked(node, vm.VMID, map[string]string{opt: val}, "", log)
			if err != nil {
				return die("%v", err)
			}
			vm.Pending[opt] = created[opt]
		case opt == "tags":
			vm.Pending[opt] = uniqueTags(val)
		case opt == "boot":
			if m, msg := parsePropertyString(bootFormat, "boot", val); msg == "" {
				if o, ok := m["order"].(string); ok && o != "" {
					devs := splitList(strings.ReplaceAll(o, ";", ","))
					for _, dev := range devs {
						_, inConf := vm.Config[dev]
						_, inPend := vm.Pending[dev]
						_, inParams := u.params[dev]
						if (!inConf && !inPend && !inParams) || contains(deletes, dev) {
							return die("invalid bootorder: device '%s' does not exist'", dev)
						}
					}
					val = "order=" + strings.Join(devs, ";")
					if _, ok := vm.Config["bootdisk"]; ok {
						vm.addPendingDelete("bootdisk", false)
					}
				}
			}
			vm.Pending[opt] = val
		default:
			vm.Pending[opt] = val
		}
		vm.removePendingDelete(opt)
		s.writeVMLocked(vm)
	}
	vm.cleanupPending()
	s.writeVMLocked(vm)
	if len(vm.Pending) == 0 && len(vm.PendingDelete) == 0 {
		return nil
	}
	errs := map[string]string{}
	if vm.running() {
		s.hotplugPendingLocked(node, vm, modified, errs)
	} else {
		s.applyPendingLocked(node, vm, errs)
	}
	s.writeVMLocked(vm)
	if len(errs) > 0 {
		return paramErr(errs)
	}
	return nil
}

// hotplugFeatures is parse_hotplug_features with PVE's default.
func (vm *qemuVM) hotplugFeatures() map[string]bool {
	v, ok := vm.Config["hotplug"]
	if !ok || v == "1" {
		v = "network,disk,usb"
	}
	out := map[string]bool{}
	if v == "0" {
		return out
	}
	for _, f := range splitList(v) {
		out[f] = true
	}
	return out
}

// Disk options a running VM cannot change live (vmconfig_update_disk).
var coldDiskOptions = []string{"aio", "discard", "iothread", "queues", "product", "cache", "ssd", "vendor", "ro"}

// hotplugPendingLocked is vmconfig_hotplug_pending: fast-plug options and
// what the hotplug features allow apply now, the rest stays pending.
func (s *Sim) hotplugPendingLocked(node string, vm *qemuVM, selection map[string]bool, errs map[string]string) {
	hp := vm.hotplugFeatures()
	for k, v := range vm.Pending {
		if fastPlugOptions[k] {
			vm.Config[k] = v
			delete(vm.Pending, k)
		}
	}
	for _, e := range append([]string(nil), vm.PendingDelete...) {
		opt := strings.TrimPrefix(e, "!")
		force := strings.HasPrefix(e, "!")
		if selection != nil && !selection[opt] {
			continue
		}
		ok := false
		switch {
		case fastPlugOptions[opt], opt == "cpuunits", opt == "cpulimit":
			ok = true
		case opt == "balloon":
			ok = vm.Config["balloon"] != "0"
		case opt == "tablet":
			ok = hp["usb"]
		case strings.HasPrefix(opt, "usb"):
			ok = vm.usbHotpluggable(hp)
		case opt == "vcpus":
			ok = hp["cpu"]
		case opt == "memory":
			ok = hp["memory"]
		case strings.HasPrefix(opt, "net"):
			ok = hp["network"]
		case isDriveKey(opt):
			bus, _ := splitIndexed(opt)
			ok = hp["disk"] && bus != "efidisk" && bus != "ide" && bus != "sata" && bus != "tpmstate"
			if ok {
				s.deleteOrDetachLocked(node, vm, opt, force)
			}
		}
		if ok {
			delete(vm.Config, opt)
			vm.removePendingDelete(opt)
		}
	}
	for _, opt := range sortedKeys(vm.Pending) {
		if selection != nil && !selection[opt] {
			continue
		}
		val := vm.Pending[opt]
		ok := false
		switch {
		case opt == "cpuunits", opt == "cpulimit":
			ok = true
		case opt == "tablet":
			ok = hp["usb"]
		case strings.HasPrefix(opt, "usb"):
			ok = vm.usbHotpluggable(hp)
		case opt == "vcpus":
			ok = hp["cpu"]
		case opt == "memory":
			ok = hp["memory"]
		case opt == "balloon":
			oldOn := vm.Config["balloon"] != "0"
			newOn := val != "0"
			ok = oldOn == newOn
		case opt == "agent":
			ok = agentHotpluggable(vm.Config["agent"], val)
		case strings.HasPrefix(opt, "net"):
			ok = netHotpluggable(vm.Config[opt], val, hp["network"])
		case opt == "efidisk0" || opt == "tpmstate0":
		case isDriveKey(opt):
			var err string
			ok, err = s.diskHotplugLocked(vm, opt, val, hp["disk"])
			if err != "" {
				errs[opt] = "hotplug problem - " + err
			}
		}
		if ok {
			vm.Config[opt] = val
			delete(vm.Pending, opt)
		}
	}
}

func agentHotpluggable(oldV, newV string) bool {
	if oldV == "" {
		return false
	}
	o, _ := parsePropertyString(agentFormat, "agent", oldV)
	n, _ := parsePropertyString(agentFormat, "agent", newV)
	for _, k := range []string{"enabled", "freeze-fs", "type"} {
		if fmt.Sprint(o[k]) != fmt.Sprint(n[k]) {
			return false
		}
	}
	return true
}

// netHotpluggable is vmconfig_update_net.
func netHotpluggable(oldV, newV string, hotplug bool) bool {
	if oldV == "" {
		return hotplug
	}
	o, _ := parseNet("net", oldV)
	n, _ := parseNet("net", newV)
	if o == nil || n == nil {
		return false
	}
	for _, k := range []string{"model", "macaddr", "queues", "mtu"} {
		if fmt.Sprint(o[k]) != fmt.Sprint(n[k]) {
			return hotplug
		}
	}
	if o["bridge"] == nil || n["bridge"] == nil {
		return hotplug
	}
	return true
}

// diskHotplugLocked is vmconfig_update_disk for a running VM.
func (s *Sim) diskHotplugLocked(vm *qemuVM, opt, val string, hotplug bool) (bool, string) {
	nd, _ := parseDrive(opt, val)
	bus, _ := splitIndexed(opt)
	if old, ok := vm.Config[opt]; ok {
		od, _ := parseDrive(opt, old)
		media, oldMedia := nd.str("media"), od.str("media")
		if media == "" {
			media = "disk"
		}
		if oldMedia == "" {
			oldMedia = "disk"
		}
		if media != oldMedia {
			return false, "unable to change media type"
		}
		if od.isCdrom() {
			return true, ""
		}
		if nd.file() != od.file() {
			if !hotplug {
				return false, ""
			}
			s.registerUnusedLocked(vm, od)
			return true, ""
		}
		for _, k := range coldDiskOptions {
			if nd.str(k) != od.str(k) {
				return false, ""
			}
		}
		return true, ""
	}
	if !hotplug || bus == "ide" || bus == "sata" {
		return false, ""
	}
	return true, ""
}

// deleteOrDetachLocked is vmconfig_delete_or_detach_drive: force frees
// the volume the VM owns, else it becomes unusedN.
func (s *Sim) deleteOrDetachLocked(node string, vm *qemuVM, opt string, force bool) {
	d, msg := parseDrive(opt, vm.Config[opt])
	if msg != "" {
		return
	}
	if force {
		if !d.isCdrom() {
			_ = s.freeOwnedLocked(node, vm, d.file())
		}
		return
	}
	s.registerUnusedLocked(vm, d)
}

// applyPendingLocked is vmconfig_apply_pending: everything applies.
func (s *Sim) applyPendingLocked(node string, vm *qemuVM, errs map[string]string) {
	for _, e := range append([]string(nil), vm.PendingDelete...) {
		opt := strings.TrimPrefix(e, "!")
		if _, ok := vm.Config[opt]; ok && isDriveKey(opt) {
			s.deleteOrDetachLocked(node, vm, opt, strings.HasPrefix(e, "!"))
		}
		vm.removePendingDelete(opt)
		delete(vm.Config, opt)
	}
	vm.cleanupPending()
	for _, opt := range sortedKeys(vm.Pending) {
		if old, ok := vm.Config[opt]; ok && isDriveKey(opt) {
			od, _ := parseDrive(opt, old)
			s.registerUnusedLocked(vm, od)
		}
		vm.Config[opt] = vm.Pending[opt]
		delete(vm.Pending, opt)
	}
	_ = errs
}

func unlinkVM(c *call) (any, *apiError) {
	c.params["delete"] = c.params["idlist"]
	delete(c.params, "idlist")
	return updateVM(c, true)
}

func resizeVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if c.params["skiplock"] == "1" && c.user != "root@pam" {
		return nil, paramErr1("skiplock", "Only root may use this option.")
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	disk, sizeStr, digest := c.params["disk"], c.params["size"], c.params["digest"]
	skiplock := c.params["skiplock"] == "1"
	upid := s.startTaskLocked(c, "resize", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		s.workLocked()
		if s.st.Nodes[node].VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		if digest != "" && digest != vm.digest() {
			return 0, fmt.Errorf("checksum mismatch (file change by other user?)")
		}
		if !skiplock {
			if e := vm.checkLock(); e != nil {
				return 0, fmt.Errorf("%s", e.Message)
			}
		}
		cur, ok := vm.Config[disk]
		if !ok {
			return 0, fmt.Errorf("disk '%s' does not exist", disk)
		}
		d, _ := parseDrive(disk, cur)
		if d.file() == "" {
			return 0, fmt.Errorf("disk '%s' has no associated volume", disk)
		}
		if d.isCdrom() {
			return 0, fmt.Errorf("you can't resize a cdrom")
		}
		v, verr := s.volumeLocked(node, d.file())
		if verr != nil {
			return 0, fmt.Errorf("Could not determine current size of volume '%s'", d.file()) //nolint:staticcheck // PVE's text
		}
		m := regexp.MustCompile(`^(\+)?(\d+(?:\.\d+)?)([KMGT])?$`).FindStringSubmatch(sizeStr)
		n, _ := strconv.ParseFloat(m[2], 64)
		n *= map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[3]]
		newSize := int64(n)
		if m[1] == "+" {
			newSize += v.Size
		}
		if newSize < v.Size {
			return 0, fmt.Errorf("shrinking disks is not supported")
		}
		if newSize == v.Size {
			return 0, nil
		}
		t.Log = append(t.Log, fmt.Sprintf("update VM %d: resize --disk %s --size %s", vm.VMID, disk, sizeStr))
		if err := s.resizeVolumeLocked(node, d.file(), newSize); err != nil {
			return 0, err
		}
		d["size"] = formatSize(newSize)
		vm.Config[disk] = d.print()
		s.writeVMLocked(vm)
		return 0, nil
	})
	return upid, nil
}

func moveDisk(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	store := c.params["storage"]
	if c.params["target-vmid"] != "" && store != "" {
		msg := "either set 'storage' or 'target-vmid', but not both"
		return nil, paramErr(map[string]string{"target-vmid": msg, "storage": msg})
	}
	if c.params["target-vmid"] != "" {
		return nil, errf(http.StatusNotImplemented, "pvesim: reassigning a disk to another VM is not simulated")
	}
	if store == "" {
		msg := "both 'storage' and 'target-vmid' missing, either needs to be set"
		return nil, paramErr(map[string]string{"target-vmid": msg, "storage": msg})
	}
	disk, format, digest := c.params["disk"], c.params["format"], c.params["digest"]
	del := c.params["delete"] == "1"
	check := func(vm *qemuVM) (drive, *apiError) {
		if err := vm.checkLock(); err != nil {
			return nil, err
		}
		if digest != "" && digest != vm.digest() {
			return nil, die("detected modified configuration - file changed by other user? Try again.")
		}
		cur, ok := vm.Config[disk]
		if !ok {
			return nil, die("disk '%s' does not exist", disk)
		}
		d, _ := parseDrive(disk, cur)
		if d.file() == "" {
			return nil, die("disk '%s' has no associated volume", disk)
		}
		if d.isCdrom() {
			return nil, die("you can't move a cdrom")
		}
		oldStore, _, err := splitVolid(d.file())
		if err != nil {
			return nil, die("%v", err)
		}
		oldFmt := ""
		if v, verr := s.volumeLocked(node, d.file()); verr == nil {
			oldFmt = v.Format
		}
		if oldStore == store && (format == "" || oldFmt == "" || oldFmt == format) {
			return nil, die("you can't move to the same storage with same format")
		}
		e, serr := s.storageEntryLocked(node, store)
		if serr != nil {
			return nil, die("%v", serr)
		}
		if uerr := e.checkUsable(node); uerr != nil {
			return nil, die("%v", uerr)
		}
		if !e.contentTypes()["images"] {
			return nil, paramErr1("storage", fmt.Sprintf("storage '%s' does not support vm images", store))
		}
		return d, nil
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if _, err := check(vm); err != nil {
		return nil, err
	}
	upid := s.startTaskLocked(c, "qmmove", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		s.workLocked()
		if s.st.Nodes[node].VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		d, cerr := check(vm)
		if cerr != nil {
			return 0, fmt.Errorf("%s", cerr.Message)
		}
		oldVolid := d.file()
		oldStore, _, _ := splitVolid(oldVolid)
		src, verr := s.volumeLocked(node, oldVolid)
		if verr != nil {
			return 0, fmt.Errorf("storage migration failed: %w", verr)
		}
		t.Log = append(t.Log, fmt.Sprintf("copying volume '%s' from current storage '%s' to target storage '%s'", oldVolid, oldStore, store))
		nv, aerr := s.allocVolumeLocked(node, store, vm.VMID, src.Size, format)
		if aerr != nil {
			return 0, fmt.Errorf("storage migration failed: %w", aerr)
		}
		d["file"] = nv.volid()
		d["size"] = formatSize(nv.Size)
		vm.Config[disk] = d.print()
		warnings := 0
		if !del {
			key, uerr := vm.addUnused(oldVolid)
			if uerr == nil {
				t.Log = append(t.Log, fmt.Sprintf("adding source volume '%s' as '%s' to config", oldVolid, key))
			}
		}
		s.writeVMLocked(vm)
		if del {
			t.Log = append(t.Log, fmt.Sprintf("removing source volume '%s' after successful copy", oldVolid))
			if ferr := s.freeVolumeLocked(node, oldVolid); ferr != nil {
				t.Log = append(t.Log, "WARN: "+ferr.Error())
				warnings++
			}
		}
		return warnings, nil
	})
	return upid, nil
}

// maxMemBytes, cpus and bootDiskSize are what vmstatus reports.
func (vm *qemuVM) maxMemBytes() int64 { return memoryMiBCached(vm.Config["memory"]) << 20 }

func (vm *qemuVM) cpus() int64 {
	if v, err := strconv.ParseInt(vm.Config["vcpus"], 10, 64); err == nil && v > 0 {
		return v
	}
	sockets, cores := int64(1), int64(1)
	if v, err := strconv.ParseInt(vm.Config["sockets"], 10, 64); err == nil && v > 0 {
		sockets = v
	}
	if v, err := strconv.ParseInt(vm.Config["cores"], 10, 64); err == nil && v > 0 {
		cores = v
	}
	return sockets * cores
}

func (vm *qemuVM) bootDiskSize() int64 {
	conf := vm.Config
	first := ""
	if b := conf["boot"]; b != "" {
		if m, msg := parseFixedShared("boot", bootFormat, "boot", b); msg == "" {
			if o, ok := m["order"].(string); ok {
				for _, dev := range strings.Split(o, ";") {
					if isDriveKey(dev) {
						if d, _ := parseDriveShared(dev, conf[dev]); d != nil && !d.isCdrom() {
							first = dev
							break
						}
					}
				}
			}
		}
	}
	if first == "" {
		for _, b := range driveBuses {
			for i := 0; i <= b.max && first == ""; i++ {
				k := b.bus + strconv.Itoa(i)
				if conf[k] == "" {
					continue
				}
				if d, _ := parseDriveShared(k, conf[k]); d != nil && !d.isCdrom() {
					first = k
				}
			}
		}
	}
	if first == "" {
		return 0
	}
	d, _ := parseDriveShared(first, conf[first])
	n, _ := parseDiskSize(d.str("size"))
	return n
}

func (vm *qemuVM) uptime() int64 {
	if !vm.running() || vm.StartTime == 0 {
		return 0
	}
	return max(time.Now().Unix()-vm.StartTime, 0)
}

// statusRow is the common part of list, status/current and
// /cluster/resources rows.
func (vm *qemuVM) statusRow() map[string]any {
	r := map[string]any{
		"vmid": vm.VMID, "status": vm.Status, "maxmem": vm.maxMemBytes(), "maxdisk": vm.bootDiskSizeCached(),
		"cpus": vm.cpus(), "uptime": vm.uptime(), "cpu": 0, "mem": 0, "disk": 0,
		"netin": 0, "netout": 0, "diskread": 0, "diskwrite": 0,
	}
	if n := vm.Config["name"]; n != "" {
		r["name"] = n
	} else {
		r["name"] = fmt.Sprintf("VM %d", vm.VMID)
	}
	if vm.running() {
		r["pid"] = vm.PID
		r["mem"] = vm.maxMemBytes() / 4
	}
	if l := vm.Config["lock"]; l != "" {
		r["lock"] = l
	}
	if tg := vm.Config["tags"]; tg != "" {
		r["tags"] = tg
	}
	if vm.Config["template"] == "1" {
		r["template"] = 1
	}
	return r
}

func listVMs(c *call) (any, *apiError) {
	ns := c.node()
	out := []map[string]any{}
	ids := make([]int, 0, len(ns.VMs))
	for id := range ns.VMs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		vm := ns.VMs[id]
		vm.normalize()
		r := vm.statusRow()
		r["serial"] = 0
		if vm.Config["serial0"] != "" {
			r["serial"] = 1
		}
		out = append(out, r)
	}
	return out, nil
}

func vmStatusCurrent(c *call) (any, *apiError) {
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	r := vm.statusRow()
	r["qmpstatus"] = vm.Status
	r["clipboard"] = nil
	ha := map[string]any{"managed": 0}
	if st := c.s.haStateLocked(c.params["node"], vm.VMID); c.s.haManagedLocked(c.params["node"], vm.VMID) || st != "" {
		ha = map[string]any{"managed": 1, "state": st}
	}
	r["ha"] = ha
	if a := vm.Config["agent"]; a != "" {
		if m, msg := parsePropertyString(agentFormat, "agent", a); msg == "" && fmt.Sprint(m["enabled"]) == "1" {
			r["agent"] = 1
		}
	}
	if vm.running() {
		r["running-machine"] = "pc-i440fx-" + strings.Join(strings.Split(qemuVersion(c.s.rel), ".")[:2], ".") + "+pve0"
		r["running-qemu"] = qemuVersion(c.s.rel)
	}
	delete(r, "template")
	return r, nil
}

// powerOnLocked starts the VM, applying pending changes first as vm_start
// does.
func (s *Sim) powerOnLocked(node string, vm *qemuVM) {
	if len(vm.Pending) > 0 || len(vm.PendingDelete) > 0 {
		s.applyPendingLocked(node, vm, map[string]string{})
	}
	vm.Status = "running"
	vm.StartTime = time.Now().Unix()
	vm.PID = int(s.st.NextPID)
	s.st.NextPID++
	s.writeVMLocked(vm)
}

func (s *Sim) powerOffLocked(vm *qemuVM) {
	vm.Status = "stopped"
	vm.StartTime = 0
	vm.PID = 0
	s.saveLocked()
}

// haRequestTask is the hastart/hastop/hamigrate worker for HA-managed VMs.
func (s *Sim) haRequestTask(c *call, typ string, vm *qemuVM, request, line string) string {
	node := c.params["node"]
	return s.startTaskLocked(c, typ, strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		t.Log = append(t.Log, line)
		return 0, s.haGuestRequestLocked(node, vm.VMID, request)
	})
}

func startVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if c.params["skiplock"] == "1" && c.user != "root@pam" {
		return nil, paramErr1("skiplock", "Only root may use this option.")
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if s.haManagedLocked(node, vm.VMID) {
		return s.haRequestTask(c, "hastart", vm, "started", fmt.Sprintf("Requesting HA start for VM %d", vm.VMID)), nil
	}
	skiplock := c.params["skiplock"] == "1"
	upid := s.startTaskLocked(c, "qmstart", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		if s.st.Nodes[node].VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		if vm.Config["template"] == "1" {
			return 0, fmt.Errorf("you can't start a vm if it's a template")
		}
		if !skiplock && vm.Config["lock"] != "suspended" {
			if e := vm.checkLock(); e != nil {
				return 0, fmt.Errorf("%s", e.Message)
			}
		}
		if vm.running() {
			return 0, fmt.Errorf("VM %d already running", vm.VMID)
		}
		s.powerOnLocked(node, vm)
		return 0, nil
	})
	return upid, nil
}

func stopVM(c *call, typ string) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if c.params["skiplock"] == "1" && c.user != "root@pam" {
		return nil, paramErr1("skiplock", "Only root may use this option.")
	}
	if c.params["keepActive"] == "1" && c.user != "root@pam" {
		return nil, paramErr1("keepActive", "Only root may use this option.")
	}
	if c.params["migratedfrom"] != "" && c.user != "root@pam" {
		return nil, paramErr1("migratedfrom", "Only root may use this option.")
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if s.haManagedLocked(node, vm.VMID) {
		if c.params["overrule-shutdown"] == "1" {
			return nil, paramErr1("overrule-shutdown", "Not applicable for HA resources.")
		}
		return s.haRequestTask(c, "hastop", vm, "stopped", fmt.Sprintf("Requesting HA stop for VM %d", vm.VMID)), nil
	}
	skiplock := c.params["skiplock"] == "1"
	upid := s.startTaskLocked(c, typ, strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		if !skiplock {
			if e := vm.checkLock(); e != nil {
				return 0, fmt.Errorf("%s", e.Message)
			}
		}
		if vm.running() {
			s.powerOffLocked(vm)
		}
		return 0, nil
	})
	return upid, nil
}

func rebootVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if !vm.running() {
		return nil, die("VM %d not running", vm.VMID)
	}
	upid := s.startTaskLocked(c, "qmreboot", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		if !vm.running() {
			return 0, nil
		}
		// qmeventd starts the VM again after the shutdown: a fresh
		// start, so pending changes apply.
		s.powerOffLocked(vm)
		s.powerOnLocked(node, vm)
		return 0, nil
	})
	return upid, nil
}

func destroyVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if c.params["skiplock"] == "1" && c.user != "root@pam" {
		return nil, paramErr1("skiplock", "Only root may use this option.")
	}
	purge := c.params["purge"] == "1"
	unreferenced := c.params["destroy-unreferenced-disks"] == "1"
	skiplock := c.params["skiplock"] == "1"
	early := func(vm *qemuVM) error {
		if vm.Config["protection"] == "1" {
			return fmt.Errorf("can't remove VM %d - protection mode enabled", vm.VMID)
		}
		if !purge && s.haConfiguredLocked(node, vm.VMID) {
			return fmt.Errorf("unable to remove VM %d - used in HA resources and purge parameter not set.", vm.VMID) //nolint:staticcheck // PVE's text
		}
		if vm.running() {
			return fmt.Errorf("VM %d is running - destroy failed", vm.VMID)
		}
		return nil
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if e := early(vm); e != nil {
		return nil, die("%s", e.Error())
	}
	upid := s.startTaskLocked(c, "qmdestroy", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		ns := s.st.Nodes[node]
		if ns.VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		if e := early(vm); e != nil {
			return 0, e
		}
		if !skiplock {
			if e := vm.checkLock(); e != nil {
				return 0, fmt.Errorf("%s", e.Message)
			}
		}
		vm.setLock("destroyed")
		warnings := 0
		seen := map[string]bool{}
		for _, conf := range []map[string]string{vm.Config, vm.Pending} {
			for _, vd := range volumeDrives(conf) {
				d := vd.d
				if seen[d.file()] {
					continue
				}
				seen[d.file()] = true
				if volumeOwner(d.file()) != vm.VMID {
					continue
				}
				if _, verr := s.volumeLocked(node, d.file()); verr != nil {
					continue
				}
				if ferr := s.freeVolumeLocked(node, d.file()); ferr != nil {
					t.Log = append(t.Log, "WARN: "+ferr.Error())
					warnings++
				}
			}
		}
		if unreferenced {
			order, ids := s.parsedStorageCfg(node)
			for _, id := range order {
				if e := ids[id]; e.Opts["disable"] == "1" || !e.onNode(node) {
					continue
				}
				for _, v := range s.storageVolumesLocked(node, id, vm.VMID) {
					t.Log = append(t.Log, fmt.Sprintf("Removed unreferenced volume '%s'", v.volid()))
					_ = s.freeVolumeLocked(node, v.volid())
				}
			}
		}
		if purge {
			t.Log = append(t.Log, fmt.Sprintf("purging VM %d from related configurations..", vm.VMID))
			if s.haConfiguredLocked(node, vm.VMID) {
				s.haPurgeGuestLocked(node, vm.VMID)
				t.Log = append(t.Log, fmt.Sprintf("NOTE: removed VM %d from HA resource configuration.", vm.VMID))
			}
		}
		delete(ns.VMs, vm.VMID)
		s.saveLocked()
		return warnings, nil
	})
	return upid, nil
}

func migrateVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	target := c.params["target"]
	if target == node {
		return nil, paramErr1("target", "target is local node.")
	}
	if !contains(s.visibleNodeNames(c.listener), target) || s.st.Nodes[target] == nil ||
		s.st.Nodes[target].Domain != s.st.Nodes[node].Domain {
		return nil, die("no such cluster node '%s'", target)
	}
	for _, k := range []string{"force", "migration_type", "migration_network"} {
		if c.params[k] != "" && c.user != "root@pam" {
			return nil, paramErr1(k, "Only root may use this option.")
		}
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if e := vm.checkLock(); e != nil {
		return nil, e
	}
	online := c.params["online"] == "1"
	withLocal := c.params["with-local-disks"] == "1"
	warnOffline := false
	if vm.running() {
		if !online {
			return nil, die("can't migrate running VM without --online")
		}
	} else if online {
		warnOffline = true
		online = false
	}
	// check_storage_availability: every storage the VM uses must exist on
	// the target.
	for _, vd := range volumeDrives(vm.Config) {
		store, _, serr := splitVolid(vd.d.file())
		if serr != nil {
			continue
		}
		e, eerr := s.storageEntryLocked(node, store)
		if eerr != nil {
			return nil, die("%v", eerr)
		}
		if e.Opts["disable"] == "1" || !e.onNode(target) {
			return nil, die("storage '%s' is not available on node '%s'", store, target)
		}
	}
	if s.haManagedLocked(node, vm.VMID) {
		return s.haRequestTask(c, "hamigrate", vm, "migrate:"+target, fmt.Sprintf("Requesting HA migration for VM %d to node %s", vm.VMID, target)), nil
	}
	upid := s.startTaskLocked(c, "qmigrate", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		warnings := 0
		if warnOffline {
			t.Log = append(t.Log, "WARN: VM isn't running. Doing offline migration instead.")
			warnings++
		}
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		if e := vm.checkLock(); e != nil {
			release()
			return 0, fmt.Errorf("%s", e.Message)
		}
		vm.setLock("migrate")
		s.writeVMLocked(vm)
		release()
		t.Log = append(t.Log, fmt.Sprintf("starting migration of VM %d to node '%s'", vm.VMID, target))
		// Local volumes: live migration needs with-local-disks; offline
		// ones are copied to the same storage on the target.
		var local []*simVolume
		var problems []string
		for _, vd := range volumeDrives(vm.Config) {
			store, _, serr := splitVolid(vd.d.file())
			if serr != nil {
				continue
			}
			e, eerr := s.storageEntryLocked(node, store)
			if eerr != nil || e.shared() {
				continue
			}
			v, verr := s.volumeLocked(node, vd.d.file())
			if verr != nil {
				continue
			}
			if online && isDriveKey(vd.key) && !withLocal {
				problems = append(problems, fmt.Sprintf("can't migrate local disk '%s': can't live migrate attached local disks without with-local-disks option", vd.d.file()))
			}
			local = append(local, v)
		}
		if len(problems) > 0 {
			t.Log = append(t.Log, problems...)
			vm.setLock("")
			s.writeVMLocked(vm)
			return 0, fmt.Errorf("migration aborted (duration 00:00:00): can't migrate VM - check log")
		}
		s.workLocked()
		ns, ts := s.st.Nodes[node], s.st.Nodes[target]
		if ns.VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		for _, v := range local {
			e, _ := s.storageEntryLocked(node, v.Storage) // found above
			delete(s.volumesLocked(node, e), v.volid())
			s.volumesLocked(target, e)[v.volid()] = v
			t.Log = append(t.Log, fmt.Sprintf("copying local disk '%s'", v.volid()))
		}
		if ts.VMs == nil {
			ts.VMs = map[int]*qemuVM{}
		}
		delete(ns.VMs, vm.VMID)
		ts.VMs[vm.VMID] = vm
		vm.setLock("")
		s.writeVMLocked(vm)
		t.Log = append(t.Log, fmt.Sprintf("migration finished successfully (duration 00:00:%02d)", int(2*s.opts.TaskDuration/time.Second)))
		return warnings, nil
	})
	return upid, nil
}

func nextID(c *call) (any, *apiError) {
	s := c.s
	if v := c.params["vmid"]; v != "" {
		id, _ := strconv.Atoi(v)
		if n, _ := s.guestNodeLocked(c.listener, id); n != "" {
			return nil, paramErr1("vmid", fmt.Sprintf("VM %d already exists", id))
		}
		// PVE returns the parameter as it came: a string.
		return v, nil
	}
	lower, upper := 100, 1000*1000
	if dc := s.st.Domains[s.st.Nodes[c.listener].Domain].Datacenter; dc != nil {
		if ni := dc.Values["next-id"]; ni != "" {
			for _, kv := range strings.Split(ni, ",") {
				k, v, _ := strings.Cut(kv, "=")
				n, err := strconv.Atoi(v)
				if err != nil {
					continue
				}
				switch k {
				case "lower":
					lower = n
				case "upper":
					upper = n
				}
			}
		}
	}
	used := map[int]bool{}
	for _, id := range s.guestIDsLocked(c.listener) {
		used[id] = true
	}
	for i := lower; i < upper; i++ {
		if !used[i] {
			return strconv.Itoa(i), nil // PVE's answer is a JSON string ("101")
		}
	}
	return nil, die("unable to get any free VMID in range [%d, %d]", lower, upper)
}

// vmResourceRows are /cluster/resources' type=vm rows of the listener's
// trust domain, with `hastate` when HA manages the VM.
func vmResourceRows(c *call) []map[string]any {
	s := c.s
	var out []map[string]any
	for _, id := range s.guestIDsLocked(c.listener) {
		node, vm := s.guestNodeLocked(c.listener, id)
		if vm == nil {
			continue
		}
		vm.normalize()
		r := vm.statusRow()
		r["id"] = fmt.Sprintf("qemu/%d", id)
		r["type"] = "qemu"
		r["node"] = node
		r["maxcpu"] = r["cpus"]
		delete(r, "cpus")
		if _, ok := r["template"]; !ok {
			r["template"] = 0
		}
		if st := s.haStateLocked(node, id); st != "" {
			r["hastate"] = st
		}
		delete(r, "pid")
		out = append(out, r)
	}
	return out
}
