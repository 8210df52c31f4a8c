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
			if _, name, _ := splitVolid(file); name == "cloudinit" {
				// A cloud-init drive to allocate: not simulated, kept.
				out[k] = d.print()
				continue
			}
			v, err := s.driveVolumeLocked(node, file)
			if err != nil {
				return out, allocated, err
			}
			d["size"] = formatSize(v.Size)
			out[k] = d.print()
		}
	}
	return out, allocated, nil
}

// checkDriveParamsLocked is the checks create_vm and update_vm_api make
// of the drive params before they fork: $check_storage_access and
// $check_drive_param, create in that order, update the other way round.
// The drive strings come out normalised.
func (s *Sim) checkDriveParamsLocked(node string, params map[string]string, defaultStorage string, create bool) *apiError {
	if create {
		if perr := s.checkStorageAccessLocked(node, params, defaultStorage); perr != nil {
			return perr
		}
		return s.checkDriveParamLocked(node, params)
	}
	if perr := s.checkDriveParamLocked(node, params); perr != nil {
		return perr
	}
	return s.checkStorageAccessLocked(node, params, defaultStorage)
}

// checkDriveParamLocked is $check_drive_param: each drive parsed,
// cleanup_drive_path's media=cdrom for none and cdrom, and an ISO image
// only as a CD (parse_volname of a volume that is not to be allocated).
func (s *Sim) checkDriveParamLocked(node string, params map[string]string) *apiError {
	for _, k := range sortedKeys(params) {
		if !isDriveKey(k) {
			continue
		}
		d, msg := parseDrive(k, params[k])
		if msg != "" {
			return paramErr1(k, "unable to parse drive options")
		}
		file := d.file()
		if (file == "cdrom" || file == "none") && d.str("media") == "" {
			d["media"] = "cdrom"
		}
		// parse_drive refuses a CD drive on VirtIO, or with a snapshot
		// or format option.
		if bus, _ := splitIndexed(k); d.str("media") == "cdrom" && (bus == "virtio" || perlTrue(d.str("snapshot")) || d.str("format") != "") {
			return paramErr1(k, "unable to parse drive options")
		}
		if store, name, err := splitVolid(file); err == nil && !strings.HasPrefix(file, "/") && !newDiskRE.MatchString(file) && name != "cloudinit" {
			vtype, verr := s.driveVolnameLocked(node, store, name)
			if verr != nil {
				return die("%s", verr.Error())
			}
			if vtype == "iso" && d.str("media") != "cdrom" {
				return paramErr1(k, "explicit 'media=cdrom' is required for iso images")
			}
		}
		params[k] = d.print()
	}
	return nil
}

// checkStorageAccessLocked is $check_storage_access: a storage to
// allocate on must take images, an existing volume must be an image or an
// ISO (check_volume_access, then its content type), and unusedN must
// name a volume.
func (s *Sim) checkStorageAccessLocked(node string, params map[string]string, defaultStorage string) *apiError {
	for _, k := range sortedKeys(params) {
		if !isDriveKey(k) {
			continue
		}
		d, msg := parseDrive(k, params[k])
		if msg != "" {
			return paramErr1(k, "unable to parse drive options")
		}
		file := d.file()
		store, name, verr := splitVolid(file)
		isCdrom := d.str("media") == "cdrom"
		switch {
		case file == "" || file == "none" || file == "cloudinit" || (verr == nil && name == "cloudinit"):
		case isCdrom && file == "cdrom":
			// Sys.Console on / (root@pam and the sim's tokens have it).
		case !isCdrom && newDiskRE.MatchString(file):
			store = newDiskRE.FindStringSubmatch(file)[2]
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
		case verr == nil && !strings.HasPrefix(file, "/"):
			vtype, err := s.driveVolnameLocked(node, store, name)
			if err != nil {
				return die("%s", err.Error())
			}
			if vtype != "images" && vtype != "iso" {
				return paramErr1(k, "content type needs to be 'images' or 'iso'")
			}
		}
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

// driveVolnameLocked is PVE::Storage::parse_volname of a drive's volume
// as qemu-server's checks call it: the storage's section (storage_config)
// and its plugin's parse_volname, giving the volume's type or the
// plugin's error.
func (s *Sim) driveVolnameLocked(node, store, name string) (string, error) {
	e, err := s.storageEntryLocked(node, store)
	if err != nil {
		return "", err
	}
	if fileStorage(e.Type) {
		return dirVolnameType(name)
	}
	re := volnameRE[e.Type]
	if re == nil {
		return "images", nil // a plugin pvesim does not model: not checked
	}
	if !re.MatchString(name) {
		return "", fmt.Errorf("unable to parse %s volume name '%s'", volnameKind[e.Type], name)
	}
	return "images", nil
}

// Plugin.pm parse_volname and parse_name_dir, the directory-like
// storages' volume names by type (Storage.pm's *_EXT_RE_* suffixes).
var (
	dirImageRE      = regexp.MustCompile(`^(\d+)/(\S+)$`)
	dirLinkedRE     = regexp.MustCompile(`^(\d+)/(\S+)/(\d+)/(\S+)$`)
	dirVMNameRE     = regexp.MustCompile(`^((vm-|base-|subvol-)(\d+)-[^/\s]+\.(raw|qcow2|vmdk|subvol))$`)
	dirSnapNameRE   = regexp.MustCompile(`^snap-.*\.qcow2$`)
	dirOtherNameRE  = regexp.MustCompile(`^((base-)?[^/\s]+\.(raw|qcow2|vmdk|subvol))$`)
	dirISORE        = regexp.MustCompile(`^iso/[^/]+\.(?i:iso|img)$`)
	dirVztmplRE     = regexp.MustCompile(`^vztmpl/[^/]+\.(?i:tar|tar\.(?:gz|xz|zst|bz2))$`)
	dirBackupRE     = regexp.MustCompile(`^backup/[^/]+\.(?:tgz|(?:tar|vma)(?:\.(?:gz|lzo|zst|bz2))?)$`)
	dirSnippetsRE   = regexp.MustCompile(`^snippets/[^/]+$`)
	dirImportOVARE  = regexp.MustCompile(`^import/[ a-zA-Z0-9\-.+=_]+\.ova/[ a-zA-Z0-9\-.+=_]+\.(?:qcow2|raw|vmdk)$`)
	dirImportFileRE = regexp.MustCompile(`^import/[ a-zA-Z0-9\-.+=_]+\.(?:ova|ovf|qcow2|raw|vmdk)$`)
)

// dirVolnameType is Plugin.pm parse_volname's volume type.
func dirVolnameType(name string) (string, error) {
	nameDir := func(n string) error {
		switch {
		case dirVMNameRE.MatchString(n):
		case dirSnapNameRE.MatchString(n):
			return fmt.Errorf("'%s' is a snapshot filename, not a volume!", n) //nolint:staticcheck // PVE's text
		case dirOtherNameRE.MatchString(n):
		default:
			return fmt.Errorf("unable to parse volume filename '%s'", n)
		}
		return nil
	}
	if m := dirLinkedRE.FindStringSubmatch(name); m != nil {
		if err := nameDir(m[2]); err != nil {
			return "", err
		}
		return "images", nameDir(m[4])
	}
	if m := dirImageRE.FindStringSubmatch(name); m != nil {
		return "images", nameDir(m[2])
	}
	for _, t := range []struct {
		re    *regexp.Regexp
		vtype string
	}{{dirISORE, "iso"}, {dirVztmplRE, "vztmpl"}, {dirBackupRE, "backup"}, {dirSnippetsRE, "snippets"}, {dirImportOVARE, "import"}, {dirImportFileRE, "import"}} {
		if t.re.MatchString(name) {
			return t.vtype, nil
		}
	}
	return "", fmt.Errorf("unable to parse directory volume name '%s'", name)
}

// driveVolumeLocked is create_disks for an existing volume:
// check_volume_access's parse_volname, activate_volumes (Plugin.pm's
// activate_volume: the file of a directory-like storage must be there)
// and volume_size_info (no size: "does not exist"). Its own content-type
// die ("cannot use volume $volid - content type needs to be 'images' or
// 'iso'") is not reached through the API: $check_storage_access refused
// such a volume before the fork (checkStorageAccessLocked).
func (s *Sim) driveVolumeLocked(node, volid string) (*simVolume, error) {
	store, name, err := splitVolid(volid)
	if err != nil {
		return nil, err
	}
	if _, err := s.driveVolnameLocked(node, store, name); err != nil {
		return nil, err
	}
	e, _ := s.storageEntryLocked(node, store) // found by driveVolnameLocked
	if v := s.volumesLocked(node, e)[volid]; v != nil {
		return v, nil
	}
	if fileStorage(e.Type) {
		return nil, fmt.Errorf("volume '%s' does not exist", volid)
	}
	return nil, fmt.Errorf("volume %s does not exist", volid)
}

// cloudinitVolRE is Drive.pm drive_is_cloudinit's volume name.
var cloudinitVolRE = regexp.MustCompile(`[:/](?:vm-\d+-)?cloudinit(?:\.(?:raw|qcow|qcow2|qed|vmdk|cloop))?$`)

// driveIsCdromNotCloudinit is drive_is_cdrom($drive, 1): media=cdrom,
// cloud-init drives excluded.
func driveIsCdromNotCloudinit(d drive) bool {
	return d != nil && d.str("media") == "cdrom" && !cloudinitVolRE.MatchString(d.file())
}

// perlTrue is Perl's truth of a string value ("" and "0" are false).
func perlTrue(v string) bool { return v != "" && v != "0" }
