package pvesim

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// installerInterfaces is what the PVE installer writes for z2g4a.
const installerInterfaces = `auto lo
iface lo inet loopback

iface bcm5720p0 inet manual

auto vmbr0
iface vmbr0 inet static
	address 172.27.2.10/24
	gateway 172.27.2.254
	bridge-ports bcm5720p0
	bridge-stp off
	bridge-fd 0

iface bcm5720p1 inet manual

iface i219 inet manual

iface cx354ap1 inet manual

source /etc/network/interfaces.d/*
`

// bondBridgeInterfaces is the cutover's target: bridge0 on an LACP bond.
const bondBridgeInterfaces = `auto lo
iface lo inet loopback

auto bcm5720p0
iface bcm5720p0 inet manual

auto bcm5720p1
iface bcm5720p1 inet manual

auto bond0
iface bond0 inet manual
	bond-slaves bcm5720p0 bcm5720p1
	bond-miimon 100
	bond-mode 802.3ad
	bond-xmit-hash-policy layer3+4

auto bridge0
iface bridge0 inet static
	address 172.27.2.10/24
	gateway 172.27.2.254
	bridge-ports bond0
	bridge-stp off
	bridge-fd 0
`

var testLabMgmt = nodeMgmt{Address: "172.27.2.10", Prefix: 24, Gateway: "172.27.2.254", NIC: "bcm5720p0"}

// freshInstallForTest puts node in the installer's state: the management
// address on vmbr0 over bcm5720p0, live, every NIC with link.
func freshInstallForTest(t *testing.T, s *Sim, node string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	m := testLabMgmt
	ns.Mgmt = &m
	ns.NICs = map[string]*simNIC{}
	for _, p := range ns.Physical {
		ns.NICs[p] = &simNIC{Name: p, Link: true}
	}
	cfg, errs := parseInterfaces(installerInterfaces, ns.Physical)
	if len(errs) > 0 {
		t.Fatalf("installer file: %v", errs)
	}
	ns.Applied, ns.Staged, ns.Live = cfg, nil, nil
	s.reloadNetworkLocked(ns)
}

func reachNode(t *testing.T, file string, mgmt *nodeMgmt, links map[string]bool) *nodeState {
	t.Helper()
	ns := &nodeState{Name: "n", Physical: append([]string(nil), physicalNICs...), Mgmt: mgmt, NICs: map[string]*simNIC{}}
	for _, p := range ns.Physical {
		up, ok := links[p]
		ns.NICs[p] = &simNIC{Name: p, Link: up || !ok}
	}
	cfg, errs := parseInterfaces(file, ns.Physical)
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}
	ns.Applied = cfg
	ns.computeActive()
	return ns
}

func TestReachability(t *testing.T) {
	m := &testLabMgmt
	down := func(nics ...string) map[string]bool {
		out := map[string]bool{}
		for _, n := range nics {
			out[n] = false
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		file  string
		mgmt  *nodeMgmt
		links map[string]bool
		want  bool
		why   string
	}{
		{"no lab management address", "", nil, nil, true, ""},
		{"installer's vmbr0", installerInterfaces, m, nil, true, ""},
		{"installer's NIC without link", installerInterfaces, m, down("bcm5720p0"), false, "bcm5720p0 has no link"},
		{"bridge0 over bond0, both slaves", bondBridgeInterfaces, m, nil, true, ""},
		{"bridge0 over bond0, one slave left", bondBridgeInterfaces, m, down("bcm5720p1"), true, ""},
		{"bond whose slaves have no link", bondBridgeInterfaces, m, down("bcm5720p0", "bcm5720p1"), false, "no slave of bond0 works"},
		{"wrong prefix puts the gateway off the subnet",
			strings.Replace(installerInterfaces, "172.27.2.10/24", "172.27.2.10/28", 1), m, nil, false,
			"the default gateway 172.27.2.254 is outside 172.27.2.10/28"},
		{"netmask line instead of a prefix",
			strings.Replace(installerInterfaces, "172.27.2.10/24", "172.27.2.10\n\tnetmask 255.255.255.0", 1), m, nil, true, ""},
		{"wrong gateway",
			strings.Replace(installerInterfaces, "172.27.2.254", "172.27.2.1", 1), m, nil, false, "the network's router is 172.27.2.254"},
		{"no gateway",
			strings.Replace(installerInterfaces, "\tgateway 172.27.2.254\n", "", 1), m, nil, false, "no default gateway"},
		{"bridge with no ports",
			strings.Replace(installerInterfaces, "bridge-ports bcm5720p0", "bridge-ports none", 1), m, nil, false, "bridge vmbr0 has no ports"},
		{"bridge with only a dead port",
			strings.Replace(installerInterfaces, "bridge-ports bcm5720p0", "bridge-ports bcm5720p1", 1), m, down("bcm5720p1"), false, "no port of vmbr0 works (bcm5720p1 has no link)"},
		{"bridge on a NIC that does not exist",
			strings.Replace(installerInterfaces, "bridge-ports bcm5720p0", "bridge-ports eno9", 1), m, nil, false, "eno9 does not exist"},
		{"address on an interface with autostart off",
			strings.Replace(installerInterfaces, "auto vmbr0\n", "", 1), m, nil, false, "172.27.2.10 is on vmbr0, which is not up"},
		{"address removed",
			strings.Replace(installerInterfaces, "\taddress 172.27.2.10/24\n", "", 1), m, nil, false, "172.27.2.10 is not configured on any interface"},
		{"address on a VLAN of a vlan-aware bridge", `auto vmbr0
iface vmbr0 inet manual
	bridge-ports bcm5720p0
	bridge-stp off
	bridge-fd 0
	bridge-vlan-aware yes
	bridge-vids 2-4094

auto vmbr0.20
iface vmbr0.20 inet static
	address 172.27.2.10/24
	gateway 172.27.2.254
`, m, nil, true, ""},
		{"address on a VLAN of a bridge that has no link", `auto vmbr0
iface vmbr0 inet manual
	bridge-ports bcm5720p0

auto mgmt
iface mgmt inet static
	address 172.27.2.10/24
	gateway 172.27.2.254
	vlan-raw-device vmbr0
	vlan-id 20
`, m, down("bcm5720p0"), false, "no port of vmbr0 works"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := reachNode(t, tc.file, tc.mgmt, tc.links)
			got, why := ns.reachable()
			if got != tc.want || !strings.Contains(why, tc.why) || (tc.want && why != "") {
				t.Errorf("reachable = %v, %q; want %v, %q", got, why, tc.want, tc.why)
			}
		})
	}
}

// waitReach waits for node's listeners to see it reachable (or not).
func waitReach(t *testing.T, s *Sim, node string, want bool) {
	t.Helper()
	s.mu.Lock()
	g := s.reach[node]
	s.mu.Unlock()
	deadline := time.After(10 * time.Second)
	for {
		g.mu.Lock()
		up, ch := g.up, g.changed
		g.mu.Unlock()
		if up == want {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s: reachable stayed %v", node, up)
		}
	}
}

func shortClient(info Info, timeout time.Duration) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(info.CACertPEM))
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}}
}

// newConnTimeout is how long newConnClient waits for an answer.
const newConnTimeout = 300 * time.Millisecond

// newConnClient makes one connection per request: a dial the timeout
// abandoned is closed, not kept for later (Go's transport keeps it).
func newConnClient(info Info) *http.Client {
	hc := shortClient(info, newConnTimeout)
	hc.Transport.(*http.Transport).DisableKeepAlives = true
	return hc
}

func getVersion(hc *http.Client, info Info) error {
	req, _ := http.NewRequest("GET", info.Endpoint+"/api2/json/version", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+info.APIToken)
	r, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = r.Body.Close() }()
	_, _ = io.Copy(io.Discard, r.Body)
	if r.StatusCode != 200 {
		return errors.New(r.Status)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// dialSSHTimeout is an SSH login whose whole handshake must finish in d.
func dialSSHTimeout(t *testing.T, info Info, d time.Duration) error {
	ni := info.Nodes[0]
	hostKey, _, _, _, _ := ssh.ParseAuthorizedKey([]byte(ni.SSHHostKey))
	conn, err := net.DialTimeout("tcp", ni.SSHEndpoint, d)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(d))
	sc, chans, reqs, err := ssh.NewClientConn(conn, ni.SSHEndpoint, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{labKey(t, info)}, HostKeyCallback: ssh.FixedHostKey(hostKey)})
	if err != nil {
		return err
	}
	_ = ssh.NewClient(sc, chans, reqs).Close()
	return nil
}

// runAsync runs line on an existing SSH connection in the background.
func runAsync(tg *sshTarget, line string) <-chan string {
	done := make(chan string, 1)
	go func() {
		sess, err := tg.c.NewSession()
		if err != nil {
			done <- "session: " + err.Error()
			return
		}
		defer func() { _ = sess.Close() }()
		out, err := sess.Output(line)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(out)
	}()
	return done
}

func TestReachLinkLossCutsHTTPSAndSSH(t *testing.T) {
	s, info := startSim(t, Options{})
	freshInstallForTest(t, s, "z2g4a")
	root := sshAs(t, info, "z2g4a", "root")
	kept := shortClient(info, 500*time.Millisecond)
	if err := getVersion(kept, info); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	if err := s.SetNICLink("z2g4a", "bcm5720p0", false); err != nil {
		t.Fatal(err)
	}
	if ok, why := s.Reachable("z2g4a"); ok || !strings.Contains(why, "bcm5720p0 has no link") {
		t.Fatalf("Reachable = %v, %q", ok, why)
	}
	if err := getVersion(newConnClient(info), info); !isTimeout(err) {
		t.Errorf("new HTTPS connection: %v, want a timeout", err)
	}
	if err := getVersion(kept, info); !isTimeout(err) {
		t.Errorf("kept-alive HTTPS connection: %v, want a timeout", err)
	}
	if err := dialSSHTimeout(t, info, 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("new SSH login: %v, want a timeout", err)
	}
	pending := runAsync(root, "cat /etc/hostname")
	select {
	case out := <-pending:
		t.Fatalf("an existing SSH connection answered while cut off: %q", out)
	case <-time.After(300 * time.Millisecond):
	}
	// Other nodes are not affected.
	if ok, _ := s.Reachable("z2g4b"); !ok {
		t.Error("z2g4b cut off too")
	}
	if err := s.SetNICLink("z2g4a", "bcm5720p0", true); err != nil {
		t.Fatal(err)
	}
	if out := <-pending; out != "z2g4a\n" {
		t.Errorf("held command after the restore: %q", out)
	}
	if err := getVersion(shortClient(info, 2*time.Second), info); err != nil {
		t.Errorf("after the restore: %v", err)
	}
	if err := dialSSHTimeout(t, info, 2*time.Second); err != nil {
		t.Errorf("SSH after the restore: %v", err)
	}
}

func TestReachCloseDoesNotHangOnCutConnections(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	freshInstallForTest(t, s, "z2g4a")
	root := sshAs(t, info, "z2g4a", "root")
	if err := s.SetNICLink("z2g4a", "bcm5720p0", false); err != nil {
		t.Fatal(err)
	}
	_ = runAsync(root, "cat /etc/hostname")
	go func() { _ = getVersion(shortClient(info, 5*time.Second), info) }()
	waitReach(t, s, "z2g4a", false)
	closed := make(chan struct{})
	start := time.Now()
	go func() { _ = s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(1500 * time.Millisecond):
		t.Fatal("Close hangs on connections of a cut-off node")
	}
	t.Logf("Close took %s", time.Since(start))
}

// TestReachReloadCutsNodeOffTimerRestores is the dead-man rollback on the
// node's side: back up the file, arm a transient timer that restores it
// and reloads, apply a change that cuts the node off; the srvreload task
// still finishes on the node, and the timer brings the node back.
func TestReachReloadCutsNodeOffTimerRestores(t *testing.T) {
	s, info := startSim(t, Options{})
	freshInstallForTest(t, s, "z2g4a")
	root := sshAs(t, info, "z2g4a", "root")
	before := root.ok("cat /etc/network/interfaces")
	if before != s.NetworkInterfacesFile("z2g4a") || !strings.Contains(before, "address 172.27.2.10/24") {
		t.Fatalf("cat = %q", before)
	}
	root.ok("cp -p /etc/network/interfaces /root/interfaces.pvesim-backup")
	script := "#!/bin/sh\nset -e\n# restore the last good network\ncp /root/interfaces.pvesim-backup /etc/network/interfaces\nifreload -a\n"
	if _, errs, code := root.run("install -m 0700 /dev/stdin /root/pvesim-rollback.sh", []byte(script)); code != 0 {
		t.Fatalf("install: %d %s", code, errs)
	}
	_, errs, code := root.run("systemd-run --unit=pvesim-net-rollback --on-active=2s --timer-property=AccuracySec=1s --description='network rollback' --collect /root/pvesim-rollback.sh", nil)
	if code != 0 || errs != "Running timer as unit: pvesim-net-rollback.timer\nWill run service as unit: pvesim-net-rollback.service\n" {
		t.Fatalf("systemd-run: exit %d, %q", code, errs)
	}
	if out := root.ok("systemctl is-active pvesim-net-rollback.timer"); out != "active\n" {
		t.Errorf("is-active = %q", out)
	}

	c := newClient(t, info, "")
	c.ok("PUT", "/nodes/z2g4a/network/vmbr0", vals("type", "bridge", "cidr", "172.27.2.10/28", "gateway", "172.27.2.254",
		"bridge_ports", "bcm5720p0", "autostart", "1"))
	upid := c.ok("PUT", "/nodes/z2g4a/network", nil).data().(string)
	waitReach(t, s, "z2g4a", false)
	if ok, why := s.Reachable("z2g4a"); ok || !strings.Contains(why, "outside 172.27.2.10/28") {
		t.Fatalf("after the reload: %v %q", ok, why)
	}
	if err := getVersion(newConnClient(info), info); !isTimeout(err) {
		t.Errorf("HTTPS while cut off: %v, want a timeout", err)
	}
	if err := dialSSHTimeout(t, info, 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("SSH while cut off: %v, want a timeout", err)
	}

	if err := s.WaitTimersIdle("z2g4a", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitReach(t, s, "z2g4a", true)
	if got := s.NetworkInterfacesFile("z2g4a"); got != before {
		t.Errorf("restored file:\n%s\nwant:\n%s", got, before)
	}
	// The task ran to its end on the node while nobody could see it.
	st := c.ok("GET", "/nodes/z2g4a/tasks/"+url.PathEscape(upid)+"/status", nil).data().(map[string]any)
	if st["status"] != "stopped" || st["exitstatus"] != "OK" {
		t.Errorf("srvreload task = %v", st)
	}
	// The timer elapsed and stays until stopped; the service was collected.
	if out := root.ok("systemctl show -p ActiveState -p SubState pvesim-net-rollback.timer"); out != "ActiveState=active\nSubState=elapsed\n" {
		t.Errorf("timer after firing: %q", out)
	}
	if out := root.ok("systemctl show -p LoadState pvesim-net-rollback.service"); out != "LoadState=not-found\n" {
		t.Errorf("service after success: %q", out)
	}
	root.ok("systemctl stop pvesim-net-rollback.timer")
	if out := root.ok("systemctl show -p LoadState pvesim-net-rollback.timer"); out != "LoadState=not-found\n" {
		t.Errorf("timer after stop: %q", out)
	}
}

func TestSystemdRunStopDisarms(t *testing.T) {
	s, info := startSim(t, Options{})
	root := sshAs(t, info, "z2g4a", "root")
	for _, n := range []string{"a", "b"} {
		script := "#!/bin/sh\ninstall -m 0644 /etc/hostname /root/ran-" + n + "\n"
		if _, errs, code := root.run("install -m 0755 /dev/stdin /root/job-"+n+".sh", []byte(script)); code != 0 {
			t.Fatal(errs)
		}
	}
	root.ok("systemd-run --unit=job-a --on-active=1s /root/job-a.sh")
	_, errs, code := root.run("systemd-run --unit=job-a --on-active=1s /root/job-a.sh", nil)
	if code != 1 || errs != "Failed to start transient timer unit: Unit job-a.timer was already loaded or has a fragment file.\n" {
		t.Errorf("second arm: exit %d, %q", code, errs)
	}
	_, errs, code = root.run("systemd-run --unit=pve-daily-update --on-active=1s /root/job-a.sh", nil)
	if code != 1 || !strings.Contains(errs, "Unit pve-daily-update.timer was already loaded") {
		t.Errorf("a unit of the node's: exit %d, %q", code, errs)
	}
	root.ok("systemctl stop job-a.timer")
	if out, _, code := root.run("systemctl is-active job-a.timer", nil); code != 3 || out != "inactive\n" {
		t.Errorf("is-active after stop: %d %q", code, out)
	}
	// job-b fires when job-a would have: only b runs.
	root.ok("systemd-run --unit job-b --on-active 1s /root/job-b.sh")
	if err := s.WaitTimersIdle("z2g4a", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.NodeFile("z2g4a", "/root/ran-b"); !ok {
		t.Error("job-b did not run")
	}
	if _, ok := s.NodeFile("z2g4a", "/root/ran-a"); ok {
		t.Error("the stopped job-a ran")
	}
	// The name is free again once the timer was stopped.
	root.ok("systemd-run --unit=job-a --on-active=1h /root/job-a.sh")
}

func TestSystemdRunArguments(t *testing.T) {
	_, info := startSim(t, Options{})
	root := sshAs(t, info, "z2g4a", "root")
	for line, want := range map[string]string{
		"systemd-run --on-active=soon /usr/sbin/ifreload -a":  "Failed to parse OnActiveSec=soon: Invalid argument\n",
		"systemd-run --unit=x --on-active=5 /root/missing.sh": "Failed to find executable /root/missing.sh: No such file or directory\n",
		"systemd-run --on-active=5":                           "Command line to execute required.\n",
	} {
		if _, errs, code := root.run(line, nil); code != 1 || errs != want {
			t.Errorf("%s: exit %d, %q; want %q", line, code, errs, want)
		}
	}
	tf := sshAs(t, info, "z2g4a", SSHSudoUser)
	if _, errs, code := tf.run("systemd-run --on-active=5 /usr/sbin/ifreload -a", nil); code != 1 || !strings.Contains(errs, "Interactive authentication required") {
		t.Errorf("non-root: %d %q", code, errs)
	}
	if _, errs, code := tf.run("sudo -n systemd-run --unit=r1 --on-active=1h /usr/sbin/ifreload -a", nil); code != 0 || !strings.Contains(errs, "r1.timer") {
		t.Errorf("through sudo: %d %q", code, errs)
	}
}

func TestParseTimeSpan(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90": 90 * time.Second, "90s": 90 * time.Second, "2min": 2 * time.Minute, "1min 30s": 90 * time.Second,
		"1m30s": 90 * time.Second, "1.5h": 90 * time.Minute, "500ms": 500 * time.Millisecond, "2 minutes": 2 * time.Minute,
	} {
		if got, ok := parseTimeSpan(in); !ok || got != want {
			t.Errorf("parseTimeSpan(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "soon", "5 parsecs", "min", "1x"} {
		if got, ok := parseTimeSpan(in); ok {
			t.Errorf("parseTimeSpan(%q) = %v, want an error", in, got)
		}
	}
}

// Writing the file changes nothing live until ifreload -a.
func TestInterfacesFileGoesLiveOnlyOnReload(t *testing.T) {
	s, info := startSim(t, Options{})
	freshInstallForTest(t, s, "z2g4a")
	root := sshAs(t, info, "z2g4a", "root")
	if _, errs, code := root.run("install -m 0644 /dev/stdin /etc/network/interfaces.tmp", []byte(bondBridgeInterfaces)); code != 0 {
		t.Fatal(errs)
	}
	root.ok("mv /etc/network/interfaces.tmp /etc/network/interfaces")
	if got := root.ok("cat /etc/network/interfaces"); got != bondBridgeInterfaces {
		t.Errorf("cat = %q", got)
	}
	// PVE's API reads the file; the active flags are still the old ones.
	c := newClient(t, info, "")
	list := c.ok("GET", "/nodes/z2g4a/network", nil).data()
	if br := findIface(list, "bridge0"); br == nil || br["cidr"] != "172.27.2.10/24" || br["active"] != nil {
		t.Errorf("bridge0 before the reload = %v", br)
	}
	if vm := findIface(list, "vmbr0"); vm != nil {
		t.Errorf("vmbr0 still in the file: %v", vm)
	}
	if ok, _ := s.Reachable("z2g4a"); !ok {
		t.Fatal("writing the file cut the node off before a reload")
	}
	if out := root.ok("ifreload -a"); out != "" {
		t.Errorf("ifreload -a printed %q", out)
	}
	list = c.ok("GET", "/nodes/z2g4a/network", nil).data()
	if br := findIface(list, "bridge0"); br == nil || br["active"] != float64(1) {
		t.Errorf("bridge0 after the reload = %v", br)
	}
	// The bond keeps the node on its other slave.
	if err := s.SetNICLink("z2g4a", "bcm5720p0", false); err != nil {
		t.Fatal(err)
	}
	if ok, why := s.Reachable("z2g4a"); !ok {
		t.Errorf("bridge0 over bond0 with one live slave: %s", why)
	}
	if got := root.ok("cat /etc/hostname"); got != "z2g4a\n" {
		t.Errorf("SSH on one slave: %q", got)
	}
}

func TestIfreload(t *testing.T) {
	s, info := startSim(t, Options{})
	freshInstallForTest(t, s, "z2g4a")
	root := sshAs(t, info, "z2g4a", "root")
	bad := "bogus words\n" + strings.Replace(installerInterfaces, "iface bcm5720p1 inet manual\n", "iface bcm5720p1 inet manual\nbogus\n", 1)
	bad = strings.Replace(bad, "iface i219 inet manual", "iface i219 inet sometimes", 1)
	if _, errs, code := root.run("install -m 0644 /dev/stdin /etc/network/interfaces", []byte(bad)); code != 0 {
		t.Fatal(errs)
	}
	_, errs, code := root.run("ifreload -a", nil)
	// ifupdown2 numbers an invalid option line from 0, the rest from 1.
	want := "error: /etc/network/interfaces: line1: error processing line 'bogus words'\n" +
		"error: /etc/network/interfaces: line15: iface bcm5720p1: invalid syntax 'bogus'\n" +
		"error: /etc/network/interfaces: line18: iface i219: unsupported address method 'sometimes'\n"
	if code != 1 || errs != want {
		t.Errorf("ifreload -a: exit %d, %q; want %q", code, errs, want)
	}
	// What it could read is live: vmbr0 still answers.
	if ok, why := s.Reachable("z2g4a"); !ok {
		t.Errorf("after a partly bad file: %s", why)
	}
	if _, errs, code := root.run("ifreload", nil); code != 2 || !strings.Contains(errs, "one of the arguments -a/--all -c/--currently-up --allow is required") {
		t.Errorf("ifreload without -a: %d %q", code, errs)
	}
	tf := sshAs(t, info, "z2g4a", SSHSudoUser)
	if _, errs, code := tf.run("ifreload -a", nil); code != 1 || errs != "error: must be root to run this command\n" {
		t.Errorf("non-root: %d %q", code, errs)
	}
	// interfaces.new: written, read back, removed.
	if _, errs, code := root.run("install -m 0644 /dev/stdin /etc/network/interfaces.new", []byte(bondBridgeInterfaces)); code != 0 {
		t.Fatal(errs)
	}
	c := newClient(t, info, "")
	r := c.ok("GET", "/nodes/z2g4a/network", nil)
	if ch, _ := r.env["changes"].(string); !strings.Contains(ch, "+auto bond0") {
		t.Errorf("changes = %q", ch)
	}
	root.ok("rm /etc/network/interfaces.new")
	if _, _, code := root.run("cat /etc/network/interfaces.new", nil); code != 1 {
		t.Error("interfaces.new survived rm")
	}
}

func TestCp(t *testing.T) {
	s, info := startSim(t, Options{})
	root := sshAs(t, info, "z2g4a", "root")
	if _, errs, code := root.run("install -m 0600 -o root -g www-data /dev/stdin /root/a", []byte("x\n")); code != 0 {
		t.Fatal(errs)
	}
	root.ok("cp /root/a /root/b")
	root.ok("cp -p /root/a /root/c")
	if out := root.ok("stat -c '%a %U %G' /root/b /root/c"); out != "600 root root\n600 root www-data\n" {
		t.Errorf("stat = %q", out)
	}
	if b, _ := s.NodeFile("z2g4a", "/root/b"); !bytes.Equal(b, []byte("x\n")) {
		t.Errorf("content = %q", b)
	}
	for line, want := range map[string]string{
		"cp /root/nope /root/d": "cp: cannot stat '/root/nope': No such file or directory\n",
		"cp /root/a":            "cp: missing destination file operand after '/root/a'\nTry 'cp --help' for more information.\n",
		"cp /root/a /root/a":    "cp: '/root/a' and '/root/a' are the same file\n",
	} {
		if _, errs, code := root.run(line, nil); code != 1 || errs != want {
			t.Errorf("%s: %d %q", line, code, errs)
		}
	}
}

// A peer proxies to a cut-off node's management address: on the subnet it
// needs no gateway, but a node without its address or link is gone.
func TestReachProxyThroughPeer(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	freshInstallForTest(t, s, "z2g4b")
	c := newClient(t, info, info.Nodes[0].Endpoint)
	c.ok("GET", "/nodes/z2g4b/status", nil)

	// A wrong gateway cuts clients behind the router off, not the peers.
	s.mu.Lock()
	ns := s.st.Nodes["z2g4b"]
	ns.Applied.Ifaces["vmbr0"].Gateway = "172.27.2.1"
	s.reloadNetworkLocked(ns)
	s.mu.Unlock()
	if ok, _ := s.Reachable("z2g4b"); ok {
		t.Fatal("z2g4b answers with a wrong gateway")
	}
	c.ok("GET", "/nodes/z2g4b/status", nil)

	if err := s.SetNICLink("z2g4b", "bcm5720p0", false); err != nil {
		t.Fatal(err)
	}
	r := c.do("GET", "/nodes/z2g4b/status", nil)
	if r.status != 595 || r.reason != "Connection timed out" {
		t.Errorf("proxied to a node without link: %d %q", r.status, r.reason)
	}
}

func TestSystemdRunTimersEndWithTheNodeAndTheSimulator(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	root := sshAs(t, info, "z2g4a", "root")
	if _, errs, code := root.run("install -m 0755 /dev/stdin /root/job.sh", []byte("#!/bin/sh\ninstall -m 0644 /etc/hostname /root/ran\n")); code != 0 {
		t.Fatal(errs)
	}
	// A reboot forgets transient units.
	root.ok("systemd-run --unit=job --on-active=1s /root/job.sh")
	s.RebootNode("z2g4a")
	if err := s.WaitTimersIdle("z2g4a", time.Second); err != nil {
		t.Errorf("after a reboot: %v", err)
	}
	root = sshAs(t, info, "z2g4a", "root")
	if out := root.ok("systemctl show -p LoadState job.timer"); out != "LoadState=not-found\n" {
		t.Errorf("timer after a reboot: %q", out)
	}
	// Close cancels an armed timer instead of waiting for it.
	root.ok("systemd-run --unit=job --on-active=1s /root/job.sh")
	start := time.Now()
	_ = s.Close()
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Close took %s: it waited for the timer", d)
	}
	if _, ok := s.NodeFile("z2g4a", "/root/ran"); ok {
		t.Error("a timer ran")
	}
}
