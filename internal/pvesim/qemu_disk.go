package pvesim

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// A VM's volumes: allocation by create and update, resize, move_disk and
// unlink (qemu-server PVE/API2/Qemu.pm).

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

func unlinkVM(c *call) (any, *apiError) {
	c.params["delete"] = c.params["idlist"]
	delete(c.params, "idlist")
	return updateVM(c, true)
}

func resizeVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if perr := c.rootOnlyOptions("skiplock"); perr != nil {
		return nil, perr
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
		s.workLocked(t)
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
		s.workLocked(t)
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
