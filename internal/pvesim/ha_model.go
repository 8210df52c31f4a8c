package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The HA manager as a model: the CRM's rounds and the states it drives
// services through, pure over the HA config and the guests.

// haManageLocked is one CRM round: every configured, not ignored resource
// whose guest exists gets a service entry with the state the CRM is to
// bring it to; haTickLocked applies what is due (at once unless
// SetHACRMDelay asked for a delay).
func (s *Sim) haManageLocked(listener string, h *haConfig) {
	for sid := range h.Services {
		if r := h.Resources[sid]; r == nil || r.Opts["state"] == "ignored" {
			delete(h.Services, sid)
		}
	}
	now := time.Now()
	for _, sid := range sortedKeys(h.Resources) {
		req := haRequestState(h.Resources[sid])
		if req == "ignored" {
			continue
		}
		_, name, _ := strings.Cut(sid, ":")
		id, _ := strconv.Atoi(name)
		node, vm := s.guestNodeLocked(listener, id)
		if vm == nil {
			continue
		}
		if h.MasterNode == "" {
			h.MasterNode = listener
		}
		target := "stopped" // stopped, disabled
		if req == "started" {
			target = "started"
		}
		svc := h.Services[sid]
		if svc == nil {
			// A new service starts out as its guest is.
			svc = &haService{State: "stopped"}
			if vm.Status == "running" {
				svc.State, svc.Running = "started", true
			}
			h.Services[sid] = svc
		}
		svc.Node = node
		if svc.Target != target {
			svc.Target, svc.Since = target, now
			svc.UID = haUID(sid, req+now.String())
		}
	}
	s.haTickLocked(h)
}

// haRequestState is the resource's request state with PVE's defaults
// (unset and `enabled` are `started`).
func haRequestState(r *haSection) string {
	req := r.Opts["state"]
	if req == "" || req == "enabled" {
		return "started"
	}
	return req
}

// haTickLocked lets the CRM and LRMs finish what is due: the guest is
// started or stopped and the service takes its target state, or `error`
// for a start that SetHAStartFails made fail.
func (s *Sim) haTickLocked(h *haConfig) {
	now := time.Now()
	for sid, svc := range h.Services {
		if svc.Target == "" || svc.State == svc.Target || now.Before(svc.Since.Add(h.crmDelay)) {
			continue
		}
		if svc.State == "error" && haRequestState(h.Resources[sid]) != "disabled" {
			continue // only disabled clears the error state
		}
		_, name, _ := strings.Cut(sid, ":")
		id, _ := strconv.Atoi(name)
		var vm *qemuVM
		if ns := s.st.Nodes[svc.Node]; ns != nil {
			vm = ns.VMs[id]
		}
		switch {
		case vm == nil:
			continue
		case svc.Target == "started" && h.failStart[sid]:
			svc.State, svc.Running = "error", false
			svc.Target = "error"
		case svc.Target == "started":
			vm.Status = "running"
			svc.State, svc.Running = "started", true
		default:
			vm.Status = "stopped"
			svc.State, svc.Running = "stopped", false
		}
	}
}

// haVerboseState is get_verbose_service_state: what the status shows for
// a service, with fast feedback while the CRM works on a request.
func haVerboseState(svc *haService, req string) string {
	if svc == nil {
		return "queued"
	}
	switch svc.State {
	case "stopped":
		switch req {
		case "started":
			return "starting"
		case "disabled":
			return "disabled"
		}
	case "started":
		if req == "stopped" || req == "disabled" {
			return "stopping"
		}
		if !svc.Running {
			return "starting"
		}
	case "error":
		if req == "disabled" {
			return "clearing error flag"
		}
	}
	return svc.State
}

// haUID is the uid the CRM gives a service state change.
func haUID(sid, state string) string {
	sum := sha1.Sum([]byte(sid + state))
	return hex.EncodeToString(sum[:])[:22]
}

// haStateLocked is the `hastate` of a guest's /cluster/resources row: its
// service state in the manager status, else the state configured in
// resources.cfg; "" when HA does not manage it (or no state is set).
func (s *Sim) haStateLocked(node string, vmid int) string {
	ns := s.st.Nodes[node]
	if ns == nil {
		return ""
	}
	d := s.st.Domains[ns.Domain]
	if d == nil || d.HA == nil {
		return ""
	}
	s.haTickLocked(d.HA)
	sid := fmt.Sprintf("vm:%d", vmid)
	if svc := d.HA.Services[sid]; svc != nil {
		return svc.State
	}
	// Not (yet) in the manager status, such as ignored: the configured
	// request state, if one is set.
	if r := d.HA.Resources[sid]; r != nil {
		return r.Opts["state"]
	}
	return ""
}
