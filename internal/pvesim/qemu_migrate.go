package pvesim

import (
	"fmt"
	"strconv"
	"time"
)

// Migration (qemu-server PVE/API2/Qemu.pm migrate_vm, PVE/QemuMigrate.pm).

func migrateVM(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	target := c.params["target"]
	if target == node {
		return nil, paramErr1("target", "target is local node.")
	}
	if !contains(s.visibleNodeNames(c.listener), target) || s.st.Nodes[target] == nil ||
		s.st.Nodes[target].Domain != s.st.Nodes[node].Domain {
		return nil, die("no such cluster node '%s'", target)
	}
	if perr := c.rootOnlyOptions("force", "migration_type", "migration_network"); perr != nil {
		return nil, perr
	}
	vm, err := c.vm()
	if err != nil {
		return nil, err
	}
	if e := vm.checkLock(); e != nil {
		return nil, e
	}
	online := c.params["online"] == "1"
	withLocal := c.params["with-local-disks"] == "1"
	warnOffline := false
	if vm.running() {
		if !online {
			return nil, die("can't migrate running VM without --online")
		}
	} else if online {
		warnOffline = true
		online = false
	}
	// check_storage_availability: every storage the VM uses must exist on
	// the target.
	for _, vd := range volumeDrives(vm.Config) {
		store, _, serr := splitVolid(vd.d.file())
		if serr != nil {
			continue
		}
		e, eerr := s.storageEntryLocked(node, store)
		if eerr != nil {
			return nil, die("%v", eerr)
		}
		if e.Opts["disable"] == "1" || !e.onNode(target) {
			return nil, die("storage '%s' is not available on node '%s'", store, target)
		}
	}
	if s.haManagedLocked(node, vm.VMID) {
		return s.haRequestTask(c, "hamigrate", vm, "migrate:"+target, fmt.Sprintf("Requesting HA migration for VM %d to node %s", vm.VMID, target)), nil
	}
	upid := s.startTaskLocked(c, "qmigrate", strconv.Itoa(vm.VMID), func(t *task) (int, error) {
		warnings := 0
		if warnOffline {
			t.Log = append(t.Log, "WARN: VM isn't running. Doing offline migration instead.")
			warnings++
		}
		release, lerr := s.flockVMLocked(vm, s.lockTimeout(10))
		if lerr != nil {
			return 0, fmt.Errorf("%s", lerr.Message)
		}
		if e := vm.checkLock(); e != nil {
			release()
			return 0, fmt.Errorf("%s", e.Message)
		}
		vm.setLock("migrate")
		s.writeVMLocked(vm)
		release()
		t.Log = append(t.Log, fmt.Sprintf("starting migration of VM %d to node '%s'", vm.VMID, target))
		// Local volumes: live migration needs with-local-disks; offline
		// ones are copied to the same storage on the target.
		var local []*simVolume
		var problems []string
		for _, vd := range volumeDrives(vm.Config) {
			store, _, serr := splitVolid(vd.d.file())
			if serr != nil {
				continue
			}
			e, eerr := s.storageEntryLocked(node, store)
			if eerr != nil || e.shared() {
				continue
			}
			v, verr := s.volumeLocked(node, vd.d.file())
			if verr != nil {
				continue
			}
			if online && isDriveKey(vd.key) && !withLocal {
				problems = append(problems, fmt.Sprintf("can't migrate local disk '%s': can't live migrate attached local disks without with-local-disks option", vd.d.file()))
			}
			local = append(local, v)
		}
		if len(problems) > 0 {
			t.Log = append(t.Log, problems...)
			vm.setLock("")
			s.writeVMLocked(vm)
			return 0, fmt.Errorf("migration aborted (duration 00:00:00): can't migrate VM - check log")
		}
		s.workLocked()
		ns, ts := s.st.Nodes[node], s.st.Nodes[target]
		if ns.VMs[vm.VMID] != vm {
			return 0, fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
		}
		for _, v := range local {
			e, _ := s.storageEntryLocked(node, v.Storage) // found above
			delete(s.volumesLocked(node, e), v.volid())
			s.volumesLocked(target, e)[v.volid()] = v
			t.Log = append(t.Log, fmt.Sprintf("copying local disk '%s'", v.volid()))
		}
		if ts.VMs == nil {
			ts.VMs = map[int]*qemuVM{}
		}
		delete(ns.VMs, vm.VMID)
		ts.VMs[vm.VMID] = vm
		vm.setLock("")
		s.writeVMLocked(vm)
		t.Log = append(t.Log, fmt.Sprintf("migration finished successfully (duration 00:00:%02d)", int(2*s.opts.TaskDuration/time.Second)))
		return warnings, nil
	})
	return upid, nil
}
