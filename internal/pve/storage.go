package pve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Storage: /etc/pve/storage.cfg through /storage (PVE/API2/Storage/Config.pm),
// storage status and content on a node (Status.pm), and thin pools and ZFS
// pools on a node's disks (Disks/LVMThin.pm, Disks/ZFS.pm).

// StorageConfig is one storage.cfg section as GET /storage reports it.
type StorageConfig struct {
	Storage, Type string
	// Digest is storage.cfg's SHA-1, for a digest-guarded update.
	Digest string
	// Content and Nodes are sorted (PVE joins hash keys in no order);
	// Nodes is empty when the storage is on every node.
	Content, Nodes  []string
	Disable, Shared bool
	// Options holds every other key as text, booleans as "0"/"1".
	Options map[string]string
}

func decodeStorageConfig(raw map[string]json.RawMessage) (StorageConfig, error) {
	sc := StorageConfig{Options: map[string]string{}}
	for k, v := range raw {
		var s flexString
		if err := s.UnmarshalJSON(v); err != nil {
			return sc, fmt.Errorf("storage option %s: %w", k, err)
		}
		val := string(s)
		switch k {
		case "storage":
			sc.Storage = val
		case "type":
			sc.Type = val
		case "digest":
			sc.Digest = val
		case "content":
			sc.Content = splitSorted(val)
		case "nodes":
			sc.Nodes = splitSorted(val)
		case "disable":
			sc.Disable = val == "1" || val == "true"
		case "shared":
			sc.Shared = val == "1" || val == "true"
			sc.Options[k] = val
		default:
			sc.Options[k] = val
		}
	}
	return sc, nil
}

func splitSorted(s string) []string {
	out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
	sort.Strings(out)
	return out
}

// StorageConfigs lists storage.cfg (only type typ unless "").
//
//pve:operation GET /storage
func (c *Client) StorageConfigs(ctx context.Context, typ string) ([]StorageConfig, error) {
	p := Params{}
	if typ != "" {
		p.Set("type", typ)
	}
	var wire []map[string]json.RawMessage
	if err := c.Get(ctx, "/storage", p, &wire); err != nil {
		return nil, err
	}
	out := make([]StorageConfig, 0, len(wire))
	for _, w := range wire {
		sc, err := decodeStorageConfig(w)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Storage < out[j].Storage })
	return out, nil
}

// StorageConfig reads one storage; ErrNotFound when storage.cfg has no such id.
//
//pve:operation GET /storage/{storage}
func (c *Client) StorageConfig(ctx context.Context, id string) (*StorageConfig, error) {
	var wire map[string]json.RawMessage
	if err := c.Get(ctx, "/storage/"+PathEscape(id), nil, &wire); err != nil {
		return nil, err
	}
	sc, err := decodeStorageConfig(wire)
	if err != nil {
		return nil, err
	}
	if sc.Storage == "" {
		sc.Storage = id
	}
	return &sc, nil
}

// CreateStorage adds storage id of type typ with the type's options in p
// (content, nodes, disable, path, pool, ...).
//
//pve:operation POST /storage
func (c *Client) CreateStorage(ctx context.Context, id, typ string, p Params) error {
	q := Params{}
	for k, v := range p {
		q[k] = v
	}
	q.Set("storage", id)
	q.Set("type", typ)
	return c.Post(ctx, "/storage", q, nil)
}

// UpdateStorage changes options of storage id: p holds the values to set,
// and p.Delete(...) the ones to remove; a "digest" makes PVE refuse when
// storage.cfg changed since it was read. Fixed options (a thin pool's
// vgname, a directory's path) cannot change.
//
//pve:operation PUT /storage/{storage}
func (c *Client) UpdateStorage(ctx context.Context, id string, p Params) error {
	return c.Put(ctx, "/storage/"+PathEscape(id), p, nil)
}

// DeleteStorage removes storage id from storage.cfg. Volumes on it are
// left alone (PVE only forgets the configuration).
//
//pve:operation DELETE /storage/{storage}
func (c *Client) DeleteStorage(ctx context.Context, id string) error {
	return c.Delete(ctx, "/storage/"+PathEscape(id), nil, nil)
}

// StorageStatus is a storage as one node sees it.
type StorageStatus struct {
	Storage, Type           string
	Content                 []string
	Active, Enabled, Shared bool
	Total, Used, Avail      int64
	UsedFraction            float64
}

type storageStatusWire struct {
	Storage      flexString `json:"storage"`
	Type         flexString `json:"type"`
	Content      flexString `json:"content"`
	Active       flexBool   `json:"active"`
	Enabled      flexBool   `json:"enabled"`
	Shared       flexBool   `json:"shared"`
	Total        flexInt    `json:"total"`
	Used         flexInt    `json:"used"`
	Avail        flexInt    `json:"avail"`
	UsedFraction float64    `json:"used_fraction"`
}

func (w storageStatusWire) status() StorageStatus {
	return StorageStatus{
		Storage: string(w.Storage), Type: string(w.Type), Content: splitSorted(string(w.Content)),
		Active: bool(w.Active), Enabled: bool(w.Enabled), Shared: bool(w.Shared),
		Total: int64(w.Total), Used: int64(w.Used), Avail: int64(w.Avail), UsedFraction: w.UsedFraction,
	}
}

// NodeStorageQuery filters NodeStorage: storages holding one of
// Content (comma-separated), only enabled ones, or one storage.
type NodeStorageQuery struct {
	Content, Storage string
	Enabled          bool
}

// NodeStorage lists the storages as node sees them: every storage of
// storage.cfg, with enabled=false where it is disabled or not configured
// for the node, and sizes where the node could activate it.
//
//pve:operation GET /nodes/{node}/storage
func (c *Client) NodeStorage(ctx context.Context, node string, q NodeStorageQuery) ([]StorageStatus, error) {
	p := Params{}
	if q.Content != "" {
		p.Set("content", q.Content)
	}
	if q.Storage != "" {
		p.Set("storage", q.Storage)
	}
	if q.Enabled {
		p.SetBool("enabled", true)
	}
	var wire []storageStatusWire
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/storage", p, &wire); err != nil {
		return nil, err
	}
	out := make([]StorageStatus, 0, len(wire))
	for _, w := range wire {
		out = append(out, w.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Storage < out[j].Storage })
	return out, nil
}

// NodeStorageStatus is one storage's status on node.
//
//pve:operation GET /nodes/{node}/storage/{storage}/status
func (c *Client) NodeStorageStatus(ctx context.Context, node, id string) (*StorageStatus, error) {
	var w storageStatusWire
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/storage/"+PathEscape(id)+"/status", nil, &w); err != nil {
		return nil, err
	}
	st := w.status()
	st.Storage = id
	return &st, nil
}

// StorageVolume is one volume of a storage's content.
type StorageVolume struct {
	VolID, Format, Content string
	Size, VMID             int64
}

// StorageContent lists the volumes on storage id seen from node (only
// those of vmid when > 0).
//
//pve:operation GET /nodes/{node}/storage/{storage}/content
func (c *Client) StorageContent(ctx context.Context, node, id string, vmid int64) ([]StorageVolume, error) {
	p := Params{}
	if vmid > 0 {
		p.SetInt("vmid", vmid)
	}
	return c.listContent(ctx, node, id, p)
}

func (c *Client) listContent(ctx context.Context, node, id string, p Params) ([]StorageVolume, error) {
	var wire []struct {
		VolID   flexString `json:"volid"`
		Format  flexString `json:"format"`
		Content flexString `json:"content"`
		Size    flexInt    `json:"size"`
		VMID    flexInt    `json:"vmid"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/storage/"+PathEscape(id)+"/content", p, &wire); err != nil {
		return nil, err
	}
	out := make([]StorageVolume, 0, len(wire))
	for _, w := range wire {
		out = append(out, StorageVolume{VolID: string(w.VolID), Format: string(w.Format), Content: string(w.Content), Size: int64(w.Size), VMID: int64(w.VMID)})
	}
	return out, nil
}

// DeleteVolume frees volume volid (storage:name) on node: an imgdel task,
// whose UPID it returns. PVE checks no guest config: the caller must know
// no guest uses the volume.
//
//pve:operation DELETE /nodes/{node}/storage/{storage}/content/{volume}
func (c *Client) DeleteVolume(ctx context.Context, node, volid string) (string, error) {
	storage, _, _ := strings.Cut(volid, ":")
	var upid string
	err := c.Delete(ctx, "/nodes/"+PathEscape(node)+"/storage/"+PathEscape(storage)+"/content/"+PathEscape(volid), nil, &upid)
	return upid, err
}

// ThinPool is an LVM thin pool of GET /nodes/{node}/disks/lvmthin.
type ThinPool struct {
	LV, VG                     string
	Size, Used                 int64
	MetadataSize, MetadataUsed int64
}

// ThinPools lists the node's LVM thin pools.
//
//pve:operation GET /nodes/{node}/disks/lvmthin
func (c *Client) ThinPools(ctx context.Context, node string) ([]ThinPool, error) {
	var wire []struct {
		LV           flexString `json:"lv"`
		VG           flexString `json:"vg"`
		Size         flexInt    `json:"lv_size"`
		Used         flexInt    `json:"used"`
		MetadataSize flexInt    `json:"metadata_size"`
		MetadataUsed flexInt    `json:"metadata_used"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/disks/lvmthin", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]ThinPool, 0, len(wire))
	for _, w := range wire {
		out = append(out, ThinPool{LV: string(w.LV), VG: string(w.VG), Size: int64(w.Size), Used: int64(w.Used),
			MetadataSize: int64(w.MetadataSize), MetadataUsed: int64(w.MetadataUsed)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VG+"/"+out[i].LV < out[j].VG+"/"+out[j].LV })
	return out, nil
}

// CreateThinPool makes device (a free disk) a volume group name with one
// thin pool name (task lvmthincreate); addStorage also adds an lvmthin
// storage name restricted to the node.
//
//pve:operation POST /nodes/{node}/disks/lvmthin
func (c *Client) CreateThinPool(ctx context.Context, node, name, device string, addStorage bool) (string, error) {
	p := Params{"name": name, "device": device}
	if addStorage {
		p.SetBool("add_storage", true)
	}
	path := "/nodes/" + PathEscape(node) + "/disks/lvmthin"
	var upid string
	if err := c.Post(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// DeleteThinPool removes thin pool vg/name with every thin volume in it
// (task lvmthinremove); cleanupDisks also removes the then empty volume
// group and wipes its disks, cleanupConfig drops the node from (or
// removes) the lvmthin storages on the pool.
//
//pve:operation DELETE /nodes/{node}/disks/lvmthin/{name}
func (c *Client) DeleteThinPool(ctx context.Context, node, name, vg string, cleanupDisks, cleanupConfig bool) (string, error) {
	p := Params{"volume-group": vg}
	if cleanupDisks {
		p.SetBool("cleanup-disks", true)
	}
	if cleanupConfig {
		p.SetBool("cleanup-config", true)
	}
	path := "/nodes/" + PathEscape(node) + "/disks/lvmthin/" + PathEscape(name)
	var upid string
	if err := c.Delete(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}

// ZFSPool is a zpool of GET /nodes/{node}/disks/zfs.
type ZFSPool struct {
	Name              string
	Size, Alloc, Free int64
	Health            string
}

// VolumeGroup is one LVM volume group of a node.
type VolumeGroup struct {
	Name       string
	Size, Free int64
	// PVs are the physical volumes' device paths.
	PVs []string
}

// VolumeGroups lists the node's LVM volume groups, sorted by name.
//
//pve:operation GET /nodes/{node}/disks/lvm
func (c *Client) VolumeGroups(ctx context.Context, node string) ([]VolumeGroup, error) {
	var wire struct {
		Children []struct {
			Name     flexString `json:"name"`
			Size     flexInt    `json:"size"`
			Free     flexInt    `json:"free"`
			Children []struct {
				Name flexString `json:"name"`
			} `json:"children"`
		} `json:"children"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/disks/lvm", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]VolumeGroup, 0, len(wire.Children))
	for _, w := range wire.Children {
		vg := VolumeGroup{Name: string(w.Name), Size: int64(w.Size), Free: int64(w.Free)}
		for _, pv := range w.Children {
			vg.PVs = append(vg.PVs, string(pv.Name))
		}
		out = append(out, vg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ZFSPools lists the node's zpools.
//
//pve:operation GET /nodes/{node}/disks/zfs
func (c *Client) ZFSPools(ctx context.Context, node string) ([]ZFSPool, error) {
	var wire []struct {
		Name   flexString `json:"name"`
		Size   flexInt    `json:"size"`
		Alloc  flexInt    `json:"alloc"`
		Free   flexInt    `json:"free"`
		Health flexString `json:"health"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/disks/zfs", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]ZFSPool, 0, len(wire))
	for _, w := range wire {
		out = append(out, ZFSPool{Name: string(w.Name), Size: int64(w.Size), Alloc: int64(w.Alloc), Free: int64(w.Free), Health: string(w.Health)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ZFSPoolDetail is `zpool status` of one pool: its layout.
type ZFSPoolDetail struct {
	Name, State string
	// RaidLevel is derived from the vdevs: single, mirror, raid10, raidz,
	// raidz2, raidz3, draid, draid2, draid3.
	RaidLevel string
	// Devices are the leaf devices as zpool reports them (usually
	// /dev/disk/by-id paths of a partition).
	Devices []string
}

type zpoolVdev struct {
	Name     flexString  `json:"name"`
	State    flexString  `json:"state"`
	Leaf     flexBool    `json:"leaf"`
	Children []zpoolVdev `json:"children"`
}

// ZFSPool reads a zpool's layout.
//
//pve:operation GET /nodes/{node}/disks/zfs/{name}
func (c *Client) ZFSPool(ctx context.Context, node, name string) (*ZFSPoolDetail, error) {
	var w zpoolVdev
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/disks/zfs/"+PathEscape(name), nil, &w); err != nil {
		return nil, err
	}
	d := &ZFSPoolDetail{Name: string(w.Name), State: string(w.State)}
	// children[0] is the pool's root vdev; its children are the top-level
	// vdevs (leaves for a single disk, mirror-N, raidzK-N, draidK:...).
	var top []zpoolVdev
	for _, r := range w.Children {
		if string(r.Name) == name {
			top = r.Children
		}
	}
	mirrors := 0
	for _, v := range top {
		vname := string(v.Name)
		switch {
		case bool(v.Leaf) || len(v.Children) == 0:
			d.RaidLevel = "single"
			d.Devices = append(d.Devices, vname)
			continue
		case strings.HasPrefix(vname, "mirror"):
			mirrors++
			d.RaidLevel = "mirror"
		default:
			lvl, _, _ := strings.Cut(vname, "-")
			lvl, _, _ = strings.Cut(lvl, ":")
			lvl = strings.TrimSuffix(lvl, "1")
			d.RaidLevel = lvl
		}
		for _, l := range v.Children {
			d.Devices = append(d.Devices, string(l.Name))
		}
	}
	if mirrors > 1 {
		d.RaidLevel = "raid10"
	}
	return d, nil
}

// ZFSPoolRequest is POST /nodes/{node}/disks/zfs.
type ZFSPoolRequest struct {
	Name      string
	Devices   []string
	RaidLevel string
	// Ashift 0 and Compression "" leave PVE's defaults (12, on).
	Ashift      int64
	Compression string
	AddStorage  bool
}

// CreateZFSPool creates a zpool on free disks (task zfscreate).
//
//pve:operation POST /nodes/{node}/disks/zfs
func (c *Client) CreateZFSPool(ctx context.Context, node string, r ZFSPoolRequest) (string, error) {
	p := Params{"name": r.Name, "devices": strings.Join(r.Devices, ","), "raidlevel": r.RaidLevel}
	if r.Ashift > 0 {
		p.Set("ashift", strconv.FormatInt(r.Ashift, 10))
	}
	if r.Compression != "" {
		p.Set("compression", r.Compression)
	}
	if r.AddStorage {
		p.SetBool("add_storage", true)
	}
	path := "/nodes/" + PathEscape(node) + "/disks/zfs"
	var upid string
	if err := c.Post(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// DeleteZFSPool destroys a zpool and its data (task zfsremove);
// cleanupDisks wipes its disks, cleanupConfig drops the node from (or
// removes) the zfspool storages on it.
//
//pve:operation DELETE /nodes/{node}/disks/zfs/{name}
func (c *Client) DeleteZFSPool(ctx context.Context, node, name string, cleanupDisks, cleanupConfig bool) (string, error) {
	p := Params{}
	if cleanupDisks {
		p.SetBool("cleanup-disks", true)
	}
	if cleanupConfig {
		p.SetBool("cleanup-config", true)
	}
	path := "/nodes/" + PathEscape(node) + "/disks/zfs/" + PathEscape(name)
	var upid string
	if err := c.Delete(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}
