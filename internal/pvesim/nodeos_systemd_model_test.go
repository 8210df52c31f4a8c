package pvesim

import (
	"strings"
	"testing"
)

func TestSSHEthtoolDriver(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4a", "root")
	for iface, driver := range map[string]string{"cx354ap1": "mlx4_en", "bcm5720p1": "tg3", "i219": "e1000e"} {
		if out := root.ok("ethtool -i " + iface); !strings.HasPrefix(out, "driver: "+driver+"\nversion: ") || !strings.Contains(out, "\nbus-info: 0000:") {
			t.Errorf("ethtool -i %s = %q", iface, out)
		}
	}
	if _, errs, code := root.run("ethtool -i nosuch0", nil); code != 71 || errs != "Cannot get driver information: No such device\n" {
		t.Errorf("unknown device: exit %d %q", code, errs)
	}
}

const ringUnit = `[Unit]
Description=rings
After=sys-subsystem-net-devices-cx354ap1.device

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/sbin/ethtool -G cx354ap1 rx 2048 tx 2048

[Install]
WantedBy=sys-subsystem-net-devices-cx354ap1.device
`

// Unit files under /etc/systemd/system become units; changes need a
// daemon-reload; a reboot resets rings and runs enabled units.
func TestSSHUnitFilesAndReboot(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			s, info := startSim(t, Options{ClusterName: "lab", PVERelease: rel})
			root := sshAs(t, info, "z2g4a", "root")
			root.ok("ethtool -G cx354ap1 rx 2048 tx 2048")
			// Without a unit the rings are lost on reboot.
			s.RebootNode("z2g4a")
			if rx, tx, _ := s.NICRing("z2g4a", "cx354ap1"); rx != 1024 || tx != 1024 {
				t.Errorf("after reboot without unit: %d/%d", rx, tx)
			}
			root = sshAs(t, info, "z2g4a", "root")
			root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/ring-cx.service", []byte(ringUnit))
			if out, _, code := root.run("systemctl is-enabled ring-cx.service", nil); code != 1 || out != "disabled\n" {
				t.Errorf("new unit file: exit %d %q", code, out)
			}
			_, errs, _ := root.run("systemctl enable ring-cx.service", nil)
			link := "'/etc/systemd/system/sys-subsystem-net-devices-cx354ap1.device.wants/ring-cx.service' → '/etc/systemd/system/ring-cx.service'"
			if rel == "8.4" {
				link = "/etc/systemd/system/sys-subsystem-net-devices-cx354ap1.device.wants/ring-cx.service → /etc/systemd/system/ring-cx.service"
			}
			if errs != "Created symlink "+link+".\n" {
				t.Errorf("enable said %q", errs)
			}
			if out := root.ok("systemctl show -p NeedDaemonReload ring-cx.service"); out != "NeedDaemonReload=no\n" {
				t.Errorf("fresh unit: %q", out)
			}
			// A drop-in needs a daemon-reload; restarting before it warns.
			root.run("install -d /etc/systemd/system/ring-cx.service.d", nil)
			root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/ring-cx.service.d/x.conf", []byte("[Service]\nTimeoutSec=5\n"))
			if out := root.ok("systemctl show -p NeedDaemonReload ring-cx.service"); out != "NeedDaemonReload=yes\n" {
				t.Errorf("after drop-in: %q", out)
			}
			if _, errs, code := root.run("systemctl restart ring-cx.service", nil); code != 0 || !strings.Contains(errs, "Warning: The unit file, source configuration file or drop-ins of ring-cx.service changed on disk. Run 'systemctl daemon-reload' to reload units.") {
				t.Errorf("restart before daemon-reload: exit %d %q", code, errs)
			}
			root.ok("systemctl daemon-reload")
			if out := root.ok("systemctl show -p NeedDaemonReload ring-cx.service"); out != "NeedDaemonReload=no\n" {
				t.Errorf("after daemon-reload: %q", out)
			}
			// Drop-ins of the lab's own units count too.
			root.run("install -d /etc/systemd/system/pve-daily-update.timer.d", nil)
			root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/pve-daily-update.timer.d/override.conf", []byte("[Timer]\nOnCalendar=\nOnCalendar=00/4:00\n"))
			if out := root.ok("systemctl show -p NeedDaemonReload pve-daily-update.timer"); out != "NeedDaemonReload=yes\n" {
				t.Errorf("timer drop-in: %q", out)
			}
			root.ok("systemctl daemon-reload")
			// A unit file without [Install] is static.
			root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/helper.service", []byte("[Service]\nExecStart=/bin/true\n"))
			if out, _, _ := root.run("systemctl is-enabled helper.service", nil); out != "static\n" {
				t.Errorf("unit without [Install]: %q", out)
			}
			// The reboot runs the enabled unit: the rings come back.
			root.ok("ethtool -G cx354ap1 rx 512 tx 512")
			s.RebootNode("z2g4a")
			if rx, tx, _ := s.NICRing("z2g4a", "cx354ap1"); rx != 2048 || tx != 2048 {
				t.Errorf("after reboot with the unit: %d/%d", rx, tx)
			}
			if en, act, _ := s.UnitState("z2g4a", "ring-cx.service"); en != "enabled" || act != "active" {
				t.Errorf("unit after reboot: %s %s", en, act)
			}
			if _, act, _ := s.UnitState("z2g4a", "systemd-journal-upload.service"); act != "inactive" {
				t.Errorf("disabled unit after reboot: %s", act)
			}
			// Removed, disabled or failing units do not.
			root = sshAs(t, info, "z2g4a", "root")
			root.ok("systemctl disable ring-cx.service")
			s.RebootNode("z2g4a")
			if rx, _, _ := s.NICRing("z2g4a", "cx354ap1"); rx != 1024 {
				t.Errorf("disabled unit ran at boot: rx %d", rx)
			}
			root = sshAs(t, info, "z2g4a", "root")
			root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/ring-cx.service", []byte(strings.Replace(ringUnit, "rx 2048", "rx 99999", 1)))
			root.ok("systemctl daemon-reload")
			root.ok("systemctl enable ring-cx.service")
			s.RebootNode("z2g4a")
			if _, act, _ := s.UnitState("z2g4a", "ring-cx.service"); act != "failed" {
				t.Errorf("unit whose ethtool fails: %s", act)
			}
			root = sshAs(t, info, "z2g4a", "root")
			root.ok("rm -f /etc/systemd/system/ring-cx.service")
			root.ok("systemctl daemon-reload")
			if _, _, ok := s.UnitState("z2g4a", "ring-cx.service"); ok {
				t.Error("unit of a removed file still loaded after daemon-reload")
			}
		})
	}
}
