package ceph

import (
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Model strings as PVE reports them (udev ID_MODEL with underscores, NVMe
// models with spaces) map onto the right family.
func TestClassifyDrive(t *testing.T) {
	for _, tc := range []struct {
		model, family string
		plp, known    bool
	}{
		{"INTEL SSDPEKNW512G8", "Intel 660p/665p (QLC NVMe)", false, true},
		{"INTEL SSDPEKNW020T9", "Intel 660p/665p (QLC NVMe)", false, true},
		{"INTEL SSDPEKNU010TZ", "Intel 670p (QLC NVMe)", false, true},
		{"SAMSUNG MZVLB512HBJQ-00000", "Samsung PM981/PM981a/PM991/PM9A1 (OEM client NVMe)", false, true},
		{"Samsung SSD 970 EVO Plus 1TB", "Samsung EVO/PRO/QVO (retail)", false, true},
		{"Samsung_SSD_860_EVO_500GB", "Samsung EVO/PRO/QVO (retail)", false, true},
		{"Samsung SSD 990 PRO 2TB", "Samsung EVO/PRO/QVO (retail)", false, true},
		{"CT500MX500SSD1", "Crucial MX/BX/P/T series", false, true},
		{"CT1000P1SSD8", "Crucial MX/BX/P/T series", false, true},
		{"WDC_WDS240G2G0A-00JH30", "WD Blue/Green/Black/Red (client)", false, true},
		{"WDC WDS500G3X0C-00SJG0", "WD Blue/Green/Black/Red (client)", false, true},
		{"WD_BLACK SN850X 1000GB", "WD Blue/Green/Black/Red (client)", false, true},
		{"KINGSTON SA2000M8500G", "Kingston A2000/A400/NV/KC (client)", false, true},
		{"KINGSTON SNV2S1000G", "Kingston A2000/A400/NV/KC (client)", false, true},
		{"INTEL_SSDSC2BB480G4", "Intel DC S3500/S3510/S3520", true, true},
		{"INTEL_SSDSC2BB120G6", "Intel DC S3500/S3510/S3520", true, true},
		{"INTEL_SSDSC2KB480G8", "Intel DC S4500/S4510 (D3-S4510)", true, true},
		{"INTEL_SSDSC2KG480G8", "Intel DC S4600/S4610 (D3-S4610)", true, true},
		{"SAMSUNG_MZ7LH480HAHQ-00005", "Samsung PM883/PM893/SM883/PM863a/SM863a", true, true},
		{"SAMSUNG MZ7L3480HCHQ-00A07", "Samsung PM883/PM893/SM883/PM863a/SM863a", true, true},
		{"Micron_5300_MTFDDAK480TDS", "Micron 5200/5300/5400 (SATA)", true, true},
		{"KINGSTON SEDC600M480G", "Kingston DC500/DC600", true, true},
		{"ST4000NM0035-1V4107", "", false, false},
		{"QEMU HARDDISK", "", false, false},
	} {
		family, plp, known := classifyDrive(tc.model)
		if family != tc.family || plp != tc.plp || known != tc.known {
			t.Errorf("%q: got %q plp=%v known=%v, want %q plp=%v known=%v", tc.model, family, plp, known, tc.family, tc.plp, tc.known)
		}
	}
}

func TestJudgeDisk(t *testing.T) {
	free := pve.Disk{DevPath: "/dev/sdb", Model: "INTEL_SSDSC2BB480G4", Size: 480103981056, Type: "ssd", Wearout: 96, Health: "PASSED", OSDID: -1}
	for _, tc := range []struct {
		name   string
		mod    func(d *pve.Disk)
		min    int64
		reason string // "" = suitable
	}{
		{"datacenter SSD", func(*pve.Disk) {}, 100e9, ""},
		{"OSD", func(d *pve.Disk) { d.OSDID, d.OSDIDs, d.Used = 3, []int64{3}, "LVM" }, 0, "already an OSD (osd.3)"},
		{"boot disk", func(d *pve.Disk) { d.Used = "BIOS boot" }, 0, "in use: BIOS boot"},
		{"DB disk", func(d *pve.Disk) { d.Used, d.DBs = "LVM", 2 }, 0, "block.db/block.wal of 2 other OSD(s)"},
		{"HDD", func(d *pve.Disk) { d.Type, d.RPM, d.Model = "hdd", 7200, "ST4000NM0035" }, 0, "rotational (HDD, 7200 rpm)"},
		{"consumer", func(d *pve.Disk) { d.Model, d.Type = "INTEL SSDPEKNW512G8", "nvme" }, 0, "without power-loss protection (Intel 660p/665p (QLC NVMe))"},
		{"small", func(*pve.Disk) {}, 500e9, "too small: 480 GB, less than 500 GB"},
		{"failing", func(d *pve.Disk) { d.Health = "FAILED" }, 0, "SMART health: FAILED"},
		{"worn out", func(d *pve.Disk) { d.Wearout = 4 }, 0, "worn out: 4% of its rated life left"},
		{"USB", func(d *pve.Disk) { d.Type, d.Model = "usb", "Extreme" }, 0, "USB device"},
	} {
		d := free
		tc.mod(&d)
		v := judgeDisk(d, tc.min)
		got := strings.Join(v.Reasons, "; ")
		if (tc.reason == "") != v.Suitable || !strings.Contains(got, tc.reason) {
			t.Errorf("%s: suitable=%v reasons %q, want %q", tc.name, v.Suitable, got, tc.reason)
		}
	}
}
