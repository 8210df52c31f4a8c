package storage

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// storageModel is pve_storage.
type storageModel struct {
	ID      types.String `tfsdk:"id"`
	Storage types.String `tfsdk:"storage"`
	Type    types.String `tfsdk:"type"`
	Content types.Set    `tfsdk:"content"`
	Nodes   types.Set    `tfsdk:"nodes"`
	Shared  types.Bool   `tfsdk:"shared"`
	Disable types.Bool   `tfsdk:"disable"`
	Options types.Map    `tfsdk:"options"`

	Path          types.String `tfsdk:"path"`
	Server        types.String `tfsdk:"server"`
	Export        types.String `tfsdk:"export"`
	MountOptions  types.String `tfsdk:"mount_options"`
	VGName        types.String `tfsdk:"vgname"`
	ThinPool      types.String `tfsdk:"thinpool"`
	Base          types.String `tfsdk:"base"`
	SafeRemove    types.Bool   `tfsdk:"saferemove"`
	Pool          types.String `tfsdk:"pool"`
	BlockSize     types.String `tfsdk:"blocksize"`
	Sparse        types.Bool   `tfsdk:"sparse"`
	MountPoint    types.String `tfsdk:"mountpoint"`
	MonHost       types.String `tfsdk:"monhost"`
	Username      types.String `tfsdk:"username"`
	Namespace     types.String `tfsdk:"namespace"`
	DataPool      types.String `tfsdk:"data_pool"`
	KRBD          types.Bool   `tfsdk:"krbd"`
	Keyring       types.String `tfsdk:"keyring"`
	Subdir        types.String `tfsdk:"subdir"`
	FSName        types.String `tfsdk:"fs_name"`
	Fuse          types.Bool   `tfsdk:"fuse"`
	Volume        types.String `tfsdk:"volume"`
	Server2       types.String `tfsdk:"server2"`
	Transport     types.String `tfsdk:"transport"`
	Format        types.String `tfsdk:"format"`
	Preallocation types.String `tfsdk:"preallocation"`
	PruneBackups  types.String `tfsdk:"prune_backups"`
}

// typedAttr is a type-specific attribute: its storage.cfg key, the types
// that have it, and those where it is fixed (set at creation only).
type typedAttr struct {
	name, key string
	types     []string
	fixed     []string
	// computed: PVE fills in a default (path of network storages).
	computed, sensitive bool
	desc                string
	enum                []string
	str                 func(m *storageModel) *types.String
	b                   func(m *storageModel) *types.Bool
}

func (a typedAttr) appliesTo(typ string) bool { return slices.Contains(a.types, typ) }
func (a typedAttr) fixedIn(typ string) bool   { return slices.Contains(a.fixed, typ) }

var fileTypes = []string{"dir", "nfs", "cephfs", "glusterfs"}

var typedAttrs = []typedAttr{
	{name: "path", key: "path", types: fileTypes, fixed: fileTypes, computed: true,
		desc: "File system path of the storage (dir: required; nfs, cephfs and glusterfs: the mount point, default `/mnt/pve/<storage>`). Fixed.",
		str:  func(m *storageModel) *types.String { return &m.Path }},
	{name: "server", key: "server", types: []string{"nfs", "glusterfs"}, fixed: []string{"nfs"},
		desc: "NFS or GlusterFS server address (nfs: required, fixed).",
		str:  func(m *storageModel) *types.String { return &m.Server }},
	{name: "export", key: "export", types: []string{"nfs"}, fixed: []string{"nfs"},
		desc: "NFS export path, such as `/srv/backup` (nfs: required, fixed).",
		str:  func(m *storageModel) *types.String { return &m.Export }},
	{name: "mount_options", key: "options", types: []string{"nfs", "cephfs"},
		desc: "Mount options (storage.cfg `options`), such as `vers=4.2` for NFS.",
		str:  func(m *storageModel) *types.String { return &m.MountOptions }},
	{name: "vgname", key: "vgname", types: []string{"lvm", "lvmthin"}, fixed: []string{"lvm", "lvmthin"},
		desc: "LVM volume group (lvm and lvmthin: required, fixed).",
		str:  func(m *storageModel) *types.String { return &m.VGName }},
	{name: "thinpool", key: "thinpool", types: []string{"lvmthin"}, fixed: []string{"lvmthin"},
		desc: "LVM thin pool in `vgname` (lvmthin: required, fixed).",
		str:  func(m *storageModel) *types.String { return &m.ThinPool }},
	{name: "base", key: "base", types: []string{"lvm"}, fixed: []string{"lvm"},
		desc: "Base volume of an LVM storage on iSCSI (lvm, fixed).",
		str:  func(m *storageModel) *types.String { return &m.Base }},
	{name: "saferemove", key: "saferemove", types: []string{"lvm"},
		desc: "Zero the data of removed LVM volumes (lvm).",
		b:    func(m *storageModel) *types.Bool { return &m.SafeRemove }},
	{name: "pool", key: "pool", types: []string{"zfspool", "rbd"}, fixed: []string{"zfspool"},
		desc: "zfspool: the ZFS pool or dataset, such as `tank/vmdata` (required, fixed). rbd: the Ceph pool (PVE's default `rbd`).",
		str:  func(m *storageModel) *types.String { return &m.Pool }},
	{name: "blocksize", key: "blocksize", types: []string{"zfspool"},
		desc: "ZFS volblocksize of new zvols, such as `16k` (zfspool).",
		str:  func(m *storageModel) *types.String { return &m.BlockSize }},
	{name: "sparse", key: "sparse", types: []string{"zfspool"},
		desc: "Thin-provision new zvols (zfspool).",
		b:    func(m *storageModel) *types.Bool { return &m.Sparse }},
	{name: "mountpoint", key: "mountpoint", types: []string{"zfspool"},
		desc: "Mount point of the ZFS pool or dataset when not its default (zfspool).",
		str:  func(m *storageModel) *types.String { return &m.MountPoint }},
	{name: "monhost", key: "monhost", types: []string{"rbd", "cephfs"},
		desc: "Monitor addresses of an external Ceph cluster, space-separated (rbd, cephfs). Leave unset for the cluster's own (pveceph) Ceph.",
		str:  func(m *storageModel) *types.String { return &m.MonHost }},
	{name: "username", key: "username", types: []string{"rbd", "cephfs"},
		desc: "Ceph user (rbd, cephfs; Ceph's default `admin`).",
		str:  func(m *storageModel) *types.String { return &m.Username }},
	{name: "namespace", key: "namespace", types: []string{"rbd"},
		desc: "RBD namespace in the pool (rbd).",
		str:  func(m *storageModel) *types.String { return &m.Namespace }},
	{name: "data_pool", key: "data-pool", types: []string{"rbd"},
		desc: "Erasure-coded data pool for the images' data (rbd `data-pool`).",
		str:  func(m *storageModel) *types.String { return &m.DataPool }},
	{name: "krbd", key: "krbd", types: []string{"rbd"},
		desc: "Map images with the kernel RBD driver instead of librbd (rbd). PVE's default is off; a change applies to disks the next time they are activated (guest restart or migration).",
		b:    func(m *storageModel) *types.Bool { return &m.KRBD }},
	{name: "keyring", key: "keyring", types: []string{"rbd", "cephfs"}, sensitive: true,
		desc: "Keyring (rbd) or secret (cephfs) of an external Ceph cluster. PVE stores it under /etc/pve/priv and never returns it, so the provider cannot see drift in it.",
		str:  func(m *storageModel) *types.String { return &m.Keyring }},
	{name: "subdir", key: "subdir", types: []string{"cephfs"},
		desc: "Subdirectory of CephFS to mount (cephfs).",
		str:  func(m *storageModel) *types.String { return &m.Subdir }},
	{name: "fs_name", key: "fs-name", types: []string{"cephfs"},
		desc: "CephFS file system name when the cluster has several (cephfs `fs-name`).",
		str:  func(m *storageModel) *types.String { return &m.FSName }},
	{name: "fuse", key: "fuse", types: []string{"cephfs"},
		desc: "Mount CephFS with FUSE instead of the kernel client (cephfs).",
		b:    func(m *storageModel) *types.Bool { return &m.Fuse }},
	{name: "volume", key: "volume", types: []string{"glusterfs"}, fixed: []string{"glusterfs"},
		desc: "GlusterFS volume (glusterfs: required, fixed; PVE 8 only).",
		str:  func(m *storageModel) *types.String { return &m.Volume }},
	{name: "server2", key: "server2", types: []string{"glusterfs"},
		desc: "Backup GlusterFS server (glusterfs).",
		str:  func(m *storageModel) *types.String { return &m.Server2 }},
	{name: "transport", key: "transport", types: []string{"glusterfs"}, enum: []string{"tcp", "rdma", "unix"},
		desc: "GlusterFS transport: `tcp`, `rdma` or `unix` (glusterfs).",
		str:  func(m *storageModel) *types.String { return &m.Transport }},
	{name: "format", key: "format", types: fileTypes, enum: []string{"raw", "qcow2", "vmdk", "subvol"},
		desc: "Default image format of new disks (dir, nfs, cephfs, glusterfs): `raw`, `qcow2`, `vmdk` or `subvol`.",
		str:  func(m *storageModel) *types.String { return &m.Format }},
	{name: "preallocation", key: "preallocation", types: []string{"dir", "nfs", "glusterfs"}, enum: []string{"off", "metadata", "falloc", "full"},
		desc: "Preallocation of new raw and qcow2 images: `off`, `metadata` (PVE's default), `falloc` or `full`.",
		str:  func(m *storageModel) *types.String { return &m.Preallocation }},
	{name: "prune_backups", key: "prune-backups", types: fileTypes,
		desc: "Backup retention, such as `keep-last=3,keep-weekly=2` (`prune-backups`).",
		str:  func(m *storageModel) *types.String { return &m.PruneBackups }},
}

// Built-in types the resource knows; others (plugins) take their keys in
// options.
var (
	builtinTypes = []string{"btrfs", "cephfs", "cifs", "dir", "esxi", "glusterfs", "iscsi", "iscsidirect", "lvm", "lvmthin", "nfs", "pbs", "rbd", "zfs", "zfspool"}
	// requiredAttrs are what each type needs at creation (PVE: "missing
	// value for required option").
	requiredAttrs = map[string][]string{
		"dir": {"path"}, "nfs": {"server", "export"}, "lvm": {"vgname"}, "lvmthin": {"vgname", "thinpool"},
		"zfspool": {"pool"}, "glusterfs": {"server", "volume"},
	}
	// requiredOptions are the plugins' required keys.
	requiredOptions = map[string][]string{"drbd": {"resourcegroup"}, "vitastor": {"vitastor_pool"}}
	// validContent is each built-in type's content (plugindata).
	validContent = map[string][]string{
		"dir": {"backup", "images", "import", "iso", "none", "rootdir", "snippets", "vztmpl"},
		"nfs": {"backup", "images", "import", "iso", "rootdir", "snippets", "vztmpl"},
		"lvm": {"images", "rootdir"}, "lvmthin": {"images", "rootdir"}, "zfspool": {"images", "rootdir"}, "rbd": {"images", "rootdir"},
		"cephfs": {"backup", "import", "iso", "snippets", "vztmpl"}, "glusterfs": {"backup", "images", "import", "iso", "snippets", "vztmpl"},
		"drbd": {"images", "rootdir"}, "vitastor": {"images", "rootdir"},
	}
	// sharedSettable are the types with a `shared` option; PVE marks the
	// network types shared by itself.
	sharedSettable = []string{"dir", "lvm", "vitastor", "btrfs", "zfs"}
	// coreKeys are the keys with attributes of their own for every type.
	coreKeys = []string{"storage", "type", "content", "nodes", "disable", "shared", "digest", "delete"}
)

func attrByKey(typ, key string) *typedAttr {
	for i := range typedAttrs {
		if typedAttrs[i].key == key && typedAttrs[i].appliesTo(typ) {
			return &typedAttrs[i]
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func joinOr(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

var devPathRE = regexp.MustCompile(`^/dev/[a-zA-Z0-9/_.-]+$`)

type stateSetter interface {
	Set(context.Context, any) diag.Diagnostics
}

type diagnostics = diag.Diagnostics
