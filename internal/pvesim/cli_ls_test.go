package pvesim

import "testing"

// ls prints what GNU ls prints to a pipe: one name per line, a '/' after
// directories with -p, dot files only with -a/-A, "<dir>:" headers and
// empty lines between directories when given several, and exit 2 with
// "cannot access" for a missing operand (the others still listed).
func TestSSHLs(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4a", "root")
	root.ok("install -d -m 0755 /etc/systemd/system/x.service.d")
	if _, errs, code := root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/x.service.d/override.conf", []byte("[Service]\n")); code != 0 {
		t.Fatalf("install: %d %q", code, errs)
	}
	root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/x.service.d/.hidden", []byte("x"))
	root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/x.service", []byte("[Service]\nExecStart=/bin/true\n"))

	if got, want := root.ok("ls -1 -p /etc/systemd/system"), "multi-user.target.wants/\nx.service\nx.service.d/\n"; got != want {
		t.Errorf("ls -1 -p /etc/systemd/system = %q, want %q", got, want)
	}
	if got, want := root.ok("ls /etc/systemd/system/x.service.d"), "override.conf\n"; got != want {
		t.Errorf("ls without -A = %q, want %q", got, want)
	}
	if got, want := root.ok("ls -A /etc/systemd/system/x.service.d"), ".hidden\noverride.conf\n"; got != want {
		t.Errorf("ls -A = %q, want %q", got, want)
	}
	if got, want := root.ok("ls -a -p /etc/systemd/system/x.service.d"), "./\n../\n.hidden\noverride.conf\n"; got != want {
		t.Errorf("ls -a -p = %q, want %q", got, want)
	}
	got := root.ok("ls -1 -- /etc/systemd/system/x.service.d /usr/local/share/ca-certificates /etc/systemd/system/x.service")
	want := "/etc/systemd/system/x.service\n\n/etc/systemd/system/x.service.d:\noverride.conf\n\n/usr/local/share/ca-certificates:\n"
	if got != want {
		t.Errorf("ls of several = %q, want %q", got, want)
	}
	if got, want := root.ok("ls -d -p /etc/systemd/system"), "/etc/systemd/system/\n"; got != want {
		t.Errorf("ls -d = %q, want %q", got, want)
	}
	out, errs, code := root.run("ls -1 /etc/systemd/system/y.service.d /etc/systemd/system/x.service.d", nil)
	if code != 2 || errs != "ls: cannot access '/etc/systemd/system/y.service.d': No such file or directory\n" ||
		out != "/etc/systemd/system/x.service.d:\noverride.conf\n" {
		t.Errorf("missing operand: %d %q %q", code, out, errs)
	}
	if _, errs, code := root.run("ls -l /etc", nil); code != 2 || errs != "ls: pvesim simulates only -1, -a, -A, -d and -p, not -l\n" {
		t.Errorf("ls -l (not simulated) = %d %q", code, errs)
	}
}
