package pvesim

import (
	"fmt"
	"sort"
)

// AddStorage defines storage id in node's storage.cfg (its trust
// domain), as `pvesm add <type> <id> --<opt> <value>...` would, for tests
// that need a storage the installer does not create. An rbd storage
// without monhost keeps its volumes as images of the Ceph pool opts["pool"].
func (s *Sim) AddStorage(node, id, typ string, opts map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Nodes[node] == nil {
		return
	}
	o := make(map[string]string, len(opts))
	for k, v := range opts {
		o[k] = v
	}
	s.storageCfgLocked(node).add(&storageEntry{ID: id, Type: typ, Opts: o})
	s.saveLocked()
}

// InstallStoragePlugin installs a third-party storage plugin (drbd for
// LINSTOR, vitastor) on node, as installing its Debian package does.
func (s *Sim) InstallStoragePlugin(node, typ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		return fmt.Errorf("no node %s", node)
	}
	if st := storeTypes[typ]; st == nil || !st.plugin {
		return fmt.Errorf("no storage plugin %q", typ)
	}
	if !s.hasStorageType(node, typ) {
		ns.StoragePlugins = append(ns.StoragePlugins, typ)
		sort.Strings(ns.StoragePlugins)
	}
	s.saveLocked()
	return nil
}

// StorageCfg returns /etc/pve/storage.cfg of node's cluster as PVE writes
// it (sections of every type, as stored).
func (s *Sim) StorageCfg(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.storageCfgLocked(node)
	return renderStorageCfg(sc.Order, sc.Entries)
}

// FileData returns the bytes of a file volume (an ISO image uploaded or
// downloaded onto a storage) as node sees it, and whether it exists.
func (s *Sim) FileData(node, volid string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Nodes[node] == nil {
		return nil, false
	}
	v, err := s.volumeLocked(node, volid)
	if err != nil {
		return nil, false
	}
	return append([]byte(nil), v.Data...), true
}
