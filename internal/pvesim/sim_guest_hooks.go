package pvesim

import "strconv"

// Hooks for guests, for tests that need a VM before the VM API exists or
// without going through it.

// CreateTestVM puts a minimal stopped VM on node, as if
// /etc/pve/qemu-server/<vmid>.conf had been written there.
func (s *Sim) CreateTestVM(node string, vmid int, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		panic("pvesim: CreateTestVM: unknown node " + node)
	}
	if ns.VMs == nil {
		ns.VMs = map[int]*qemuVM{}
	}
	ns.VMs[vmid] = &qemuVM{
		VMID:   vmid,
		Config: map[string]string{"name": name, "memory": "2048", "cores": "1", "ostype": "l26", "smbios1": "uuid=00000000-0000-4000-8000-" + pad12(vmid)},
		Status: "stopped",
	}
	s.saveLocked()
}

func pad12(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 12 {
		s = "0" + s
	}
	return s
}

// GuestStatus is a guest's run state ("running", "stopped") and node, ""
// when no node of the cluster has it.
func (s *Sim) GuestStatus(vmid int) (status, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, dom := range s.st.Domains {
		if dom.HA != nil {
			s.haTickLocked(dom.HA)
		}
	}
	for _, name := range s.st.NodeOrder {
		if vm := s.st.Nodes[name].VMs[vmid]; vm != nil {
			return vm.Status, name
		}
	}
	return "", ""
}

// SetGuestStatus changes a guest's run state behind PVE's back (a crash,
// or a qm stop on the node).
func (s *Sim) SetGuestStatus(vmid int, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.st.NodeOrder {
		if vm := s.st.Nodes[name].VMs[vmid]; vm != nil {
			vm.Status = status
		}
	}
	s.saveLocked()
}
