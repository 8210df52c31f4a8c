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
	if aerr := s.checkStorageOnTargetLocked(node, target, vm); aerr != nil {
		return nil, aerr
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
		var problems []string
		for _, lv := range s.localVolumesLocked(node, vm) {
			if online && isDriveKey(lv.key) && !withLocal {
				problems = append(problems, fmt.Sprintf("can't migrate local disk '%s': can't live migrate attached local disks without with-local-disks option", lv.v.volid()))
			}
		}
		if len(problems) > 0 {
			t.Log = append(t.Log, problems...)
			vm.setLock("")
			s.writeVMLocked(vm)
			return 0, fmt.Errorf("migration aborted (duration 00:00:00): can't migrate VM - check log")
		}
		s.workLocked(t)
		if err := s.moveVMLocked(vm, node, target, &t.Log); err != nil {
			return 0, err
		}
		vm.setLock("")
		s.writeVMLocked(vm)
		t.Log = append(t.Log, fmt.Sprintf("migration finished successfully (duration 00:00:%02d)", int(2*s.opts.TaskDuration/time.Second)))
		return warnings, nil
	})
	return upid, nil
}

// checkStorageOnTargetLocked is check_storage_availability: every storage
// the VM uses must exist on the target.
func (s *Sim) checkStorageOnTargetLocked(node, target string, vm *qemuVM) *apiError {
	for _, vd := range volumeDrives(vm.Config) {
		store, _, serr := splitVolid(vd.d.file())
		if serr != nil {
			continue
		}
		e, eerr := s.storageEntryLocked(node, store)
		if eerr != nil {
			return die("%v", eerr)
		}
		if e.Opts["disable"] == "1" || !e.onNode(target) {
			return die("storage '%s' is not available on node '%s'", store, target)
		}
	}
	return nil
}

// localVolume is a volume of the VM on a storage that is not shared, by
// the config key that holds it.
type localVolume struct {
	key string
	v   *simVolume
}

func (s *Sim) localVolumesLocked(node string, vm *qemuVM) []localVolume {
	var out []localVolume
	for _, vd := range volumeDrives(vm.Config) {
		store, _, serr := splitVolid(vd.d.file())
		if serr != nil {
			continue
		}
		e, eerr := s.storageEntryLocked(node, store)
		if eerr != nil || e.shared() {
			continue
		}
		if v, verr := s.volumeLocked(node, vd.d.file()); verr == nil {
			out = append(out, localVolume{key: vd.key, v: v})
		}
	}
	return out
}

// moveVMLocked is the end of a migration: local volumes are copied to the
// same storage on target and the config moves from
// /etc/pve/nodes/<node>/qemu-server to target's.
func (s *Sim) moveVMLocked(vm *qemuVM, node, target string, log *[]string) error {
	ns, ts := s.st.Nodes[node], s.st.Nodes[target]
	if ns.VMs[vm.VMID] != vm {
		return fmt.Errorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vm.VMID) //nolint:staticcheck // PVE's text
	}
	for _, lv := range s.localVolumesLocked(node, vm) {
		e, _ := s.storageEntryLocked(node, lv.v.Storage) // found by localVolumesLocked
		delete(s.volumesLocked(node, e), lv.v.volid())
		s.volumesLocked(target, e)[lv.v.volid()] = lv.v
		*log = append(*log, fmt.Sprintf("copying local disk '%s'", lv.v.volid()))
	}
	if ts.VMs == nil {
		ts.VMs = map[int]*qemuVM{}
	}
	delete(ns.VMs, vm.VMID)
	ts.VMs[vm.VMID] = vm
	return nil
}
