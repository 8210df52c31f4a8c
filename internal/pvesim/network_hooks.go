package pvesim

import (
	"fmt"
	"time"
)

// Test controls of the nodes' network: NIC carrier, reachability, the
// interfaces file, transient timers.

// SetNICLink plugs (up) or pulls (down) the cable of node's physical NIC;
// the node's reachability follows at once.
func (s *Sim) SetNICLink(node, nic string, up bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		return fmt.Errorf("no node %q", node)
	}
	if !ns.isPhysical(nic) {
		return fmt.Errorf("node %s has no NIC %q", node, nic)
	}
	if ns.NICs == nil {
		// Until now every NIC had link.
		ns.NICs = map[string]*simNIC{}
		for _, p := range ns.Physical {
			ns.NICs[p] = &simNIC{Name: p, Link: true}
		}
	}
	if ns.NICs[nic] == nil {
		ns.NICs[nic] = &simNIC{Name: nic, Link: true}
	}
	ns.NICs[nic].Link = up
	s.updateReachLocked(node)
	s.saveLocked()
	return nil
}

// Reachable reports whether node answers on its management address, and
// why not (network_reach_model.go).
func (s *Sim) Reachable(node string) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		return false, "no such node"
	}
	return ns.reachable()
}

// NetworkInterfacesFile is node's /etc/network/interfaces as cat prints it.
func (s *Sim) NetworkInterfacesFile(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil || ns.Applied == nil {
		return ""
	}
	return ns.Applied.fileText()
}

// WaitTimersIdle waits until node has no transient timer that is still to
// fire (systemd-run --on-active): each has fired and run its service, or
// was stopped.
func (s *Sim) WaitTimersIdle(node string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		tt := s.nodeOS.timers
		pending := 0
		for _, t := range tt.byNode[node] {
			if !t.fired {
				pending++
			}
		}
		ch := tt.changed
		s.mu.Unlock()
		if pending == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("node %s: %d transient timer(s) still armed after %s", node, pending, timeout)
		case <-s.closing:
			return fmt.Errorf("simulator closed")
		}
	}
}
