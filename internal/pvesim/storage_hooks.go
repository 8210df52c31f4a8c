package pvesim

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
