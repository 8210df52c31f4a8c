package pvesim

import (
	"fmt"
	"strings"
)

// What qemu-server does with HA for a guest (PVE::API2::Qemu), for the VM
// handlers to call with s.mu held; node is any node of the guest's trust
// domain (the listener).

// haDomainLocked is the HA config of node's trust domain, nil when none.
func (s *Sim) haDomainLocked(node string) *haConfig {
	ns := s.st.Nodes[node]
	if ns == nil {
		return nil
	}
	d := s.st.Domains[ns.Domain]
	if d == nil {
		return nil
	}
	return d.HA
}

// haConfiguredLocked is service_is_configured("vm:<vmid>"): the VM is in
// resources.cfg, whatever its state. VM destroy without purge dies with
// "unable to remove VM <vmid> - used in HA resources and purge parameter
// not set." when it is.
func (s *Sim) haConfiguredLocked(node string, vmid int) bool {
	h := s.haDomainLocked(node)
	return h != nil && h.Resources[fmt.Sprintf("vm:%d", vmid)] != nil
}

// haManagedLocked is vm_is_ha_managed: configured and not `ignored`. VM
// start then runs a `hastart` task and stop/shutdown a `hastop` task that
// go through the HA manager (haRequestLocked) instead of acting directly.
func (s *Sim) haManagedLocked(node string, vmid int) bool {
	h := s.haDomainLocked(node)
	if h == nil {
		return false
	}
	r := h.Resources[fmt.Sprintf("vm:%d", vmid)]
	return r != nil && r.Opts["state"] != "ignored"
}

// haRequestLocked is `ha-manager set vm:<vmid> --state started` (what a
// hastart task runs) or, with "stopped", `ha-manager crm-command stop`
// (hastop), which the CRM turns into request state stopped; with
// ha-managed=1 on create it is `ha-manager add` for a VM HA does not have
// yet. The CRM then acts as after an API write. It returns false when
// node's domain has no such guest.
func (s *Sim) haRequestLocked(node string, vmid int, state string) bool {
	if _, vm := s.guestNodeLocked(node, vmid); vm == nil {
		return false
	}
	d := s.st.Domains[s.st.Nodes[node].Domain]
	if d.HA == nil {
		d.HA = &haConfig{}
	}
	h := d.HA
	if h.Resources == nil {
		h.Resources = map[string]*haSection{}
	}
	if h.Services == nil {
		h.Services = map[string]*haService{}
	}
	sid := fmt.Sprintf("vm:%d", vmid)
	r := h.Resources[sid]
	if r == nil {
		r = &haSection{Type: "vm", Opts: map[string]string{}}
		h.Resources[sid] = r
	}
	r.Opts["state"] = state
	s.haManageLocked(node, h)
	return true
}

// haPurgeGuestLocked is delete_service_from_config("vm:<vmid>", 1), as VM
// destroy with purge=1 does: the resource goes, and on PVE 9 the VM leaves
// its rules (a rule left empty is deleted).
func (s *Sim) haPurgeGuestLocked(node string, vmid int) {
	h := s.haDomainLocked(node)
	if h == nil {
		return
	}
	sid := fmt.Sprintf("vm:%d", vmid)
	delete(h.Resources, sid)
	delete(h.Services, sid)
	haPurgeFromRules(h, sid)
}

// haPurgeFromRules removes sid from every rule and deletes rules left
// without resources (delete_service_from_config with purge).
func haPurgeFromRules(h *haConfig, sid string) {
	for id, rule := range h.Rules {
		var keep []string
		for _, r := range splitList(rule.Opts["resources"]) {
			if r != sid {
				keep = append(keep, r)
			}
		}
		if len(keep) == 0 {
			delete(h.Rules, id)
			continue
		}
		rule.Opts["resources"] = strings.Join(keep, ",")
	}
}

// haGuestRequestLocked is what the hastart, hastop and hamigrate tasks of
// an HA-managed VM ask the CRM for: "started", "stopped" or
// "migrate:<node>". The CRM acts at once (as haRequestLocked); a
// migration is queued, as `ha-manager migrate` does, and the LRM carries
// it out after the task ended (haMigrateLocked).
func (s *Sim) haGuestRequestLocked(node string, vmid int, request string) error {
	if target, ok := strings.CutPrefix(request, "migrate:"); ok {
		from, vm := s.guestNodeLocked(node, vmid)
		if vm == nil || s.haDomainLocked(node) == nil {
			return fmt.Errorf("service 'vm:%d' not found", vmid)
		}
		if from == target {
			return nil // the CRM ignores it: already there
		}
		return s.haMigrateLocked(s.haDomainLocked(node), vmid, target, "migrate", 0, nil)
	}
	if !s.haRequestLocked(node, vmid, request) {
		return fmt.Errorf("service 'vm:%d' not found", vmid)
	}
	return nil
}
