package pvesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A VM's configuration: GET config and pending, POST/PUT config with hot-plug
// or [PENDING] (qemu-server PVE/API2/Qemu.pm update_vm_api, PVE/QemuServer.pm
// vmconfig_hotplug_pending and vmconfig_apply_pending).

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
	if perr := c.rootOnlyOptions("skiplock"); perr != nil {
		return nil, perr
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
	if perr := s.checkDriveParamsLocked(u.node, u.params, "", false); perr != nil {
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
		s.workLocked(t)
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
			// A new CD drive joins an explicit boot order at its end
			// ("append new CD drives to bootorder to mark them
			// bootable"), after the boot order the request may set: PVE
			// walks the params in hash order; boot sorts first here, so
			// a request setting both gets the appended order, one of the
			// orders PVE can write.
			if nd, _ := parseDrive(opt, val); len(bootOrder) > 0 && driveIsCdromNotCloudinit(nd) && !contains(bootOrder, opt) {
				bootOrder = append(bootOrder, opt)
				vm.Pending["boot"] = "order=" + strings.Join(bootOrder, ";")
				modified["boot"] = true
			}
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
