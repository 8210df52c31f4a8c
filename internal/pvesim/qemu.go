package pvesim

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

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
	create["pool"] = pFmt("pve-poolid")
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
// rootOnlyOptions is qemu-server's raise_param_exc({ k => "Only root may
// use this option." }) if $param->{k} && $authuser ne 'root@pam', for each
// k in the API's order (Perl truth: "" and "0" are false).
func (c *call) rootOnlyOptions(keys ...string) *apiError {
	if c.user == "root@pam" {
		return nil
	}
	for _, k := range keys {
		if v := c.params[k]; v != "" && v != "0" {
			return paramErr1(k, "Only root may use this option.")
		}
	}
	return nil
}

func (c *call) vm() (*qemuVM, *apiError) {
	vmid, _ := strconv.Atoi(c.params["vmid"])
	node := c.params["node"]
	if vm := c.s.st.Nodes[node].VMs[vmid]; vm != nil {
		vm.normalize()
		return vm, nil
	}
	return nil, die("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
}

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

// vmNodeLocked is the node whose VMs map holds vm.
func (s *Sim) vmNodeLocked(vm *qemuVM) string {
	for _, name := range s.st.NodeOrder {
		if s.st.Nodes[name].VMs[vm.VMID] == vm {
			return name
		}
	}
	return ""
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

func createVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	vmid, _ := strconv.Atoi(c.params["vmid"])
	pool := c.params["pool"]
	// RPCEnvironment check_pool_exist: a permission error, before the rest.
	if pool != "" && s.poolsLocked(c.listener).Pools[pool] == nil {
		return nil, errf(http.StatusForbidden, "Permission check failed (pool '%s' does not exist)", pool)
	}
	params := map[string]string{}
	for k, v := range c.params {
		switch k {
		case "node", "vmid", "start", "storage", "bwlimit", "import-working-storage", "unique", "force", "live-restore", "pool":
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
	if perr := s.checkDriveParamsLocked(node, params, storage, true); perr != nil {
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
		s.workLocked(t)
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
		if t.failsLate {
			// add_vm_to_pool or create_ifaces_ipams_ips died after
			// write_config: createfn's caller unlinks the config, but the
			// disks are freed only on errors up to write_config, so the
			// volumes stay allocated and belong to no VM. No autostart.
			delete(ns.VMs, vmid)
			s.saveLocked()
			return 0, nil
		}
		if start {
			t.Log = append(t.Log, "Execute autostart")
			s.powerOnLocked(node, vm)
		}
		return 0, nil
	})
	if pool != "" {
		s.addToPoolWhenCreatedLocked(c.listener, pool, node, vmid, upid)
	}
	// A create worker that dies inside createfn unlinks the config
	// (qemu-server API2/Qemu.pm create_vm), so a stopped or failed create
	// leaves no VM.
	s.setTaskUndoLocked(ns, upid, func() {
		if ns.VMs[vmid] == vm {
			delete(ns.VMs, vmid)
		}
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

func destroyVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if perr := c.rootOnlyOptions("skiplock"); perr != nil {
		return nil, perr
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
