package pvesim

import (
	"regexp"
	"strings"
	"testing"
)

// Without the daemons, PVE's Ceph calls die in check_ceph_installed on the
// node that handles them - before "not initialized" - except init, which
// needs only the client every node has; pveceph install fixes that node
// and no other.
func TestCephNotInstalledAPI(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab", CephNotInstalled: true, TaskDuration: -1, CephTimeScale: -1})
	c := newClient(t, info, "")
	mon := "binary not installed: /usr/bin/ceph-mon"
	for _, q := range []struct{ method, path, want string }{
		{"GET", "/nodes/z2g4a/ceph/mon", mon},
		{"GET", "/nodes/z2g4a/ceph/status", mon},
		{"GET", "/nodes/z2g4a/ceph/cfg/raw", mon},
		{"GET", "/nodes/z2g4a/ceph/pool", mon},
		{"POST", "/nodes/z2g4a/ceph/mon/z2g4a", mon},
		{"POST", "/nodes/z2g4a/ceph/mgr/z2g4a", "binary not installed: /usr/bin/ceph-mgr"},
		{"GET", "/cluster/ceph/status", mon},
		{"GET", "/cluster/ceph/flags", mon},
	} {
		if r := c.do(q.method, q.path, nil); r.status != 500 || strings.TrimSpace(r.msg()) != q.want {
			t.Errorf("%s %s: %d %q, want 500 %q", q.method, q.path, r.status, r.msg(), q.want)
		}
	}
	// Parameters are checked first, as in PVE.
	if r := c.do("POST", "/nodes/z2g4a/ceph/mon/bad_id", nil); r.status != 400 {
		t.Errorf("bad monid: %d %s", r.status, r.raw)
	}
	// init needs only ceph-common.
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "172.27.2.0/24"))
	if _, _, ok := s.CephInstalled("z2g4a"); ok {
		t.Fatal("installed before pveceph install")
	}

	tg := sshAs(t, info, "z2g4a", "root")
	out, errs, code := tg.run("pveceph install --version squid --repository no-subscription", nil)
	if code != 0 || !strings.Contains(out, "\ninstalled Ceph 19.2 Squid successfully!\n") ||
		!strings.Contains(out, "The following NEW packages will be installed:") || !strings.Contains(errs, "HINT: The no-subscription repository") {
		t.Fatalf("install: %d\n%s\n%s", code, out, errs)
	}
	if cn, v, ok := s.CephInstalled("z2g4a"); !ok || cn != "squid" || v != "19.2.3-pve2" {
		t.Fatalf("after install: %s %s %v", cn, v, ok)
	}
	c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/mon/z2g4a", nil).data().(string))
	c.ok("GET", "/nodes/z2g4a/ceph/status", nil)
	// The request to z2g4b's Ceph is handled on z2g4b, which has none yet.
	if r := c.do("GET", "/nodes/z2g4b/ceph/mon", nil); r.status != 500 || strings.TrimSpace(r.msg()) != mon {
		t.Fatalf("z2g4b: %d %q", r.status, r.msg())
	}
	// pveceph wrote the repository: PVE's API sees it.
	repos := c.ok("GET", "/nodes/z2g4a/apt/repositories", nil).data().(map[string]any)
	found := false
	for _, sr := range repos["standard-repos"].([]any) {
		m := sr.(map[string]any)
		if m["handle"] == "ceph-squid-no-subscription" && m["status"] == float64(1) {
			found = true
		}
		if m["handle"] == "ceph-squid-enterprise" && m["status"] != nil {
			t.Errorf("enterprise repository still configured: %v", m)
		}
	}
	if !found {
		t.Fatalf("no enabled ceph-squid-no-subscription: %v", repos["standard-repos"])
	}
	// dpkg-query sees the daemons.
	out = tg.ok(`dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}\n' ceph-mon ceph-osd`)
	if out != "ceph-mon 19.2.3-pve2 installed\nceph-osd 19.2.3-pve2 installed\n" {
		t.Fatalf("dpkg-query: %q", out)
	}
}

func TestPvecephInstallRefusals(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab", CephNotInstalled: true})
	tg := sshAs(t, info, "z2g4b", "root")
	for _, tc := range []struct{ line, stderr string }{
		{"pveceph install --version reef", "400 Parameter verification failed.\nversion: value 'reef' does not have a value in the enumeration 'squid'\npveceph install  [OPTIONS]\n"},
		{"pveceph install --repository main", "repository: value 'main' does not have a value in the enumeration 'enterprise, no-subscription, test, manual'"},
		{"pveceph install --bogus 1", "Unknown option: bogus\n400 unable to parse option\n"},
		{"pveceph install squid", "400 too many arguments\n"},
	} {
		_, errs, code := tg.run(tc.line, nil)
		if code != 255 || !strings.Contains(errs, tc.stderr) {
			t.Errorf("%s: %d %q, want 255 and %q", tc.line, code, errs, tc.stderr)
		}
	}
	// Without a subscription the enterprise repository answers 401 and
	// Debian's own Ceph cannot be installed next to PVE's client.
	out, errs, code := tg.run("pveceph install", nil)
	if code != 100 || !strings.Contains(errs, "401  Unauthorized") || !strings.Contains(errs, "apt failed during ceph installation (25600)") ||
		!strings.Contains(out, "The following packages have unmet dependencies:") {
		t.Fatalf("enterprise: %d\n%s\n%s", code, out, errs)
	}
	if _, _, ok := s.CephInstalled("z2g4b"); ok {
		t.Fatal("installed from an unreachable repository")
	}
	// Only root (or sudo).
	if _, errs, code := sshAs(t, info, "z2g4b", SSHSudoUser).run("pveceph install --version squid", nil); code != 255 || errs != "please run as root\n" {
		t.Fatalf("non-root: %d %q", code, errs)
	}
	if _, errs, code := sshAs(t, info, "z2g4b", SSHSudoUser).run("sudo -n -- pveceph install --version squid --repository test", nil); code != 0 ||
		!strings.Contains(errs, "WARN: The test repository") {
		t.Fatalf("sudo: %d %q", code, errs)
	}
}

// PVE 8: three releases, Quincy the CLI's default; a newer release
// upgrades, an older one changes the repository and nothing else while
// pveceph still reports success.
func TestPvecephInstallPVE8UpgradeAndDowngrade(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab", CephNotInstalled: true, PVERelease: "8.4"})
	tg := sshAs(t, info, "z2g4a", "root")
	out := tg.ok("pveceph install --repository no-subscription")
	if !strings.Contains(out, "installed Ceph 17.2 Quincy successfully!") {
		t.Fatalf("default: %s", out)
	}
	if cn, v, _ := s.CephInstalled("z2g4a"); cn != "quincy" || v != "17.2.8-pve2" {
		t.Fatalf("default release %s %s", cn, v)
	}
	out = tg.ok("pveceph install --version reef --repository no-subscription")
	if !regexp.MustCompile(`The following packages will be upgraded:\n  .*ceph-mon`).MatchString(out) ||
		!strings.Contains(out, "Unpacking ceph-mon (18.2.7-pve1) over (17.2.8-pve2) ...") {
		t.Fatalf("upgrade: %s", out)
	}
	if cn, v, _ := s.CephInstalled("z2g4a"); cn != "reef" || v != "18.2.7-pve1" {
		t.Fatalf("after upgrade %s %s", cn, v)
	}
	out = tg.ok("pveceph install --version quincy --repository no-subscription")
	if !strings.Contains(out, "ceph is already the newest version (18.2.7-pve1).") || !strings.Contains(out, "installed Ceph 17.2 Quincy successfully!") {
		t.Fatalf("downgrade: %s", out)
	}
	if cn, _, _ := s.CephInstalled("z2g4a"); cn != "reef" {
		t.Fatalf("apt downgraded to %s", cn)
	}
	if out := tg.ok("dpkg-query -W ceph-mon librados2"); out != "ceph-mon\t18.2.7-pve1\nlibrados2:amd64\t18.2.7-pve1\n" {
		t.Fatalf("dpkg-query default format: %q", out)
	}
	// A node without pveceph install has PVE 8's Quincy client only.
	tb := sshAs(t, info, "z2g4b", "root")
	out, errs, code := tb.run(`dpkg-query -W -f '${Package} ${Version}\n' ceph-common ceph-mon`, nil)
	if code != 1 || out != "ceph-common 17.2.8-pve2\n" || errs != "dpkg-query: no packages found matching ceph-mon\n" {
		t.Fatalf("z2g4b: %d %q %q", code, out, errs)
	}
}

func TestCephInstalledByDefault(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	if cn, v, ok := s.CephInstalled("z2g4c"); !ok || cn != "squid" || v != "19.2.3-pve2" {
		t.Fatalf("default: %s %s %v", cn, v, ok)
	}
	c := newClient(t, info, "")
	if r := c.do("GET", "/nodes/z2g4c/ceph/mon", nil); r.status != 500 || !strings.Contains(r.msg(), "not initialized") {
		t.Fatalf("installed, not initialised: %d %q", r.status, r.msg())
	}
	if err := s.SetCephInstalled("z2g4c", ""); err != nil {
		t.Fatal(err)
	}
	if r := c.do("GET", "/nodes/z2g4c/ceph/mon", nil); r.status != 500 || !strings.Contains(r.msg(), "binary not installed") {
		t.Fatalf("after removal: %d %q", r.status, r.msg())
	}
}
