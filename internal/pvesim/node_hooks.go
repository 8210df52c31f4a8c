package pvesim

// Test hooks: what a node's SSH side holds, and changes made behind the
// provider's back (drift).

// TunedProfile returns node's active tuned profile ("" when off).
func (s *Sim) TunedProfile(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.execState(node).Tuned
}

// SetTunedProfile changes node's tuned profile, as an admin would.
func (s *Sim) SetTunedProfile(node, profile string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execState(node).Tuned = profile
	s.saveLocked()
}

// NICRing returns iface's current ring sizes on node.
func (s *Sim) NICRing(node, iface string) (rx, tx int, ok bool) {
	m, ok := nicModelOf(iface)
	if !ok {
		return 0, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.execState(node).ring(iface, m)
	return r.RX, r.TX, true
}

// SetNICRing changes iface's ring sizes on node without checks.
func (s *Sim) SetNICRing(node, iface string, rx, tx int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.execState(node)
	if st.Rings == nil {
		st.Rings = map[string]*nicRing{}
	}
	st.Rings[iface] = &nicRing{RX: rx, TX: tx}
	s.saveLocked()
}

// UnitState returns a unit's UnitFileState and ActiveState on node; ok is
// false for a unit the node does not have.
func (s *Sim) UnitState(node, unit string) (enabled, active string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.execState(node).Units[unitName(unit)]
	if u == nil {
		return "", "", false
	}
	return u.Enabled, u.Active, true
}

// SetUnitState sets (or adds) a unit on node.
func (s *Sim) SetUnitState(node, unit, enabled, active string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execState(node).Units[unitName(unit)] = &simUnit{Enabled: enabled, Active: active}
	s.saveLocked()
}

// NodeFile returns a file as node sees it.
func (s *Sim) NodeFile(node, path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := (&sshExec{s: s, node: node, root: true}).lookupFile(path)
	if err != nil {
		return nil, false
	}
	return append([]byte(nil), f.Content...), true
}

// SetNodeFile writes a file on node (mode 0644 root:root outside
// /etc/pve), as an admin would.
func (s *Sim) SetNodeFile(node, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &sshExec{s: s, node: node, root: true}
	_ = x.storeFile(path, &simFile{Content: append([]byte(nil), content...), Mode: 0o644, Owner: "root", Group: "root"})
	s.saveLocked()
}

// TrustedCAs lists the files under /usr/local/share/ca-certificates the
// node's trust store holds since its last update-ca-certificates.
func (s *Sim) TrustedCAs(node string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.execState(node).CATrusted...)
}

// RebootNode reboots node: its SSH connections drop, NIC rings return to
// their driver defaults, enabled units start (the ExecStart lines of unit
// files under /etc/systemd/system run), disabled ones stay stopped. Files,
// the tuned profile and the API state survive.
func (s *Sim) RebootNode(node string) {
	s.mu.Lock()
	st := s.execState(node)
	st.Rings = nil
	// networking.service brings the file up; transient units are gone.
	s.reloadNetworkLocked(s.st.Nodes[node])
	s.dropTransientTimersLocked(node)
	s.bootUnits(node)
	s.saveLocked()
	s.mu.Unlock()
	s.DropSSHConnections(node)
}

// DiskOverwrite is a write benchmark on a device that held something.
type DiskOverwrite struct {
	Node   string `json:"node"`
	Device string `json:"device"` // as fio was given it
	Disk   string `json:"disk"`   // the whole disk
	Held   string `json:"held"`   // what was on it
	OSDs   []int  `json:"osds,omitempty"`
}

// Test hooks.

// DiskOverwrites lists the write benchmarks that ran on devices holding
// something (partitions, LVM, a filesystem, a Ceph OSD), on every node.
func (s *Sim) DiskOverwrites() []DiskOverwrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []DiskOverwrite
	for _, n := range s.st.NodeOrder {
		if b := s.st.Nodes[n].Bench; b != nil {
			out = append(out, b.Overwrites...)
		}
	}
	return out
}

// SetFioInstalled installs or removes fio on node (PVE does not ship it).
func (s *Sim) SetFioInstalled(node string, installed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.benchState(node).FioMissing = !installed
	s.saveLocked()
}

// PowerOff simulates a node that is shut down: its listener drops every
// connection, its cluster peers see it offline. PowerOn reverses it.
func (s *Sim) PowerOff(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.offline == nil {
		s.offline = map[string]bool{}
	}
	s.offline[node] = true
}

// PowerOn brings a node PowerOff stopped back.
func (s *Sim) PowerOn(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.offline, node)
}
