package pvesim

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"
)

// Test hooks for VMs (pve_vm, pve_vm_disk tests): read what PVE has
// without going through the API, and set what only the CLI or a running
// operation would (a config lock).

// VMConfig returns VM vmid's current config (without pending changes) and
// the node that holds it; nil and "" when no node has it.
func (s *Sim) VMConfig(vmid int) (map[string]string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	node, vm := s.findVMLocked(vmid)
	if vm == nil {
		return nil, ""
	}
	out := make(map[string]string, len(vm.Config))
	for k, v := range vm.Config {
		out[k] = v
	}
	return out, node
}

// VMPending returns the VM's [PENDING] values and its pending deletes
// ("!key" = forced).
func (s *Sim) VMPending(vmid int) (map[string]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, vm := s.findVMLocked(vmid)
	if vm == nil {
		return nil, nil
	}
	out := make(map[string]string, len(vm.Pending))
	for k, v := range vm.Pending {
		out[k] = v
	}
	return out, append([]string(nil), vm.PendingDelete...)
}

// VMStatus is "running", "stopped", or "" when the VM does not exist.
func (s *Sim) VMStatus(vmid int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, vm := s.findVMLocked(vmid)
	if vm == nil {
		return ""
	}
	vm.normalize()
	return vm.Status
}

// SetVMLock sets the VM's `lock` property as a running backup or
// migration would ("" clears it).
func (s *Sim) SetVMLock(vmid int, lock string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, vm := s.findVMLocked(vmid); vm != nil {
		vm.normalize()
		vm.setLock(lock)
		s.saveLocked()
	}
}

// VolumeSize returns the size in bytes of volid as node sees it, and
// whether the volume exists.
func (s *Sim) VolumeSize(node, volid string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Nodes[node] == nil {
		return 0, false
	}
	v, err := s.volumeLocked(node, volid)
	if err != nil {
		return 0, false
	}
	return v.Size, true
}

// VMVolumes lists the volids of vmid on storage as node sees them.
func (s *Sim) VMVolumes(node, storage string, vmid int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Nodes[node] == nil {
		return nil
	}
	var out []string
	for _, v := range s.storageVolumesLocked(node, storage, vmid) {
		out = append(out, v.volid())
	}
	return out
}

// PutCDImage puts an ISO image of size bytes on a directory-like storage
// as node sees it ("<storage>:iso/<file>.iso", content iso), as an upload
// leaves it, for a VM's CD drive to use.
func (s *Sim) PutCDImage(node, volid string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Nodes[node] == nil {
		return fmt.Errorf("no node %s", node)
	}
	store, name, err := splitVolid(volid)
	if err != nil {
		return err
	}
	if vtype, err := s.driveVolnameLocked(node, store, name); err != nil || vtype != "iso" {
		return fmt.Errorf("%s is not an ISO image's volume id (%w)", volid, err)
	}
	e, _ := s.storageEntryLocked(node, store) // found by driveVolnameLocked
	v := &simVolume{Storage: store, Name: name, Size: size, Format: "iso"}
	s.volumesLocked(node, e)[volid] = v
	s.saveLocked()
	return nil
}

// findVMLocked looks vmid up on every node (any trust domain).
func (s *Sim) findVMLocked(vmid int) (string, *qemuVM) {
	for _, name := range s.st.NodeOrder {
		if vm := s.st.Nodes[name].VMs[vmid]; vm != nil {
			return name, vm
		}
	}
	return "", nil
}

// CreateVMOnRequest starts a create of VM vmid on node by someone else
// (root@pam: the GUI, a parallel apply) with params, just before the first
// request matching method and path (a regexp, anchored) at which no node
// has vmid: a failed create whose worker freed the id then meets a VM it
// did not make.
func (s *Sim) CreateVMOnRequest(node string, vmid int, params map[string]string, method, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.triggers = append(s.triggers, &requestTrigger{method: method, path: regexp.MustCompile("^(?:" + path + ")$"), fire: func() bool {
		if n, _ := s.findVMLocked(vmid); n != "" {
			return false
		}
		p := map[string]string{"node": node, "vmid": strconv.Itoa(vmid)}
		maps.Copy(p, params)
		_, aerr := createVM(&call{s: s, listener: node, method: "POST", path: fmt.Sprintf("/nodes/%s/qemu", node), params: p, user: "root@pam"})
		return aerr == nil
	}})
}
