package pvesim

import (
	"fmt"
	"time"
)

// Hooks for HA tests: how long the HA manager takes, and starts that fail.

// SetHACRMDelay makes the CRM and LRMs act on a request state after d
// instead of at once, as on a real cluster (some seconds): until then the
// status shows `starting`/`stopping` and the guest is unchanged.
func (s *Sim) SetHACRMDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, dom := range s.st.Domains {
		if dom.HA == nil {
			dom.HA = &haConfig{}
		}
		dom.HA.crmDelay = d
	}
}

// SetHAStartFails makes every HA start of the VM fail: the CRM puts the
// service into the `error` state, as after max_restart and max_relocate
// failed tries.
func (s *Sim) SetHAStartFails(vmid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, dom := range s.st.Domains {
		if dom.HA == nil {
			dom.HA = &haConfig{}
		}
		if dom.HA.failStart == nil {
			dom.HA.failStart = map[string]bool{}
		}
		dom.HA.failStart[fmt.Sprintf("vm:%d", vmid)] = true
	}
}
