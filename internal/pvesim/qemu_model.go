package pvesim

import "sort"

// qemuVM is one VM as qemu-server keeps it: /etc/pve/qemu-server/<vmid>.conf
// on its node (Config, plus the [PENDING] section) and the running state.
type qemuVM struct {
	VMID int `json:"vmid"`
	// Config is the current config by key (scsi0, cores, ...), values as
	// the file writes them.
	Config map[string]string `json:"config"`
	// Pending are changes waiting for a restart; PendingDelete the keys
	// to be removed then.
	Pending       map[string]string `json:"pending,omitempty"`
	PendingDelete []string          `json:"pending_delete,omitempty"`
	// Status is "running" or "stopped".
	Status string `json:"status"`
	// Lock is the config's lock property (migrate, backup, ...), "" when
	// unlocked. (qemu.go keeps it in Config["lock"] and mirrors it here.)
	Lock string `json:"lock,omitempty"`
	// StartTime is when the VM was started (unix seconds), PID its
	// simulated QEMU process.
	StartTime int64 `json:"start_time,omitempty"`
	PID       int   `json:"pid,omitempty"`

	// flock is /var/lock/qemu-server/lock-<vmid>.conf (qemu_lock.go).
	flock *vmFlock
}

// guestNodeLocked is the node whose config holds vmid, as
// PVE::Cluster::get_vmlist sees it across the node's trust domain.
func (s *Sim) guestNodeLocked(fromNode string, vmid int) (string, *qemuVM) {
	dom := s.st.Nodes[fromNode].Domain
	for _, name := range s.st.NodeOrder {
		n := s.st.Nodes[name]
		if n.Domain != dom {
			continue
		}
		if vm := n.VMs[vmid]; vm != nil {
			return name, vm
		}
	}
	return "", nil
}

// guestIDsLocked lists the VM ids of the node's trust domain, sorted.
func (s *Sim) guestIDsLocked(fromNode string) []int {
	dom := s.st.Nodes[fromNode].Domain
	var ids []int
	for _, name := range s.st.NodeOrder {
		n := s.st.Nodes[name]
		if n.Domain != dom {
			continue
		}
		for id := range n.VMs {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}
