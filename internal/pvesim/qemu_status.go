package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Power state: list, status/current, start, stop, shutdown and reboot
// (qemu-server PVE/API2/Qemu.pm); HA-managed VMs go through the HA manager.

func listVMs(c *call) (any, *apiError) {
	ns := c.node()
	out := []map[string]any{}
	ids := make([]int, 0, len(ns.VMs))
	for id := range ns.VMs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		vm := ns.VMs[id]
		vm.normalize()
		r := vm.statusRow()
		r["serial"] = 0
		if vm.Config["serial0"] != "" {
			r["serial"] = 1
		}
		out = append(out, r)
	}
	return out, nil
}

func vmStatusCurrent(c *call) (any, *apiError) {
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	r := vm.statusRow()
	r["qmpstatus"] = vm.Status
	r["clipboard"] = nil
	ha := map[string]any{"managed": 0}
	if st := c.s.haStateLocked(c.params["node"], vm.VMID); c.s.haManagedLocked(c.params["node"], vm.VMID) || st != "" {
		ha = map[string]any{"managed": 1, "state": st}
	}
	r["ha"] = ha
	if a := vm.Config["agent"]; a != "" {
		if m, msg := parsePropertyString(agentFormat, "agent", a); msg == "" && fmt.Sprint(m["enabled"]) == "1" {
			r["agent"] = 1
		}
	}
	if vm.running() {
		r["running-machine"] = "pc-i440fx-" + strings.Join(strings.Split(qemuVersion(c.s.rel), ".")[:2], ".") + "+pve0"
		r["running-qemu"] = qemuVersion(c.s.rel)
	}
	delete(r, "template")
	return r, nil
}

// powerOnLocked starts the VM, applying pending changes first as vm_start
// does.
func (s *Sim) powerOnLocked(node string, vm *qemuVM) {
	if len(vm.Pending) > 0 || len(vm.PendingDelete) > 0 {
		s.applyPendingLocked(node, vm, map[string]string{})
	}
	vm.Status = "running"
	vm.StartTime = time.Now().Unix()
	vm.PID = int(s.st.NextPID)
	s.st.NextPID++
	s.writeVMLocked(vm)
}

func (s *Sim) powerOffLocked(vm *qemuVM) {
	vm.Status = "stopped"
	vm.StartTime = 0
	vm.PID = 0
	s.saveLocked()
}

// haRequestTask is the hastart/hastop/hamigrate worker for HA-managed VMs.
func (s *Sim) haRequestTask(c *call, typ string, vm *qemuVM, request, line string) string {
	node := c.params["node"]
	return s.startTaskLocked(c, typ, strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		t.Log = append(t.Log, line)
		return 0, s.haGuestRequestLocked(node, vm.VMID, request)
	})
}

func startVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if perr := c.rootOnlyOptions("skiplock"); perr != nil {
		return nil, perr
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if s.haManagedLocked(node, vm.VMID) {
		return s.haRequestTask(c, "hastart", vm, "started", fmt.Sprintf("Requesting HA start for VM %d", vm.VMID)), nil
	}
	skiplock := c.params["skiplock"] == "1"
	upid := s.startTaskLocked(c, "qmstart", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		if s.st.Nodes[node].VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		if vm.Config["template"] == "1" {
			return 0, fmt.Errorf("you can't start a vm if it's a template")
		}
		if !skiplock && vm.Config["lock"] != "suspended" {
			if e := vm.checkLock(); e != nil {
				return 0, fmt.Errorf("%s", e.Message)
			}
		}
		if vm.running() {
			return 0, fmt.Errorf("VM %d already running", vm.VMID)
		}
		if lines, err := s.missingBridgeLocked(node, vm); err != nil {
			t.Log = append(t.Log, lines...)
			return 0, err
		}
		s.powerOnLocked(node, vm)
		return 0, nil
	})
	return upid, nil
}

func stopVM(c *call, typ string) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	if perr := c.rootOnlyOptions("skiplock", "keepActive", "migratedfrom"); perr != nil {
		return nil, perr
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if s.haManagedLocked(node, vm.VMID) {
		if c.params["overrule-shutdown"] == "1" {
			return nil, paramErr1("overrule-shutdown", "Not applicable for HA resources.")
		}
		return s.haRequestTask(c, "hastop", vm, "stopped", fmt.Sprintf("Requesting HA stop for VM %d", vm.VMID)), nil
	}
	skiplock := c.params["skiplock"] == "1"
	upid := s.startTaskLocked(c, typ, strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		if !skiplock {
			if e := vm.checkLock(); e != nil {
				return 0, fmt.Errorf("%s", e.Message)
			}
		}
		if vm.running() {
			s.powerOffLocked(vm)
		}
		return 0, nil
	})
	return upid, nil
}

func rebootVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if !vm.running() {
		return nil, die("VM %d not running", vm.VMID)
	}
	upid := s.startTaskLocked(c, "qmreboot", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		defer release()
		if !vm.running() {
			return 0, nil
		}
		// qmeventd starts the VM again after the shutdown: a fresh
		// start, so pending changes apply.
		s.powerOffLocked(vm)
		s.powerOnLocked(node, vm)
		return 0, nil
	})
	return upid, nil
}
