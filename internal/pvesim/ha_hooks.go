package pvesim

import (
	"fmt"
	"regexp"
	"time"
)

// Hooks for HA tests: how long the HA manager takes, starts that fail, and
// migrations the HA manager decides on its own.

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

// HAMigrate makes the HA manager migrate VM vmid to target now, as node
// maintenance, the CRS rebalancing or an operator's `ha-manager migrate`
// do: the service enters `migrate`, and the source node's LRM runs a
// qmigrate task that holds the config's `migrate` lock for extra (plus
// the task's run time), moves the config to target and leaves the
// service `started` there. It returns once the migration ended, with the
// CRM's refusal if it did not start.
func (s *Sim) HAMigrate(vmid int, target string, extra time.Duration) error {
	return s.haMigrateAndWait(vmid, target, "migrate", extra)
}

// HARelocate is HAMigrate for `ha-manager relocate`: the guest is shut
// down, moved offline and started again on target.
func (s *Sim) HARelocate(vmid int, target string, extra time.Duration) error {
	return s.haMigrateAndWait(vmid, target, "relocate", extra)
}

// HAMigrateOnRequest starts an HA migration of vmid to target (as
// HAMigrate, without waiting for it) just before the first request whose
// method and API path (a regexp, anchored) match is served and at which
// the HA manager can start it (the VM is in HA, unlocked, not on target):
// an apply then meets the migration at the step the test picks.
func (s *Sim) HAMigrateOnRequest(vmid int, target string, extra time.Duration, method, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.triggers = append(s.triggers, &requestTrigger{method: method, path: regexp.MustCompile("^(?:" + path + ")$"), fire: func() bool {
		h := s.haOfVMLocked(vmid)
		return h != nil && s.haMigrateLocked(h, vmid, target, "migrate", extra, nil) == nil
	}})
}

// WaitHAMigrations returns once no HA migration runs (one a hamigrate
// task queued, or a hook started).
func (s *Sim) WaitHAMigrations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.haMigrations > 0 {
		s.haMigrationsCond().Wait()
	}
}

func (s *Sim) haMigrateAndWait(vmid int, target, cmd string, extra time.Duration) error {
	s.mu.Lock()
	h := s.haOfVMLocked(vmid)
	if h == nil {
		s.mu.Unlock()
		return fmt.Errorf("service 'vm:%d' not managed by HA", vmid)
	}
	ended := make(chan struct{})
	err := s.haMigrateLocked(h, vmid, target, cmd, extra, func() { close(ended) })
	s.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-ended:
		return nil
	case <-s.closing:
		return fmt.Errorf("simulator closed during the migration of VM %d", vmid)
	}
}

// haOfVMLocked is the HA config of the trust domain that has vmid.
func (s *Sim) haOfVMLocked(vmid int) *haConfig {
	node, _ := s.findVMLocked(vmid)
	if node == "" {
		return nil
	}
	return s.haDomainLocked(node)
}
