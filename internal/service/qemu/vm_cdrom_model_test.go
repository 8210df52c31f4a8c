package qemu

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The CD drives' diff against what PVE has: cloud-init drives and disks
// are not CD drives; a CD drive never goes over a disk; a drive removed
// from the map leaves the boot order the provider writes.
func TestCdromUpdate(t *testing.T) {
	have := map[string]string{
		"ide2":  "local:iso/a.iso,media=cdrom,size=600M",
		"ide3":  "local-lvm:vm-100-cloudinit,media=cdrom,size=4M",
		"sata0": "none,media=cdrom",
		"scsi0": "local-lvm:vm-100-disk-0,size=32G",
		"boot":  "order=scsi0;ide2;sata0",
	}
	cfg := &pve.VMConfig{Values: have}
	set, del, err := configUpdate(100, cfg, desiredConfig{}, map[string]string{"ide2": "local:iso/b.iso", "sata1": "none"}, true,
		[]string{"sata0", "ide2", "scsi0"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 3 || set["ide2"] != "local:iso/b.iso,media=cdrom" || set["sata1"] != "none,media=cdrom" || set["boot"] != "order=ide2;scsi0" {
		t.Errorf("set %v: want ide2 swapped (size left to PVE), sata1 added, boot without the deleted sata0", set)
	}
	if strings.Join(del, ",") != "sata0" {
		t.Errorf("delete %v: want sata0 only (ide3 is a cloud-init drive, not a CD drive of cdrom's)", del)
	}
	if !cdromJoinsBoot(have["boot"], set) || cdromJoinsBoot("", set) || cdromJoinsBoot(have["boot"], map[string]string{"ide2": set["ide2"]}) {
		t.Error("cdromJoinsBoot: only a CD drive new to an explicit boot order joins it")
	}
	if _, _, err := configUpdate(100, cfg, desiredConfig{}, map[string]string{"scsi0": "none"}, true, nil, false); err == nil ||
		!strings.Contains(err.Error(), "scsi0 of VM 100 holds a disk (local-lvm:vm-100-disk-0,size=32G), not a CD drive") {
		t.Errorf("a CD drive over a disk: %v", err)
	}
	// Unmanaged (cdrom unset at create): the CD drives stay.
	if set, del, _ := configUpdate(100, cfg, desiredConfig{}, nil, false, nil, false); len(del) != 0 || set["ide2"] != "" {
		t.Errorf("unmanaged CD drives changed: set %v delete %v", set, del)
	}
}

func TestCdromsFromConfig(t *testing.T) {
	v := map[string]string{"ide2": "cdrom,media=cdrom", "ide3": "ceph:vm-100-cloudinit,media=cdrom", "scsi0": "ceph:vm-100-disk-0"}
	got := cdromsFromConfig(v, nil)
	want := types.MapValueMust(types.StringType, map[string]attr.Value{"ide2": types.StringValue("cdrom")})
	if !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	empty := types.MapValueMust(types.StringType, map[string]attr.Value{})
	for _, tc := range []struct {
		prior types.Map
		want  types.Map
	}{
		{types.MapNull(types.StringType), types.MapNull(types.StringType)},
		{types.MapUnknown(types.StringType), types.MapNull(types.StringType)},
		// cdrom = {} reads back as {}, not null.
		{empty, empty},
	} {
		if got := cdromsFromConfig(map[string]string{}, &vmModel{Cdrom: tc.prior}); !got.Equal(tc.want) {
			t.Errorf("no CD drives, prior %v: got %v, want %v", tc.prior, got, tc.want)
		}
	}
}

// A model is stored url-encoded and compared as text.
func TestDriveModelEncoding(t *testing.T) {
	if got := urlEncodeDriveText("Samsung SSD 870, EVO+1TB/ü"); got != "Samsung%20SSD%20870%2C%20EVO%2B1TB%2F%C3%BC" {
		t.Errorf("encoded %q", got)
	}
	m := vmDiskModel{Model: types.StringValue("QEMU HARDDISK")}
	opts := m.options()
	if opts["model"] != "QEMU%20HARDDISK" {
		t.Errorf("options %v", opts)
	}
	d := pve.Drive{Volume: "local-lvm:vm-100-disk-0", Options: map[string]string{"model": "QEMU%20hARDDISK"}}
	if !optionsDiffer(d, opts) {
		t.Error("a different model is no difference")
	}
	d.Options["model"] = "QEMU%20HARDDISK"
	if optionsDiffer(d, opts) {
		t.Error("the same model differs")
	}
	var back vmDiskModel
	back.fromDrive(100, "ide0", "n", d, nil)
	if back.Model.ValueString() != "QEMU HARDDISK" {
		t.Errorf("read back %q", back.Model.ValueString())
	}
}

// Drive.pm: model on IDE, vendor and product on SCSI, wwn on all but
// VirtIO.
func TestValidateDriveIdentity(t *testing.T) {
	for _, tc := range []struct {
		slot string
		m    vmDiskModel
		want string
	}{
		{"ide0", vmDiskModel{Model: types.StringValue("X"), WWN: types.StringValue("0x5000c500a1b2c3d4")}, ""},
		{"scsi1", vmDiskModel{Vendor: types.StringValue("ATA"), Product: types.StringValue("P"), WWN: types.StringValue("0x5000c500a1b2c3d4")}, ""},
		{"ide1", vmDiskModel{Vendor: types.StringValue("ATA")}, "PVE has vendor only for SCSI disks; ide1 is IDE. Remove vendor, or use a scsiN slot."},
		{"sata2", vmDiskModel{Product: types.StringValue("P")}, "PVE has product only for SCSI disks; sata2 is SATA."},
		{"virtio0", vmDiskModel{WWN: types.StringValue("0x5000c500a1b2c3d4")}, "PVE has wwn only for IDE, SATA and SCSI disks; virtio0 is VirtIO."},
		{"ide0", vmDiskModel{Model: types.StringValue(strings.Repeat("é", 21))}, `is 42 bytes; PVE takes up to 40`},
	} {
		var diags diag.Diagnostics
		bus := strings.TrimRight(tc.slot, "0123456789")
		validateDriveIdentity(&tc.m, tc.slot, bus, &diags)
		var got string
		for _, d := range diags {
			got += d.Detail()
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %+v: %q, want %q", tc.slot, tc.m, got, tc.want)
		}
	}
}
