package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Storage after pve-storage (PVE/Storage.pm, PVE/Storage/*Plugin.pm):
// /etc/pve/storage.cfg is cluster-wide, so it lives in the trust domain
// like ceph.conf and follows a node into a cluster when it joins. Volumes
// (guest disk images) live on the storage: node-local storages keep them
// per node, shared ones (rbd, nfs, drbd, ...) once for the whole domain.
// RBD volumes of a pveceph-managed storage are also images of the Ceph
// pool, so destroying the pool sees them.

// storageCfg is /etc/pve/storage.cfg: sections in file order.
type storageCfg struct {
	Order   []string                 `json:"order"`
	Entries map[string]*storageEntry `json:"entries"`
}

// storageEntry is one section: `<type>: <id>` and its options as
// storage.cfg writes them (booleans 0/1, lists comma-separated).
type storageEntry struct {
	ID   string            `json:"id"`
	Type string            `json:"type"`
	Opts map[string]string `json:"opts"`
}

// simVolume is one volume on a storage.
type simVolume struct {
	Storage string `json:"storage"`
	// Name is the volume name after "<storage>:", e.g. vm-100-disk-0, or
	// 100/vm-100-disk-0.qcow2 on directory storages.
	Name   string `json:"name"`
	VMID   int    `json:"vmid"`
	Size   int64  `json:"size"`
	Format string `json:"format"` // raw, qcow2, subvol or iso
	// Data is an uploaded or downloaded file's bytes (storage_upload.go).
	Data []byte `json:"data,omitempty"`
}

// content is the volume's content type as the storage lists it.
func (v *simVolume) content() string {
	switch {
	case strings.HasPrefix(v.Name, "iso/"):
		return "iso"
	case strings.Contains(v.Name, "subvol-"):
		return "rootdir"
	}
	return "images"
}

func (v *simVolume) volid() string { return v.Storage + ":" + v.Name }

// sharedStorageTypes are always shared=1 (Plugin.pm @SHARED_STORAGE plus the
// hard-coded drbd); vitastor declares itself shared.
var sharedStorageTypes = map[string]bool{
	"rbd": true, "cephfs": true, "nfs": true, "cifs": true, "glusterfs": true, "iscsi": true, "iscsidirect": true,
	"zfs": true, "pbs": true, "drbd": true, "vitastor": true,
}

// newStorageCfg is a fresh installation's storage.cfg (installer defaults
// on an LVM root disk).
func newStorageCfg() *storageCfg {
	return &storageCfg{
		Order: []string{"local", "local-lvm"},
		Entries: map[string]*storageEntry{
			"local":     {ID: "local", Type: "dir", Opts: map[string]string{"path": "/var/lib/vz", "content": "iso,vztmpl,backup"}},
			"local-lvm": {ID: "local-lvm", Type: "lvmthin", Opts: map[string]string{"thinpool": "data", "vgname": "pve", "content": "rootdir,images"}},
		},
	}
}

// storageCfgLocked is the domain's storage.cfg, created with the
// installer's defaults on first use. Caller holds s.mu.
func (s *Sim) storageCfgLocked(node string) *storageCfg {
	d := s.st.Domains[s.st.Nodes[node].Domain]
	if d.Storage == nil {
		d.Storage = newStorageCfg()
	}
	return d.Storage
}

func (sc *storageCfg) add(e *storageEntry) {
	if sc.Entries == nil {
		sc.Entries = map[string]*storageEntry{}
	}
	if _, ok := sc.Entries[e.ID]; !ok {
		sc.Order = append(sc.Order, e.ID)
	}
	sc.Entries[e.ID] = e
}

func (e *storageEntry) shared() bool {
	return sharedStorageTypes[e.Type] || e.Opts["shared"] == "1"
}

func (e *storageEntry) contentTypes() map[string]bool {
	out := map[string]bool{}
	for _, c := range strings.Split(e.Opts["content"], ",") {
		if c != "" {
			out[c] = true
		}
	}
	return out
}

// onNode is whether the storage is configured for node (no `nodes` = all).
func (e *storageEntry) onNode(node string) bool {
	n := e.Opts["nodes"]
	if n == "" {
		return true
	}
	for _, x := range strings.Split(n, ",") {
		if x == node {
			return true
		}
	}
	return false
}

// checkUsable is PVE::Storage::storage_check_enabled for node.
func (e *storageEntry) checkUsable(node string) error {
	if e.Opts["disable"] == "1" {
		return fmt.Errorf("storage '%s' is disabled", e.ID)
	}
	if !e.onNode(node) {
		return fmt.Errorf("storage '%s' is not available on node '%s'", e.ID, node)
	}
	return nil
}

// volumesLocked is where the volumes of storage e seen from node live:
// the domain's map for shared storages, the node's otherwise.
func (s *Sim) volumesLocked(node string, e *storageEntry) map[string]*simVolume {
	if e.shared() {
		d := s.st.Domains[s.st.Nodes[node].Domain]
		if d.Volumes == nil {
			d.Volumes = map[string]*simVolume{}
		}
		return d.Volumes
	}
	n := s.st.Nodes[node]
	if n.Volumes == nil {
		n.Volumes = map[string]*simVolume{}
	}
	return n.Volumes
}

// storageEntryLocked is storage id as node's PVE::Storage::config() sees
// it (parsedStorageCfg: sections of plugins the node lacks are invisible,
// content defaults filled in), or PVE's error.
func (s *Sim) storageEntryLocked(node, id string) (*storageEntry, error) {
	_, ids := s.parsedStorageCfg(node)
	e := ids[id]
	if e == nil {
		return nil, fmt.Errorf("storage '%s' does not exist", id)
	}
	return e, nil
}

// splitVolid splits "<storage>:<name>" as PVE::Storage::parse_volume_id.
func splitVolid(volid string) (storage, name string, err error) {
	storage, name, ok := strings.Cut(volid, ":")
	if !ok || storage == "" || name == "" || !configIDRE.MatchString(storage) {
		return "", "", fmt.Errorf("unable to parse volume ID '%s'", volid)
	}
	return storage, name, nil
}

// allocVolumeLocked is PVE::Storage::vdisk_alloc: a new volume
// vm-<vmid>-disk-<n> (lowest free n on the storage) of size bytes. format
// "" is the storage's default (qcow2 on dir/nfs/cifs, raw elsewhere).
func (s *Sim) allocVolumeLocked(node, storeID string, vmid int, size int64, format string) (*simVolume, error) {
	e, err := s.storageEntryLocked(node, storeID)
	if err != nil {
		return nil, err
	}
	if err := e.checkUsable(node); err != nil {
		return nil, err
	}
	fileBased := e.Type == "dir" || e.Type == "nfs" || e.Type == "cifs" || e.Type == "cephfs" || e.Type == "glusterfs"
	switch {
	case format == "" && fileBased:
		format = "qcow2"
	case format == "":
		format = "raw"
	case format != "raw" && !fileBased:
		return nil, fmt.Errorf("unsupported format '%s'", format)
	}
	vols := s.volumesLocked(node, e)
	for n := 0; ; n++ {
		name := fmt.Sprintf("vm-%d-disk-%d", vmid, n)
		if fileBased {
			name = fmt.Sprintf("%d/%s.%s", vmid, name, format)
		}
		v := &simVolume{Storage: storeID, Name: name, VMID: vmid, Size: size, Format: format}
		if _, taken := vols[v.volid()]; taken {
			continue
		}
		if p := s.rbdPoolLocked(node, e); p != nil {
			p.Images = append(p.Images, name)
		}
		vols[v.volid()] = v
		return v, nil
	}
}

// volumeLocked finds volid as node sees it.
func (s *Sim) volumeLocked(node, volid string) (*simVolume, error) {
	storeID, _, err := splitVolid(volid)
	if err != nil {
		return nil, err
	}
	e, err := s.storageEntryLocked(node, storeID)
	if err != nil {
		return nil, err
	}
	v := s.volumesLocked(node, e)[volid]
	if v == nil {
		return nil, fmt.Errorf("no such volume '%s'", volid)
	}
	return v, nil
}

// freeVolumeLocked is PVE::Storage::vdisk_free.
func (s *Sim) freeVolumeLocked(node, volid string) error {
	v, err := s.volumeLocked(node, volid)
	if err != nil {
		return err
	}
	e, _ := s.storageEntryLocked(node, v.Storage) // found by volumeLocked
	delete(s.volumesLocked(node, e), volid)
	if p := s.rbdPoolLocked(node, e); p != nil {
		for i, img := range p.Images {
			if img == v.Name {
				p.Images = append(p.Images[:i], p.Images[i+1:]...)
				break
			}
		}
	}
	return nil
}

// resizeVolumeLocked grows a volume; PVE refuses to shrink
// (PVE::API2::Qemu resize_vm).
func (s *Sim) resizeVolumeLocked(node, volid string, size int64) error {
	v, err := s.volumeLocked(node, volid)
	if err != nil {
		return err
	}
	if size < v.Size {
		return fmt.Errorf("shrinking disks is not supported")
	}
	v.Size = size
	return nil
}

// storageVolumesLocked lists the volumes of storage id seen from node,
// sorted by volid (optionally only those of vmid > 0).
func (s *Sim) storageVolumesLocked(node, id string, vmid int) []*simVolume {
	e, err := s.storageEntryLocked(node, id)
	if err != nil {
		return nil
	}
	var out []*simVolume
	for _, v := range s.volumesLocked(node, e) {
		if v.Storage == id && (vmid <= 0 || v.VMID == vmid) {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].volid() < out[j].volid() })
	return out
}

// rbdPoolLocked is the Ceph pool behind a pveceph-managed rbd storage (no
// monhost), or nil.
func (s *Sim) rbdPoolLocked(node string, e *storageEntry) *cephPool {
	if e.Type != "rbd" || e.Opts["monhost"] != "" {
		return nil
	}
	cs := s.st.Domains[s.st.Nodes[node].Domain].Ceph
	if cs == nil {
		return nil
	}
	pool := e.Opts["pool"]
	if pool == "" {
		pool = "rbd"
	}
	return cs.pool(pool)
}

// formatSize renders bytes as qemu-server writes disk sizes: the largest
// unit (T, G, M, K) that divides them, else bytes.
func formatSize(b int64) string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}
