package pvesim

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
)

// GET /nodes/{node}/storage/{storage}/content/{volume} after pve-storage
// PVE/API2/Storage/Content.pm info: the volume id from storage and volume
// ($real_volume_id), parse_volname through check_volume_access, then the
// plugin's path and volume_size_info. A volume that is not there fails in
// volume_size_info, in the words of the tool the plugin runs. Images carry
// no notes or protected flag (only backups do), so neither is returned.

func registerStorageVolumeInfo(t *routeTable) {
	st := pFmt("pve-storage-id")
	t.add("GET", "/nodes/{node}/storage/{storage}/content/{volume}", &method{params: schema{
		"node": nodeParam(), "storage": st, "volume": pStr().req(),
	}, handler: volumeInfo})
	t.add("DELETE", "/nodes/{node}/storage/{storage}/content/{volume}", &method{params: schema{
		"node": nodeParam(), "storage": st, "volume": pStr().req(), "delay": pInt(i64(1), i64(30)),
	}, handler: deleteVolume})
}

// realVolumeID is Content.pm's $real_volume_id.
func realVolumeID(storeID, volume string) (string, string, *apiError) {
	if strings.Contains(volume, ":") {
		sid, _, err := splitVolid(volume)
		if err != nil {
			return "", "", paramErr1("volume", err.Error()+"\n")
		}
		if storeID != "" && sid != storeID {
			return "", "", paramErr1("volume", fmt.Sprintf("storage ID mismatch (%s != %s)\n", sid, storeID))
		}
		return volume, sid, nil
	}
	if storeID == "" {
		return "", "", paramErr1("volume", "no storage specified - incomplete volume ID")
	}
	return storeID + ":" + volume, storeID, nil
}

// volnameRE is what each plugin's parse_volname accepts for guest images.
var volnameRE = map[string]*regexp.Regexp{
	"dir":     regexp.MustCompile(`^(\d+)/(\S+)\.(raw|qcow2|vmdk|subvol)$`),
	"lvm":     regexp.MustCompile(`^vm-(\d+)-\S+$`),
	"lvmthin": regexp.MustCompile(`^(?:vm|base)-(\d+)-\S+$`),
	"zfspool": regexp.MustCompile(`^(?:(?:base|basevol)-\d+-\S+/)?(?:base|basevol|vm|subvol)-(\d+)-\S+$`),
	"rbd":     regexp.MustCompile(`^(?:base-\d+-\S+/)?(?:base)?(?:vm)?-(\d+)-\S+$`),
}

// isoVolnameRE is Plugin.pm parse_volname's ISO image.
var isoVolnameRE = regexp.MustCompile(`(?i)^iso/[^/]+\.(?:iso|img)$`)

// volnameKind is how a plugin names itself in its parse error.
var volnameKind = map[string]string{"dir": "directory", "lvm": "lvm", "lvmthin": "lvm", "zfspool": "zfs", "rbd": "rbd"}

// fileStorage is whether a storage keeps images as files under a path.
func fileStorage(typ string) bool {
	switch typ {
	case "dir", "nfs", "cifs", "cephfs", "glusterfs":
		return true
	}
	return false
}

// volumePath is the plugin's path() of an image.
func (s *Sim) volumePath(node string, e *storageEntry, name string) string {
	switch {
	case fileStorage(e.Type) && strings.HasPrefix(name, "iso/"):
		return s.isoDir(e) + "/" + strings.TrimPrefix(name, "iso/")
	case fileStorage(e.Type):
		return cmp.Or(e.Opts["path"], "/mnt/pve/"+e.ID) + "/images/" + name
	case e.Type == "lvm" || e.Type == "lvmthin":
		return "/dev/" + e.Opts["vgname"] + "/" + name
	case e.Type == "zfspool":
		return "/dev/zvol/" + e.Opts["pool"] + "/" + name
	case e.Type == "rbd":
		pool := cmp.Or(e.Opts["pool"], "rbd")
		if e.Opts["krbd"] == "1" {
			fsid := ""
			if cs := s.st.Domains[s.st.Nodes[node].Domain].Ceph; cs != nil && e.Opts["monhost"] == "" {
				fsid = cs.FSID
			}
			return "/dev/rbd-pve/" + fsid + "/" + pool + "/" + name
		}
		if e.Opts["monhost"] == "" {
			return "rbd:" + pool + "/" + name + ":conf=/etc/pve/ceph.conf"
		}
		hosts := strings.Join(splitList(e.Opts["monhost"]), ";")
		// External clusters get their own ceph.conf (CephConfig.pm
		// ceph_connect_option); the keyring is the one given at creation.
		return "rbd:" + pool + "/" + name + ":conf=/etc/pve/priv/ceph/" + e.ID + ".conf:mon_host=" + strings.ReplaceAll(hosts, ":", `\:`) +
			":auth_supported=cephx:id=" + cmp.Or(e.Opts["username"], "admin") + ":keyring=/etc/pve/priv/ceph/" + e.ID + ".keyring"
	}
	return ""
}

// imageVolume is the call's volume as Content.pm resolves it: its volid,
// storage, name and the VM id parse_volname says owns it ("" if none).
func (c *call) imageVolume() (volid string, e *storageEntry, name, owner string, aerr *apiError) {
	volid, storeID, aerr := realVolumeID(c.params["storage"], c.params["volume"])
	if aerr != nil {
		return "", nil, "", "", aerr
	}
	e, err := c.s.storageEntryLocked(c.params["node"], storeID)
	if err != nil {
		return "", nil, "", "", die("%s\n", err)
	}
	_, name, _ = splitVolid(volid)
	if fileStorage(e.Type) && isoVolnameRE.MatchString(name) {
		return volid, e, name, "", nil
	}
	re := volnameRE[e.Type]
	if fileStorage(e.Type) {
		re = volnameRE["dir"]
	}
	if re != nil {
		m := re.FindStringSubmatch(name)
		if m == nil {
			kind := volnameKind[e.Type]
			if kind == "" {
				kind = "directory"
			}
			return "", nil, "", "", die("unable to parse %s volume name '%s'\n", kind, name)
		}
		owner = m[1]
	}
	return volid, e, name, owner, nil
}

// deleteVolume is Content.pm delete: an imgdel worker (ID
// "<owner>@<storage>") that runs vdisk_free. pve-storage checks no VM
// config, so it frees a disk a VM still uses just the same.
func deleteVolume(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	// Not simulated: waiting in the request for the worker.
	if c.params["delay"] != "" {
		return nil, die("pvesim does not simulate delay on DELETE .../content/{volume}; poll the task")
	}
	volid, e, name, owner, aerr := c.imageVolume()
	if aerr != nil {
		return nil, aerr
	}
	id := e.ID
	if owner != "" {
		id = owner + "@" + id
	}
	return s.startTaskLocked(c, "imgdel", id, func(t *task) (int, error) {
		if strings.HasPrefix(name, "iso/") && s.volumesLocked(node, e)[volid] == nil {
			// Plugin.pm free_image only warns about a missing file.
			t.Log = append(t.Log, fmt.Sprintf("WARN: disk image '%s' does not exist", s.volumePath(node, e, name)), fmt.Sprintf("Removed volume '%s'", volid))
			return 1, nil
		}
		if err := s.freeVolumeLocked(node, volid); err != nil {
			return 0, err
		}
		t.Log = append(t.Log, fmt.Sprintf("Removed volume '%s'", volid))
		return 0, nil
	}), nil
}

func volumeInfo(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	volid, e, name, _, aerr := c.imageVolume()
	if aerr != nil {
		return nil, aerr
	}
	path := s.volumePath(node, e, name)
	v := s.volumesLocked(node, e)[volid]
	if v == nil {
		switch {
		case fileStorage(e.Type):
			// file_size_info warns "failed to stat" and returns nothing.
			return nil, die("volume_size_info on '%s' failed - no format\n", volid)
		case e.Type == "lvm" || e.Type == "lvmthin":
			return nil, die("can't get size of '%s':   Failed to find logical volume \"%s/%s\"\n", path, e.Opts["vgname"], name)
		case e.Type == "zfspool":
			return nil, die("zfs error: cannot open '%s/%s': dataset does not exist\n", e.Opts["pool"], name)
		case e.Type == "rbd":
			return nil, die("rbd error: rbd: error opening image %s: (2) No such file or directory\n", name)
		}
		return nil, die("volume_size_info on '%s' failed - no format\n", volid)
	}
	// lvs reports no usage; the simulator models no allocation elsewhere.
	return map[string]any{"path": path, "size": v.Size, "used": 0, "format": cmp.Or(v.Format, "raw")}, nil
}
