package pvesim

import "testing"

// The memoized maxdisk and maxmem follow every change of what they are
// computed from, and equal the uncached computation.
func TestStatusRowCachesFollowConfig(t *testing.T) {
	vm := &qemuVM{VMID: 100, Config: map[string]string{
		"memory": "2048", "scsi0": "local-lvm:vm-100-disk-0,size=32G", "ide2": "none,media=cdrom",
	}}
	steps := []func(c map[string]string){
		func(c map[string]string) {},
		func(c map[string]string) { c["scsi0"] = "local-lvm:vm-100-disk-0,size=40G" },
		func(c map[string]string) {
			c["virtio1"] = "local-lvm:vm-100-disk-1,size=8G"
			c["boot"] = "order=virtio1;scsi0"
		},
		func(c map[string]string) { c["boot"] = "order=ide2;scsi0" },
		func(c map[string]string) { delete(c, "boot") },
		func(c map[string]string) { c["bootdisk"] = "scsi0" },
		func(c map[string]string) { c["boot"] = "cdn" }, // legacy: bootdisk counts
		func(c map[string]string) { delete(c, "scsi0"); c["bootdisk"] = "virtio1" },
		func(c map[string]string) {
			c["sata0"] = "local-lvm:vm-100-disk-2,size=1T"
			c["memory"] = "current=4096"
		},
		func(c map[string]string) {
			c["sata0"] = "local-lvm:vm-100-disk-2,size=1T,media=cdrom"
			c["memory"] = ""
		},
		func(c map[string]string) { c["memory"] = "bogus" },
	}
	for i, step := range steps {
		step(vm.Config)
		if got, want := vm.bootDiskSizeCached(), vm.bootDiskSize(); got != want {
			t.Errorf("step %d: maxdisk %d, want %d (%v)", i, got, want, vm.Config)
		}
		if got, want := memoryMiBCached(vm.Config["memory"]), memoryMiB(vm.Config["memory"]); got != want {
			t.Errorf("step %d: memory %d, want %d", i, got, want)
		}
	}
	// Only virtio1 (8G) is left besides the CD drives, and it is bootdisk.
	if got := vm.bootDiskSizeCached(); got != 8<<30 {
		t.Errorf("maxdisk %d, want 8 GiB", got)
	}
	// In neither boot's order nor bootdisk: not the boot disk.
	vm.Config["boot"] = "order=net0"
	if got := vm.bootDiskSizeCached(); got != 0 {
		t.Errorf("maxdisk %d with boot order=net0, want 0 (get_bootdisks)", got)
	}
}
