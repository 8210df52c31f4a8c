package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
		if svc == nil && !s.haTakenUpLocked(h, sid, node, now) {
			continue // queued until the CRM's next round
		}
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

// haTakenUpLocked reports whether the CRM has taken up a resource it does
// not manage yet: at once without an HA delay, else one round (haDelay)
// after it first could see it, as pve-ha-crm's loop does (a new resource
// shows "queued" until then).
func (s *Sim) haTakenUpLocked(h *haConfig, sid, node string, now time.Time) bool {
	d := s.haDelay(h)
	if d <= 0 {
		delete(h.queued, sid)
		return true
	}
	if h.queued == nil {
		h.queued = map[string]time.Time{}
	}
	since, ok := h.queued[sid]
	if !ok {
		h.queued[sid] = now
		return false
	}
	if now.Before(since.Add(d)) {
		return false
	}
	delete(h.queued, sid)
	s.recordHASpan(node, sid, since, d)
	return true
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
	if h.MasterNode != "" && !h.managing {
		for _, since := range h.queued {
			if !now.Before(since.Add(s.haDelay(h))) {
				// A round passed for what was queued: the CRM takes it up
				// (and comes back here with nothing due).
				h.managing = true
				s.haManageLocked(h.MasterNode, h)
				h.managing = false
				return
			}
		}
	}
	delay := s.haDelay(h)
	for sid, svc := range h.Services {
		if svc.Target == "" || svc.State == svc.Target || now.Before(svc.Since.Add(delay)) {
			continue
		}
		if svc.State == "migrate" || svc.State == "relocate" {
			continue // the LRM's migration ends it (haMigrateLocked)
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
			s.recordHASpan(svc.Node, sid, svc.Since, delay)
		default:
			vm.Status = "stopped"
			svc.State, svc.Running = "stopped", false
			s.recordHASpan(svc.Node, sid, svc.Since, delay)
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

// haMigrateLocked is the CRM and the LRM carrying out `migrate` (or
// `relocate`) of vm:<vmid> to target, as for `ha-manager migrate`, node
// maintenance or a CRS rebalance (Manager.pm next_state_started,
// Resources/PVEVM.pm migrate). The service enters the state at once
// (node = source, target = target). The source's LRM calls migrate_vm as
// root@pam with force and with-local-disks, online for a running guest
// (relocate shuts it down first): a qmigrate task on the source whose
// worker puts `lock: migrate` into the config, takes extra (plus the
// task's run time), then moves the config to target's qemu-server
// directory and unlocks it; the CRM then puts the service back to
// `started` (or `stopped`) on target. Meanwhile writers of the VM get
// "VM is locked (migrate)", and once the config moved the source answers
// "Configuration file 'nodes/<source>/qemu-server/<vmid>.conf' does not
// exist". done, if not nil, runs when the migration ended either way
// (and WaitHAMigrations returns once none runs).
func (s *Sim) haMigrateLocked(h *haConfig, vmid int, target, cmd string, extra time.Duration, done func()) error {
	sid := fmt.Sprintf("vm:%d", vmid)
	s.haTickLocked(h)
	svc := h.Services[sid]
	if svc == nil {
		return fmt.Errorf("service '%s' not managed by HA", sid)
	}
	if svc.State == "migrate" || svc.State == "relocate" {
		return fmt.Errorf("service '%s' is already in state '%s'", sid, svc.State)
	}
	from := svc.Node
	ns, ts := s.st.Nodes[from], s.st.Nodes[target]
	if ts == nil || ns == nil || ts.Domain != ns.Domain {
		return fmt.Errorf("ignore service '%s' %s request - node '%s' not online", sid, cmd, target)
	}
	if from == target {
		return fmt.Errorf("ignore service '%s' %s request - service already on node '%s'", sid, cmd, target)
	}
	vm := ns.VMs[vmid]
	if vm == nil {
		return fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", from, vmid) //nolint:staticcheck // PVE's text
	}
	vm.normalize()
	if e := vm.checkLock(); e != nil {
		return errors.New(e.Message)
	}
	if aerr := s.checkStorageOnTargetLocked(from, target, vm); aerr != nil {
		return errors.New(aerr.Message)
	}
	prev := svc.State
	svc.State, svc.MigrateTo, svc.UID = cmd, target, haUID(sid, cmd+time.Now().String())
	wasRunning := vm.running()
	if cmd == "relocate" && wasRunning {
		s.powerOffLocked(vm)
	}
	vm.setLock("migrate")
	s.writeVMLocked(vm)
	s.haMigrations++
	ended := func() {
		s.haMigrations--
		s.haMigrationsCond().Broadcast()
		if done != nil {
			done()
		}
	}
	lrm := &call{s: s, listener: from, method: "POST", path: fmt.Sprintf("/nodes/%s/qemu/%d/migrate", from, vmid),
		params: map[string]string{"node": from, "vmid": strconv.Itoa(vmid), "target": target}, user: "root@pam"}
	// back is where the CRM puts the service when the migration failed:
	// the state it had, on the source.
	back := func() {
		vm.setLock("")
		s.writeVMLocked(vm)
		if svc := h.Services[sid]; svc != nil && svc.State == cmd {
			svc.State, svc.MigrateTo = prev, ""
		}
		ended()
	}
	upid := s.startTaskLocked(lrm, "qmigrate", strconv.Itoa(vmid), func(t *task) (int, error) {
		t.Log = append(t.Log, fmt.Sprintf("starting migration of VM %d to node '%s'", vmid, target))
		s.waitLocked(extra)
		if err := s.moveVMLocked(vm, from, target, &t.Log); err != nil {
			back()
			return 0, err
		}
		vm.setLock("")
		s.writeVMLocked(vm)
		r := h.Resources[sid]
		if cmd == "relocate" && wasRunning && r != nil && haRequestState(r) == "started" {
			s.powerOnLocked(target, vm)
		}
		if svc := h.Services[sid]; svc != nil && svc.State == cmd {
			svc.Node, svc.MigrateTo = target, ""
			svc.State, svc.Running = "stopped", false
			if vm.running() {
				svc.State, svc.Running = "started", true
			}
			svc.UID = haUID(sid, svc.State+time.Now().String())
		}
		t.Log = append(t.Log, "migration finished successfully")
		ended()
		return 0, nil
	})
	s.setTaskUndoLocked(ns, upid, back)
	return nil
}

// haMigrationsCond is signalled when an HA migration ends. Caller holds
// s.mu.
func (s *Sim) haMigrationsCond() *sync.Cond {
	if s.haMigrationsEnded == nil {
		s.haMigrationsEnded = sync.NewCond(&s.mu)
	}
	return s.haMigrationsEnded
}
