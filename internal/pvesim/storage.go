package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digest is SHA-1
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Storage configuration after pve-storage PVE/API2/Storage/Config.pm, the
// plugins' options and plugindata (PVE/Storage/*Plugin.pm) and pve-common's
// SectionConfig (check_config, write_config). The model of storage.cfg and
// its volumes is storage_model.go; node status and content are in
// storage_status.go, thin pools and ZFS pools in storage_disks.go.

// storeOpt is one entry of a plugin's `options`: required unless optional,
// not changeable when fixed.
type storeOpt struct{ optional, fixed bool }

// storeType is a registered storage plugin.
type storeType struct {
	opts map[string]storeOpt
	// content is plugindata's valid content types and the default.
	content    []string
	defContent string
	// only8 marks types PVE 9 dropped (glusterfs); plugin types are
	// registered only on nodes with the plugin installed.
	only8  bool
	plugin bool
}

// storeOpts builds an options table: "k!" is fixed (and required), "k!?"
// fixed but optional, "k*" required, plain keys optional.
func storeOpts(keys ...string) map[string]storeOpt {
	out := map[string]storeOpt{}
	for _, k := range keys {
		switch {
		case strings.HasSuffix(k, "!?"):
			out[strings.TrimSuffix(k, "!?")] = storeOpt{optional: true, fixed: true}
		case strings.HasSuffix(k, "!"):
			out[strings.TrimSuffix(k, "!")] = storeOpt{fixed: true}
		case strings.HasSuffix(k, "*"):
			out[strings.TrimSuffix(k, "*")] = storeOpt{}
		default:
			out[k] = storeOpt{optional: true}
		}
	}
	return out
}

var storeTypes = map[string]*storeType{
	"dir": {opts: storeOpts("path!", "content-dirs", "nodes", "shared", "disable", "prune-backups", "max-protected-backups", "content",
		"format", "mkdir", "create-base-path", "create-subdirs", "is_mountpoint", "bwlimit", "preallocation", "snapshot-as-volume-chain!?"),
		content: []string{"images", "rootdir", "vztmpl", "iso", "backup", "snippets", "none", "import"}, defContent: "images,rootdir"},
	"nfs": {opts: storeOpts("path!", "content-dirs", "server!", "export!", "nodes", "disable", "prune-backups", "max-protected-backups", "options",
		"content", "format", "mkdir", "create-base-path", "create-subdirs", "bwlimit", "preallocation", "snapshot-as-volume-chain!?"),
		content: []string{"images", "rootdir", "vztmpl", "iso", "backup", "snippets", "import"}, defContent: "images"},
	"lvm": {opts: storeOpts("vgname!", "nodes", "shared", "disable", "saferemove", "saferemove-stepsize", "saferemove_throughput", "content",
		"base!?", "tagged_only", "bwlimit", "snapshot-as-volume-chain"),
		content: []string{"images", "rootdir"}, defContent: "images"},
	"lvmthin": {opts: storeOpts("thinpool!", "vgname!", "nodes", "disable", "content", "bwlimit"),
		content: []string{"images", "rootdir"}, defContent: "images,rootdir"},
	"zfspool": {opts: storeOpts("pool!", "blocksize", "sparse", "nodes", "disable", "content", "bwlimit", "mountpoint"),
		content: []string{"images", "rootdir"}, defContent: "images,rootdir"},
	"rbd": {opts: storeOpts("nodes", "disable", "monhost", "pool", "data-pool", "namespace", "username", "content", "krbd", "keyring", "bwlimit"),
		content: []string{"images", "rootdir"}, defContent: "images"},
	"cephfs": {opts: storeOpts("path!", "content-dirs", "monhost", "nodes", "subdir", "disable", "options", "username", "content", "format",
		"mkdir", "create-base-path", "create-subdirs", "fuse", "bwlimit", "keyring", "prune-backups", "max-protected-backups", "fs-name"),
		content: []string{"vztmpl", "iso", "backup", "snippets", "import"}, defContent: "backup"},
	"glusterfs": {only8: true, opts: storeOpts("path!", "server", "server2", "volume!", "transport", "nodes", "disable", "maxfiles", "prune-backups",
		"max-protected-backups", "content", "format", "mkdir", "create-base-path", "create-subdirs", "bwlimit", "preallocation"),
		content: []string{"images", "vztmpl", "iso", "backup", "snippets", "import"}, defContent: "images"},
	// LINBIT/linstor-proxmox LINSTORPlugin.pm: "drbd" because Plugin.pm
	// hard-codes that name as shared.
	"drbd": {plugin: true, opts: storeOpts("controller", "resourcegroup*", "preferlocal", "exactsize", "allowtwoprimaries", "statuscache",
		"content", "disable", "nodes", "apicrt", "apikey", "apica", "clusterlocktimeout", "searchdomain"),
		content: []string{"images", "rootdir"}, defContent: "images"},
	// vitalif/vitastor patches/VitastorPlugin.pm.
	"vitastor": {plugin: true, opts: storeOpts("shared", "content", "nodes", "disable", "vitastor_etcd_address", "vitastor_etcd_prefix",
		"vitastor_config_path", "vitastor_prefix", "vitastor_pool*", "vitastor_nbd"),
		content: []string{"images", "rootdir"}, defContent: "images"},
}

// builtinStorageTypes is the `type` enum of a node without plugins.
func builtinStorageTypes(rel pveRelease) []string {
	out := []string{"btrfs", "cephfs", "cifs", "dir", "esxi", "iscsi", "iscsidirect", "lvm", "lvmthin", "nfs", "pbs", "rbd", "zfs", "zfspool"}
	if !rel.atLeast9() {
		out = append(out, "glusterfs")
	}
	sort.Strings(out)
	return out
}

// storagePropKinds are the types of the storage properties that are not
// strings: storage.cfg writes booleans 0/1, the API returns both as numbers.
var storagePropKinds = map[string]ptype{
	"disable": tBoolean, "shared": tBoolean, "krbd": tBoolean, "sparse": tBoolean, "mkdir": tBoolean, "create-base-path": tBoolean,
	"create-subdirs": tBoolean, "fuse": tBoolean, "saferemove": tBoolean, "tagged_only": tBoolean, "nowritecache": tBoolean,
	"nocow": tBoolean, "snapshot-as-volume-chain": tBoolean, "skip-cert-verification": tBoolean, "vitastor_nbd": tBoolean,
	"port": tInteger, "max-protected-backups": tInteger, "maxfiles": tInteger, "saferemove-stepsize": tInteger,
	"statuscache": tInteger, "clusterlocktimeout": tInteger,
}

// pluginParams are the API parameters a plugin adds to POST /storage and
// PUT /storage/{storage} (its properties, all optional in the API).
func pluginParams(typ string) schema {
	switch typ {
	case "drbd":
		return schema{
			"controller": pStr(), "resourcegroup": pStr(), "preferlocal": pStr(), "exactsize": pStr(), "allowtwoprimaries": pStr(),
			"statuscache": pInt(i64(0), i64(7200)), "apicrt": pStr(), "apikey": pStr(), "apica": pStr(),
			"clusterlocktimeout": pInt(i64(0), nil), "searchdomain": pStr(),
		}
	case "vitastor":
		return schema{
			"vitastor_etcd_address": pStr(), "vitastor_etcd_prefix": pStr(), "vitastor_config_path": pStr(),
			"vitastor_prefix": pStr(), "vitastor_pool": pStr(), "vitastor_nbd": pBool(),
		}
	}
	return nil
}

func storageIDParam() param { return pFmt("pve-storage-id").req() }

// storageConfigSchema is the create (POST /storage) or update schema of a
// node without plugins: the built-in plugins' properties this simulator
// models, as the release declares them.
func storageConfigSchema(rel pveRelease, create bool) schema {
	sc := schema{
		"storage": storageIDParam(), "nodes": pFmt("pve-node-list"), "content": pFmt("pve-storage-content-list"),
		"disable": pBool(), "shared": pBool(), "bwlimit": psParam(datacenterFormats(rel)["bwlimit"], "bwlimit"), "content-dirs": pFmt("pve-dir-override-list"),
		"prune-backups": pFmt("prune-backups"), "max-protected-backups": pInt(i64(-1), nil),
		"format": pEnum("raw", "qcow2", "subvol", "vmdk"), "mkdir": pBool(), "create-base-path": pBool(), "create-subdirs": pBool(),
		"is_mountpoint": pStr(), "preallocation": pEnum("off", "metadata", "falloc", "full"), "server": pFmt("pve-storage-server"),
		"options": pFmt("pve-storage-options"), "saferemove": pBool(), "saferemove_throughput": pStr(),
		"tagged_only": pBool(), "pool": pStr(), "blocksize": pStr(), "sparse": pBool(), "mountpoint": pFmt("pve-storage-path"),
		"monhost": pFmt("pve-storage-portal-dns-list"), "data-pool": pStr(), "namespace": pStr(), "username": pStr(), "krbd": pBool(),
		"keyring": pStr(), "subdir": pFmt("pve-storage-path"), "fuse": pBool(), "fs-name": pFmt("pve-configid"),
	}
	if rel.atLeast9() {
		sc["snapshot-as-volume-chain"] = pBool()
	} else {
		sc["server2"] = pFmt("pve-storage-server").needs("server")
		sc["transport"] = pEnum("tcp", "rdma", "unix")
		sc["maxfiles"] = pInt(i64(0), nil)
	}
	if create {
		sc["type"] = pEnum(builtinStorageTypes(rel)...).req()
		sc["path"] = pFmt("pve-storage-path")
		sc["export"] = pFmt("pve-storage-path")
		sc["vgname"] = pFmt("pve-storage-vgname")
		sc["thinpool"] = pFmt("pve-storage-vgname")
		sc["base"] = pFmt("pve-volume-id")
		if !rel.atLeast9() {
			sc["volume"] = pStr()
		}
	} else {
		sc["delete"] = pFmt("pve-configid-list").maxLen(4096)
		sc["digest"] = pStr().maxLen(64)
	}
	addStoragePluginParams(rel, create, sc)
	return sc
}

// storageSchemaFor adds the plugins installed on the node that answers:
// their types to the enum (PVE sorts the registered types) and their
// properties.
func storageSchemaFor(rel pveRelease, create bool) func(c *call) schema {
	return func(c *call) schema {
		sc := storageConfigSchema(rel, create)
		plugins := c.s.st.Nodes[c.listener].StoragePlugins
		if len(plugins) == 0 {
			return sc
		}
		types := builtinStorageTypes(rel)
		for _, p := range plugins {
			types = append(types, p)
			for k, v := range pluginParams(p) {
				sc[k] = v
			}
		}
		sort.Strings(types)
		if create {
			sc["type"] = pEnum(types...).req()
		}
		return sc
	}
}

func registerStorage(t *routeTable) {
	rel := t.rel
	types := pEnum(builtinStorageTypes(rel)...)
	t.add("GET", "/storage", &method{params: schema{"type": types}, paramsFor: func(c *call) schema {
		all := builtinStorageTypes(rel)
		all = append(all, c.s.st.Nodes[c.listener].StoragePlugins...)
		sort.Strings(all)
		return schema{"type": pEnum(all...)}
	}, handler: listStorageConfig})
	t.add("POST", "/storage", &method{params: storageConfigSchema(rel, true), paramsFor: storageSchemaFor(rel, true), handler: createStorage})
	t.add("GET", "/storage/{storage}", &method{params: schema{"storage": storageIDParam()}, handler: readStorageConfig})
	t.add("PUT", "/storage/{storage}", &method{params: storageConfigSchema(rel, false), paramsFor: storageSchemaFor(rel, false), handler: updateStorage})
	t.add("DELETE", "/storage/{storage}", &method{params: schema{"storage": storageIDParam()}, handler: deleteStorage})
	registerStorageStatus(t)
	registerStorageDisks(t)
}

// hasStoragePlugin is whether node has the plugin of type typ (built-in
// types always count as present).
func (s *Sim) hasStorageType(node, typ string) bool {
	st := storeTypes[typ]
	if st == nil {
		return false
	}
	if st.only8 && s.rel.atLeast9() {
		return false
	}
	if !st.plugin {
		return true
	}
	for _, p := range s.st.Nodes[node].StoragePlugins {
		if p == typ {
			return true
		}
	}
	return false
}

// parsedStorageCfg is storage.cfg as node's PVE::Storage::config() sees it
// (Plugin.pm parse_config): sections of types the node has no plugin for
// are skipped, `local` is always there, shared types are shared=1 and an
// empty content is the type's default.
func (s *Sim) parsedStorageCfg(node string) (order []string, ids map[string]*storageEntry) {
	sc := s.storageCfgLocked(node)
	ids = map[string]*storageEntry{}
	for _, id := range sc.Order {
		e := sc.Entries[id]
		if !s.hasStorageType(node, e.Type) {
			continue // "skip section '<id>': unsupported type '<type>'"
		}
		c := &storageEntry{ID: id, Type: e.Type, Opts: map[string]string{}}
		for k, v := range e.Opts {
			c.Opts[k] = v
		}
		st := storeTypes[e.Type]
		if c.Opts["content"] == "" {
			c.Opts["content"] = st.defContent
		}
		if sharedStorageTypes[e.Type] && e.Type != "vitastor" {
			c.Opts["shared"] = "1"
		}
		ids[id] = c
		order = append(order, id)
	}
	if l := ids["local"]; l == nil || l.Type != "dir" || (l.Opts["path"] != "" && l.Opts["path"] != "/var/lib/vz") {
		ids["local"] = &storageEntry{ID: "local", Type: "dir", Opts: map[string]string{
			"path": "/var/lib/vz", "prune-backups": "keep-all=1", "content": "backup,images,iso,rootdir,snippets,vztmpl",
		}}
		order = append([]string{"local"}, order...)
	}
	delete(ids["local"].Opts, "nodes")
	return order, ids
}

// renderStorageCfg is SectionConfig's write_config: header, comment,
// disable (bare), required keys sorted, the rest sorted; booleans 0/1.
func renderStorageCfg(order []string, ids map[string]*storageEntry) string {
	var b strings.Builder
	for _, id := range order {
		e := ids[id]
		st := storeTypes[e.Type]
		fmt.Fprintf(&b, "%s: %s\n", e.Type, id)
		if v := e.Opts["comment"]; v != "" {
			fmt.Fprintf(&b, "\tcomment %s\n", v)
		}
		if e.Opts["disable"] == "1" {
			b.WriteString("\tdisable\n")
		}
		keys := make([]string, 0, len(st.opts))
		for k := range st.opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		line := func(k string) {
			v, ok := e.Opts[k]
			if !ok || v == "" || k == "disable" || k == "comment" {
				return
			}
			fmt.Fprintf(&b, "\t%s %s\n", k, v)
		}
		for _, k := range keys {
			if !st.opts[k].optional {
				line(k)
			}
		}
		for _, k := range keys {
			if st.opts[k].optional {
				line(k)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// storageDigest is the SHA-1 of the raw storage.cfg.
func (s *Sim) storageDigest(node string) string {
	sc := s.storageCfgLocked(node)
	sum := sha1.Sum([]byte(renderStorageCfg(sc.Order, sc.Entries))) //nolint:gosec // PVE's digest
	return hex.EncodeToString(sum[:])
}

// writeStorageCfg is write_config on node: what node parsed is what gets
// written, so sections of plugins the node lacks are lost.
func (s *Sim) writeStorageCfg(node string, order []string, ids map[string]*storageEntry) {
	sc := s.storageCfgLocked(node)
	sc.Order, sc.Entries = nil, map[string]*storageEntry{}
	for _, id := range order {
		e := ids[id]
		// Values parse_config filled in are not written back as such:
		// shared of always-shared types and the default content stay
		// implicit only when they were; PVE writes them, so do we.
		sc.add(e)
	}
	s.saveLocked()
}

// apiStorageConfig is Config.pm's $api_storage_config: the section with
// storage, digest, and numbers for booleans and integers.
func (s *Sim) apiStorageConfig(node string, e *storageEntry) map[string]any {
	out := map[string]any{"storage": e.ID, "type": e.Type, "digest": s.storageDigest(node)}
	for k, v := range e.Opts {
		switch storagePropKinds[k] {
		case tBoolean, tInteger:
			n, _ := strconv.Atoi(v)
			out[k] = n
		default:
			out[k] = v
		}
	}
	return out
}

func listStorageConfig(c *call) (any, *apiError) {
	node := c.listener
	order, ids := c.s.parsedStorageCfg(node)
	sort.Strings(order)
	out := []map[string]any{}
	for _, id := range order {
		if t := c.params["type"]; t != "" && ids[id].Type != t {
			continue
		}
		out = append(out, c.s.apiStorageConfig(node, ids[id]))
	}
	return out, nil
}

func readStorageConfig(c *call) (any, *apiError) {
	_, ids := c.s.parsedStorageCfg(c.listener)
	e := ids[c.params["storage"]]
	if e == nil {
		return nil, die("storage '%s' does not exist\n", c.params["storage"])
	}
	return c.s.apiStorageConfig(c.listener, e), nil
}

// checkStorageConfig is SectionConfig's check_config for a plugin: every
// key must be one of the type's options, fixed keys cannot change, a
// create needs the required ones; content is reduced to what the type
// supports (decode_value).
func checkStorageConfig(typ, id string, params map[string]string, create bool) (map[string]string, error) {
	st := storeTypes[typ]
	if create && (typ == "nfs" || typ == "cephfs" || typ == "glusterfs") && params["path"] == "" {
		params["path"] = "/mnt/pve/" + id
	}
	out := map[string]string{}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o, ok := st.opts[k]
		if !create && ok && o.fixed {
			return nil, fmt.Errorf("can't change value of fixed parameter '%s'", k)
		}
		if !ok {
			return nil, fmt.Errorf("unexpected property '%s'", k)
		}
		v := params[k]
		if k == "content" {
			valid := map[string]bool{}
			for _, x := range st.content {
				valid[x] = true
			}
			var kept []string
			seen := map[string]bool{}
			for _, x := range splitList(v) {
				if valid[x] && !seen[x] {
					kept = append(kept, x)
					seen[x] = true
				}
			}
			if seen["none"] && len(kept) > 1 {
				return nil, fmt.Errorf("unable to combine 'none' with other content types")
			}
			if len(kept) == 0 && !valid["none"] {
				return nil, fmt.Errorf("storage does not support content type 'none'")
			}
			sort.Strings(kept)
			v = strings.Join(kept, ",")
		}
		if k == "nodes" {
			n := splitList(v)
			sort.Strings(n)
			v = strings.Join(n, ",")
		}
		out[k] = v
	}
	if create {
		for k, o := range st.opts {
			if !o.optional {
				if _, ok := params[k]; !ok {
					return nil, fmt.Errorf("missing value for required option '%s'", k)
				}
			}
		}
	}
	return out, nil
}

// storageNoQuorum is what lock_storage_config (pve-storage) dies with
// when pmxcfs is read-only: cfs_lock (pve-cluster) cannot take the lock and
// prefixes its own error. Errors of the locked code itself carry no such
// prefix (pve-cluster e085fe6, 2021: "avoid confusing lock prefix on
// error").
const storageNoQuorum = "cfs-lock 'file-storage_cfg' error: no quorum!\n"

func createStorage(c *call) (any, *apiError) {
	s := c.s
	params := map[string]string{}
	for k, v := range c.params {
		params[k] = v
	}
	typ, id := params["type"], params["storage"]
	delete(params, "type")
	delete(params, "storage")
	if storeTypes[typ] == nil {
		return nil, errf(http.StatusNotImplemented, "pvesim: storage type '%s' is not simulated", typ)
	}
	if s.nodeLockedOut(c) {
		return nil, die("create storage failed: %s", storageNoQuorum)
	}
	if err := s.addStorageLocked(c.listener, typ, id, params); err != nil {
		return nil, die("%s\n", err)
	}
	return map[string]any{"storage": id, "type": typ}, nil
}

// addStorageLocked is Config.pm's create on node (the node the API call
// reached): check_config outside the lock, then under it the duplicate
// check, activate_storage when enabled here, write_config.
func (s *Sim) addStorageLocked(node, typ, id string, params map[string]string) error {
	if params["nodes"] == "" {
		delete(params, "nodes")
	}
	delete(params, "keyring") // sensitive: /etc/pve/priv/ceph/<id>.keyring, not storage.cfg
	opts, err := checkStorageConfig(typ, id, params, true)
	if err != nil {
		return err
	}
	order, ids := s.parsedStorageCfg(node)
	if ids[id] != nil {
		return fmt.Errorf("create storage failed: storage ID '%s' already defined", id)
	}
	e := &storageEntry{ID: id, Type: typ, Opts: opts}
	// activate_storage on this node when enabled here, to fail early.
	if e.Opts["disable"] != "1" && e.onNode(node) {
		if err := s.activateStorageLocked(node, e); err != nil {
			return fmt.Errorf("create storage failed: %w", err)
		}
	}
	ids[id] = e
	order = append(order, id)
	s.writeStorageCfg(node, order, ids)
	return nil
}

// nodeLockedOut: pmxcfs is read-only without quorum.
func (s *Sim) nodeLockedOut(c *call) bool {
	d := s.st.Domains[s.st.Nodes[c.listener].Domain]
	return d.Cluster != nil && !s.quorate(s.st.Nodes[c.listener].Domain, d.Cluster)
}

func updateStorage(c *call) (any, *apiError) {
	s := c.s
	params := map[string]string{}
	for k, v := range c.params {
		params[k] = v
	}
	id, digest, del := params["storage"], params["digest"], params["delete"]
	delete(params, "storage")
	delete(params, "digest")
	delete(params, "delete")
	fail := func(format string, args ...any) *apiError {
		return die("update storage failed: %s\n", fmt.Sprintf(format, args...))
	}
	if s.nodeLockedOut(c) {
		return nil, die("update storage failed: %s", storageNoQuorum)
	}
	node := c.listener
	if digest != "" && digest != s.storageDigest(node) {
		return nil, fail("detected modified configuration - file changed by other user? Try again.")
	}
	order, ids := s.parsedStorageCfg(node)
	e := ids[id]
	if e == nil {
		return nil, fail("storage '%s' does not exist", id)
	}
	delete(params, "keyring")
	opts, err := checkStorageConfig(e.Type, id, params, false)
	if err != nil {
		return nil, fail("%s", err)
	}
	st := storeTypes[e.Type]
	dels := splitList(del)
	for _, k := range dels {
		o, ok := st.opts[k]
		switch {
		case !ok:
			return nil, fail("no such option '%s'", k)
		case !o.optional:
			return nil, fail("unable to delete required option '%s'", k)
		case o.fixed:
			return nil, fail("unable to delete fixed option '%s'", k)
		}
		if _, set := opts[k]; set {
			return nil, fail("cannot set and delete property '%s' at the same time!", k)
		}
	}
	for _, k := range dels {
		delete(e.Opts, k)
	}
	for k, v := range opts {
		e.Opts[k] = v
	}
	s.writeStorageCfg(node, order, ids)
	return map[string]any{"storage": id, "type": e.Type}, nil
}

func deleteStorage(c *call) (any, *apiError) {
	s := c.s
	id := c.params["storage"]
	if s.nodeLockedOut(c) {
		return nil, die("delete storage failed: %s", storageNoQuorum)
	}
	node := c.listener
	order, ids := s.parsedStorageCfg(node)
	e := ids[id]
	if e == nil {
		return nil, die("delete storage failed: storage '%s' does not exist\n", id)
	}
	// storage_is_used: an lvm storage whose base volume is on it.
	for _, o := range ids {
		if b := o.Opts["base"]; b != "" {
			if sid, _, err := splitVolid(b); err == nil && sid == id {
				return nil, die("delete storage failed: can't remove storage - storage is used as base of another storage\n")
			}
		}
	}
	delete(ids, id)
	for i, o := range order {
		if o == id {
			order = append(order[:i], order[i+1:]...)
			break
		}
	}
	s.writeStorageCfg(node, order, ids)
	return nil, nil
}

// activateStorageLocked is activate_storage on node: block and pool
// storages need their volume group, thin pool or zpool there.
func (s *Sim) activateStorageLocked(node string, e *storageEntry) error {
	ns := s.st.Nodes[node]
	switch e.Type {
	case "lvmthin":
		vg, lv := e.Opts["vgname"], e.Opts["thinpool"]
		if s.thinPools(ns)[vg+"/"+lv] == nil {
			return fmt.Errorf("no such logical volume %s/%s", vg, lv)
		}
	case "lvm":
		if !s.hasVG(ns, e.Opts["vgname"]) {
			return fmt.Errorf("volume group '%s' not found", e.Opts["vgname"])
		}
	case "zfspool":
		pool, _, _ := strings.Cut(e.Opts["pool"], "/")
		if ns.ZPools[pool] == nil {
			return fmt.Errorf("could not activate storage '%s', zfs error: cannot open '%s': no such pool", e.ID, pool)
		}
	case "rbd":
		if e.Opts["monhost"] == "" && s.st.Domains[ns.Domain].Ceph == nil {
			return fmt.Errorf("pveceph configuration not initialized")
		}
	}
	return nil
}
