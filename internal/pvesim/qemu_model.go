package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// qemuVM is one VM as qemu-server keeps it: /etc/pve/qemu-server/<vmid>.conf
// on its node (Config, plus the [PENDING] section) and the running state.
type qemuVM struct {
	VMID int `json:"vmid"`
	// Config is the current config by key (scsi0, cores, ...), values as
	// the file writes them.
	Config map[string]string `json:"config"`
	// Pending are changes waiting for a restart; PendingDelete the keys
	// to be removed then.
	Pending       map[string]string `json:"pending,omitempty"`
	PendingDelete []string          `json:"pending_delete,omitempty"`
	// Status is "running" or "stopped".
	Status string `json:"status"`
	// Lock is the config's lock property (migrate, backup, ...), "" when
	// unlocked. (qemu.go keeps it in Config["lock"] and mirrors it here.)
	Lock string `json:"lock,omitempty"`
	// StartTime is when the VM was started (unix seconds), PID its
	// simulated QEMU process.
	StartTime int64 `json:"start_time,omitempty"`
	PID       int   `json:"pid,omitempty"`

	// flock is /var/lock/qemu-server/lock-<vmid>.conf (qemu_lock.go).
	flock *vmFlock
}

// guestNodeLocked is the node whose config holds vmid, as
// PVE::Cluster::get_vmlist sees it across the node's trust domain.
func (s *Sim) guestNodeLocked(fromNode string, vmid int) (string, *qemuVM) {
	dom := s.st.Nodes[fromNode].Domain
	for _, name := range s.st.NodeOrder {
		n := s.st.Nodes[name]
		if n.Domain != dom {
			continue
		}
		if vm := n.VMs[vmid]; vm != nil {
			return name, vm
		}
	}
	return "", nil
}

// guestIDsLocked lists the VM ids of the node's trust domain, sorted.
func (s *Sim) guestIDsLocked(fromNode string) []int {
	dom := s.st.Nodes[fromNode].Domain
	var ids []int
	for _, name := range s.st.NodeOrder {
		n := s.st.Nodes[name]
		if n.Domain != dom {
			continue
		}
		for id := range n.VMs {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

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
// disk, the first CD drive (resolve_first_disk, in valid_drive_names'
// order: ide, scsi, virtio, sata; a CD is media=cdrom) and the first NIC.
func defaultBoot(conf map[string]string) string {
	var disk, cd string
	for _, bus := range []string{"ide", "scsi", "virtio", "sata"} {
		for _, b := range driveBuses {
			for i := 0; b.bus == bus && i <= b.max; i++ {
				k := b.bus + strconv.Itoa(i)
				v, ok := conf[k]
				if !ok {
					continue
				}
				d, _ := parseDrive(k, v)
				isCD := d != nil && d.str("media") == "cdrom"
				if isCD && cd == "" {
					cd = k
				} else if !isCD && disk == "" {
					disk = k
				}
			}
		}
	}
	var order []string
	for _, dev := range []string{disk, cd} {
		if dev != "" {
			order = append(order, dev)
		}
	}
	for i := 0; i < 32; i++ {
		if _, ok := conf["net"+strconv.Itoa(i)]; ok {
			order = append(order, "net"+strconv.Itoa(i))
			break
		}
	}
	if len(order) == 0 {
		return ""
	}
	return "order=" + strings.Join(order, ";")
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

// maxMemBytes, cpus and bootDiskSize are what vmstatus reports.
func (vm *qemuVM) maxMemBytes() int64 { return memoryMiBCached(vm.Config["memory"]) << 20 }

// nodeCPUs is every simulated node's CPU count (the reference lab's E-2126G).
const nodeCPUs = 6

// cpus is vmstatus' cpus: sockets × cores, at most the host's CPUs, unless
// vcpus is set.
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
	return min(sockets*cores, nodeCPUs)
}

// bootDiskSize is bootdisk_size, maxdisk of the status rows: the size of
// the first boot disk that is a disk with a volume.
func (vm *qemuVM) bootDiskSize() int64 {
	conf := vm.Config
	for _, dev := range bootDisks(conf) {
		if !isDriveKey(dev) || conf[dev] == "" {
			continue
		}
		d, _ := parseDriveShared(dev, conf[dev])
		if d == nil || d.isCdrom() || d.str("file") == "" {
			continue
		}
		n, _ := parseDiskSize(d.str("size"))
		return n
	}
	return 0
}

// bootDisks is qemu-server's get_bootdisks: the drives of boot's order, or
// with a legacy (or no) boot option only bootdisk. A disk that is in
// neither is never the boot disk (maxdisk 0), whatever the bus order.
func bootDisks(conf map[string]string) []string {
	if b := conf["boot"]; b != "" {
		if m, msg := parseFixedShared("boot", bootFormat, "boot", b); msg == "" {
			if _, legacy := m["legacy"]; !legacy {
				o, _ := m["order"].(string)
				return splitList(o)
			}
		}
	}
	if bd := conf["bootdisk"]; bd != "" {
		return []string{bd}
	}
	return nil
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
