package pvesim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// cephLab builds the reference lab's Ceph through the API with a frozen
// clock: a monitor on every node, OSDs on /dev/sdb and /dev/sdc of each
// (osd.0/1 on z2g4a, 2/3 on z2g4b, 4/5 on z2g4c) and a pool with data.
func cephLab(t *testing.T) (*Sim, Info, *client) {
	t.Helper()
	s, info := startSim(t, Options{ClusterName: "lab", TaskDuration: time.Millisecond, CephTimeScale: -1})
	c := cephWithMons(t, s)
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		for _, dev := range []string{"/dev/sdb", "/dev/sdc"} {
			if st := c.waitTask(n, c.ok("POST", "/nodes/"+n+"/ceph/osd", vals("dev", dev)).data().(string)); st["exitstatus"] != "OK" {
				t.Fatalf("OSD on %s %s: %v", n, dev, st)
			}
		}
	}
	if st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/pool", vals("name", "rbd", "pg_num", "32")).data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("pool: %v", st)
	}
	s.CephAdvance(10 * time.Second) // the new pool's PGs peer
	return s, info, c
}

// fails runs line and wants exit status code with want in stderr.
func (tg *sshTarget) fails(line string, code int, want string) {
	tg.t.Helper()
	_, errs, got := tg.run(line, nil)
	if got != code || !strings.Contains(errs, want) {
		tg.t.Errorf("%s: exit %d stderr %q, want exit %d with %q", line, got, errs, code, want)
	}
}

func jsonOf(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
}

// The config database through `ceph config`, as the API sees it too:
// values normalized as Ceph stores them, Ceph's refusals with its texts
// and errnos, restart-needing options marked, the history logged.
func TestSSHCephConfig(t *testing.T) {
	sim, info, api := cephLab(t)
	root := sshAs(t, info, "z2g4b", "root")

	root.ok("ceph config set osd osd_memory_target 8G")
	root.ok("ceph config set osd bdev_enable_discard 1")
	root.ok("ceph config set osd.3 osd_max_backfills 4")
	if got := root.ok("ceph config get osd.0 osd_memory_target"); got != "8589934592\n" {
		t.Errorf("config get: %q", got)
	}
	if got := root.ok("ceph config get osd.0 osd_max_backfills"); got != "1\n" {
		t.Errorf("default for osd.0: %q", got)
	}
	if got := root.ok("ceph config get osd.3 osd_max_backfills"); got != "4\n" {
		t.Errorf("osd.3's own: %q", got)
	}
	var dump []map[string]any
	jsonOf(t, root.ok("ceph config dump --format json"), &dump)
	want := []map[string]any{
		// Ceph calls every bool and number updatable, observed or not
		// (Option::can_update_at_runtime; real Ceph agrees, make testlab).
		{"section": "osd", "name": "bdev_enable_discard", "value": "true", "level": "advanced", "can_update_at_runtime": true, "mask": ""},
		{"section": "osd", "name": "osd_memory_target", "value": "8589934592", "level": "basic", "can_update_at_runtime": true, "mask": ""},
		{"section": "osd.3", "name": "osd_max_backfills", "value": "4", "level": "advanced", "can_update_at_runtime": true, "mask": ""},
	}
	if !reflect.DeepEqual(dump, want) {
		t.Errorf("dump\n got %v\nwant %v", dump, want)
	}
	if plain := root.ok("ceph config dump"); !regexp.MustCompile(`(?m)^  osd +advanced +bdev_enable_discard +true *$`).MatchString(plain) {
		t.Errorf("plain dump:\n%s", plain)
	}
	// PVE's GET cfg/db is the same dump.
	db := api.ok("GET", "/nodes/z2g4a/ceph/cfg/db", nil).data().([]any)
	if len(db) != 3 || db[0].(map[string]any)["can_update_at_runtime"] != float64(1) || db[1].(map[string]any)["can_update_at_runtime"] != float64(1) {
		t.Errorf("cfg/db %v", db)
	}

	// Ceph's refusals.
	root.fails("ceph config set osd osd_memory_target 512M", 22, "Error EINVAL: error parsing value: Value '536870912' is below minimum 939524096")
	root.fails("ceph config set osd osd_memory_targe 8G", 22, "Error EINVAL: unrecognized config option 'osd_memory_targe'")
	root.fails("ceph config set osd bdev_enable_discard yes", 22, "Error EINVAL: error parsing value: Expected option value to be integer, got 'yes'")
	root.fails("ceph config set osds osd_max_backfills 2", 22, "Error EINVAL: unrecognized config target 'osds'")
	root.fails("ceph config set global fsid 5b0c3b5e-0000-4000-8000-000000000000", 22, "fsid is special and cannot be stored by the mon")
	root.fails("ceph config set osd osd_max_backfills 2 3", 22, "Invalid command: unused arguments: ['3']")
	root.fails("ceph config help osd_memory_targe", 2, "Error ENOENT: \n")
	var help map[string]any
	jsonOf(t, root.ok("ceph config help bdev_enable_discard -f json"), &help)
	// Updatable, but no daemon observes it: no "runtime" flag.
	if help["can_update_at_runtime"] != true || !reflect.DeepEqual(help["flags"], []any{}) || help["type"] != "bool" || !reflect.DeepEqual(help["services"], []any{"osd"}) {
		t.Errorf("help %v", help)
	}
	jsonOf(t, root.ok("ceph config help osd_memory_target --format=json"), &help)
	if help["min"] != "939524096" || help["max"] != "" || help["can_update_at_runtime"] != true || !reflect.DeepEqual(help["flags"], []any{"runtime"}) {
		t.Errorf("help %v", help)
	}

	// Values with anything a shell would interpret arrive as one argument.
	hostile := "/var/log/a b; $(reboot) `id` \"q\" 'x'\nsecond line"
	root.ok(nodeexec.Cmd("ceph", "config", "set", "client.hostile", "log_file", hostile).String())
	jsonOf(t, root.ok("ceph config dump -f json"), &dump)
	found := false
	for _, e := range dump {
		if e["section"] == "client.hostile" && e["value"] == hostile {
			found = true
		}
	}
	if !found {
		t.Errorf("hostile value not stored verbatim: %v", dump)
	}

	// rm, and the history with timestamps.
	root.ok("ceph config rm osd.3 osd_max_backfills")
	root.ok("ceph config rm osd.3 osd_max_backfills") // removing nothing is fine
	var log []map[string]any
	jsonOf(t, root.ok("ceph config log 2 -f json"), &log)
	if len(log) != 2 || log[0]["changes"].([]any)[0].(map[string]any)["key"] != "osd.3/osd_max_backfills" ||
		log[0]["changes"].([]any)[0].(map[string]any)["previous_value"] != "4" {
		t.Errorf("log %v", log)
	}
	if ts, _ := log[0]["timestamp"].(string); !strings.HasSuffix(ts, "+0000") {
		t.Errorf("timestamp %q", ts)
	}

	// config show: what a running daemon uses, with overrides from tell;
	// a database change reaches it about a second later (cephConfigShowLag).
	if got := root.ok("ceph config show osd.0 osd_memory_target"); got != "4294967296\n" {
		t.Errorf("show right after config set: %q, want the default still", got)
	}
	sim.CephAdvance(2 * time.Second)
	if got := root.ok("ceph config show osd.0 osd_memory_target"); got != "8589934592\n" {
		t.Errorf("show: %q", got)
	}
	out := root.ok("ceph tell osd.0 config set osd_max_backfills 3")
	if !strings.Contains(out, `"success": "osd_max_backfills = '3' "`) {
		t.Errorf("tell config set: %q", out)
	}
	if out := root.ok("ceph tell osd.0 config set bdev_enable_discard false"); !strings.Contains(out, "(not observed, change may require restart)") {
		t.Errorf("tell config set of a startup option: %q", out)
	}
	if got := root.ok("ceph tell osd.0 config get osd_max_backfills"); !strings.Contains(got, `"osd_max_backfills": "3"`) {
		t.Errorf("tell config get: %q", got)
	}
	var show []map[string]any
	jsonOf(t, root.ok("ceph config show osd.0 -f json"), &show)
	sources := map[string]string{}
	for _, e := range show {
		sources[e["name"].(string)] = e["source"].(string) + "=" + e["value"].(string)
	}
	if sources["osd_max_backfills"] != "override=3" || sources["osd_memory_target"] != "mon=8589934592" || sources["public_network"] != "file=172.27.2.0/24" {
		t.Errorf("show sources %v", sources)
	}
	root.ok("ceph tell osd.0 injectargs '--osd_max_backfills 2'")
	if got := root.ok("ceph config show osd.0 osd_max_backfills"); got != "2\n" {
		t.Errorf("after injectargs: %q", got)
	}

	// Only root reads the admin keyring.
	sshAs(t, info, "z2g4b", SSHNoSudoUser).fails("ceph -s", 13, "RADOS permission denied")
	sshAs(t, info, "z2g4b", SSHSudoUser).ok("sudo -n -- ceph health")
}

// A restart takes an OSD down while it boots: its PGs run degraded,
// ok-to-stop refuses the other hosts' OSDs until it is back and
// recovered, and the history records how many hosts had OSDs down.
func TestSSHCephOSDRestart(t *testing.T) {
	s, info, _ := cephLab(t)
	a := sshAs(t, info, "z2g4a", "root")
	b := sshAs(t, info, "z2g4b", "root")

	if got := a.ok("systemctl is-active ceph-osd@0 ceph-osd.target"); got != "active\nactive\n" {
		t.Errorf("is-active: %q", got)
	}
	a.fails("systemctl restart ceph-osd@2", 5, "Unit ceph-osd@2.service not found.") // osd.2 lives on z2g4b
	before := time.Now()
	a.ok("ceph osd set-group noout z2g4a")
	if got := s.CephNooutSet(); !reflect.DeepEqual(got, []string{"host z2g4a"}) {
		t.Errorf("noout %v", got)
	}
	a.ok("systemctl restart ceph-osd.target")
	var dump struct {
		Flags          string              `json:"flags"`
		CrushNodeFlags map[string][]string `json:"crush_node_flags"`
		OSDs           []struct {
			OSD int `json:"osd"`
			Up  int `json:"up"`
		} `json:"osds"`
	}
	jsonOf(t, a.ok("ceph osd dump -f json"), &dump)
	if dump.OSDs[0].Up != 0 || dump.OSDs[1].Up != 0 || dump.OSDs[2].Up != 1 || !reflect.DeepEqual(dump.CrushNodeFlags["z2g4a"], []string{"noout"}) {
		t.Errorf("osd dump after restart: %+v", dump)
	}
	// The unit is active at once (the daemon is booting), and started now.
	if got := a.ok("systemctl is-active ceph-osd@1"); got != "active\n" {
		t.Errorf("booting osd.1: %q", got)
	}
	ts := a.ok("systemctl show -p ActiveEnterTimestamp --timestamp=us+utc ceph-osd@1")
	started, err := time.Parse("Mon 2006-01-02 15:04:05.000000 MST", strings.TrimSpace(strings.TrimPrefix(ts, "ActiveEnterTimestamp=")))
	if err != nil || started.Before(before.Add(-time.Millisecond)) || started.After(time.Now()) {
		t.Errorf("ActiveEnterTimestamp %q (%v), restarted after %v", ts, err, before)
	}
	var health struct {
		Status string                     `json:"status"`
		Checks map[string]json.RawMessage `json:"checks"`
	}
	jsonOf(t, b.ok("ceph health --format json"), &health)
	for _, c := range []string{"OSD_DOWN", "OSD_HOST_DOWN", "PG_DEGRADED", "OSD_FLAGS"} {
		if _, ok := health.Checks[c]; !ok {
			t.Errorf("health %s lacks %s", health.Status, c)
		}
	}
	// Stopping z2g4b's OSDs now would leave PGs with one copy.
	out, errs, code := b.run("ceph osd ok-to-stop 2 3", nil)
	var ok map[string]any
	jsonOf(t, out, &ok)
	if code != 16 || ok["ok_to_stop"] != false || !strings.Contains(errs, "Error EBUSY: unsafe to stop osd(s) at this time") {
		t.Errorf("ok-to-stop while z2g4a is down: %d %v %q", code, ok, errs)
	}
	s.CephAdvance(10 * time.Second) // still booting
	b.fails("ceph osd ok-to-stop osd.2 osd.3", 16, "are or would become offline")
	s.CephAdvance(20 * time.Second) // booted and recovered
	jsonOf(t, b.ok("ceph osd ok-to-stop 2 3"), &ok)
	if ok["ok_to_stop"] != true {
		t.Errorf("ok-to-stop after recovery: %v", ok)
	}
	a.ok("ceph osd unset-group noout z2g4a")
	if got := s.CephNooutSet(); len(got) != 0 {
		t.Errorf("noout left: %v", got)
	}
	if got := s.CephDownWithoutNoout(); len(got) != 0 {
		t.Errorf("down without noout: %v", got)
	}
	if got := s.CephMaxHostsDownAtOnce(); got != 1 {
		t.Errorf("max hosts down %d: %v", got, s.CephDownHistory())
	}

	// Two hosts at once, without noout: recorded.
	b.ok("systemctl restart ceph-osd@2")
	a.ok("systemctl restart ceph-osd@0")
	if got := s.CephMaxHostsDownAtOnce(); got != 2 {
		t.Errorf("max hosts down %d: %v", got, s.CephDownHistory())
	}
	if got := s.CephDownWithoutNoout(); len(got) != 2 {
		t.Errorf("down without noout: %v", got)
	}
	if v := s.CephMinSizeViolations(); len(v) == 0 {
		t.Errorf("two hosts down left every PG active")
	}
	s.CephAdvance(time.Minute)

	// A daemon that cannot start: the job fails, the unit is failed.
	s.SetCephDaemonFailStart("osd.5", true)
	c := sshAs(t, info, "z2g4c", "root")
	c.fails("systemctl restart ceph-osd@5", 1, "Job for ceph-osd@5.service failed because the control process exited with error code.")
	_, _, code = c.run("systemctl is-active ceph-osd@5", nil)
	if out, _, _ := c.run("systemctl is-active ceph-osd@5", nil); code != 3 || out != "failed\n" {
		t.Errorf("failed unit: %d %q", code, out)
	}
	s.SetCephDaemonFailStart("osd.5", false)
	c.ok("systemctl start ceph-osd@5")
	s.CephAdvance(time.Minute)
	jsonOf(t, c.ok("ceph osd dump -f json"), &dump)
	if dump.OSDs[5].Up != 1 {
		t.Errorf("osd.5 after start: %+v", dump.OSDs[5])
	}
	c.ok("systemctl stop ceph-osd@5")
	if out, _, _ := c.run("systemctl is-active ceph-osd@5", nil); out != "inactive\n" {
		t.Errorf("stopped unit: %q", out)
	}
}

// Flags: cluster-wide and per group, with Ceph's answers; set-group can be
// made unknown (an old Ceph).
func TestSSHCephFlags(t *testing.T) {
	s, info, api := cephLab(t)
	a := sshAs(t, info, "z2g4a", "root")
	_, errs, code := a.run("ceph osd set noout", nil)
	if code != 0 || errs != "noout is set\n" {
		t.Errorf("set noout: %d %q", code, errs)
	}
	if f := api.ok("GET", "/cluster/ceph/flags/noout", nil).data(); f != float64(1) {
		t.Errorf("API sees noout = %v", f)
	}
	a.ok("ceph osd unset noout")
	a.fails("ceph osd set noot", 22, "Invalid command: noot not in full|pause|noup")
	a.ok("ceph osd set-group noout,noin osd.2 z2g4c")
	a.fails("ceph osd set-group noout z2g4x", 22, `unable to parse osd id or crush node or device class: "z2g4x"`)
	a.fails("ceph osd set-group nofly osd.2", 22, "unrecognized flag 'nofly'")
	if got := s.CephNooutSet(); !reflect.DeepEqual(got, []string{"host z2g4c", "osd.2"}) {
		t.Errorf("noout %v", got)
	}
	st := api.ok("GET", "/cluster/ceph/status", nil).data().(map[string]any)
	checks := st["health"].(map[string]any)["checks"].(map[string]any)
	if c, ok := checks["OSD_FLAGS"].(map[string]any); !ok || c["summary"].(map[string]any)["message"] != "2 OSDs or CRUSH {nodes, device-classes} have {NOUP,NODOWN,NOIN,NOOUT} flags set" {
		t.Errorf("OSD_FLAGS %v", checks)
	}
	a.ok("ceph osd unset-group noout,noin osd.2 z2g4c")
	if got := s.CephNooutSet(); len(got) != 0 {
		t.Errorf("noout %v", got)
	}
	s.SetCephSetGroupSupported(false)
	a.fails("ceph osd set-group noout z2g4a", 22, "Error EINVAL: invalid command")
	// Monitors and managers.
	a.ok("ceph mon ok-to-stop z2g4a")
	a.ok("systemctl stop ceph-mon@z2g4a")
	a.fails("ceph mon ok-to-stop z2g4b", 16, "not enough monitors would be available (z2g4c) after stopping mons [z2g4b]")
	var q struct {
		Names []string `json:"quorum_names"`
	}
	jsonOf(t, a.ok("ceph quorum_status"), &q)
	if !reflect.DeepEqual(q.Names, []string{"z2g4b", "z2g4c"}) {
		t.Errorf("quorum %v", q.Names)
	}
	a.ok("systemctl start ceph-mon@z2g4a")
	s.CephAdvance(10 * time.Second)
	jsonOf(t, a.ok("ceph quorum_status"), &q)
	if len(q.Names) != 3 {
		t.Errorf("quorum after start %v", q.Names)
	}
	var mgr map[string]any
	jsonOf(t, a.ok("ceph mgr dump -f json"), &mgr)
	if mgr["available"] != true || mgr["active_name"] == nil {
		t.Errorf("mgr dump %v", mgr)
	}
}

// /etc/pve/ceph.conf over SSH is the file the API reads and writes: a file
// written by hand is served verbatim until PVE rewrites it (which drops
// comments, as PVE's writer does), and PVE's ceph.conf lock keeps its
// writers out while a hand edit holds it.
func TestSSHCephConfFile(t *testing.T) {
	s, info, api := cephLab(t)
	a := sshAs(t, info, "z2g4a", "root")
	raw := api.ok("GET", "/nodes/z2g4a/ceph/cfg/raw", nil).data().(string)
	if got := a.ok("cat /etc/pve/ceph.conf"); got != raw {
		t.Fatalf("ssh %q\napi %q", got, raw)
	}
	if got := a.ok("cat /etc/ceph/ceph.conf"); got != raw {
		t.Errorf("/etc/ceph/ceph.conf is not the same file")
	}
	if got := a.ok("stat -c '%a %U %G' /etc/pve/ceph.conf"); got != "640 root www-data\n" {
		t.Errorf("stat %q", got)
	}
	a.ok("mkdir /etc/pve/priv/lock/file-ceph_conf")
	a.fails("mkdir /etc/pve/priv/lock/file-ceph_conf", 1, "cannot create directory '/etc/pve/priv/lock/file-ceph_conf': File exists")
	// PVE's writers wait for the lock (and give up).
	st := api.waitTask("z2g4c", api.ok("DELETE", "/nodes/z2g4c/ceph/mon/z2g4c", nil).data().(string))
	if !strings.Contains(fmt.Sprint(st["exitstatus"]), "cfs-lock 'file-ceph_conf' error: got lock request timeout") {
		t.Errorf("monitor destroy under the lock: %v", st)
	}
	edited := "# edited by hand\n" + strings.Replace(raw, "[client]\n", "[client]\n\trbd_cache = true\n\trbd cache writethrough until flush = true ; a comment\n", 1) +
		"[osd]\n\tbdev_enable_discard = true\n"
	if _, errs, code := a.run("install -m 0640 -o root -g www-data -T /dev/stdin /etc/pve/.ceph.conf.tmp", []byte(edited)); code != 0 {
		t.Fatal(errs)
	}
	a.ok("mv -f -T -- /etc/pve/.ceph.conf.tmp /etc/pve/ceph.conf")
	a.ok("rmdir /etc/pve/priv/lock/file-ceph_conf")
	a.fails("rmdir /etc/pve/priv/lock/file-ceph_conf", 1, "No such file or directory")
	if got := api.ok("GET", "/nodes/z2g4b/ceph/cfg/raw", nil).data().(string); got != edited {
		t.Errorf("API after a hand edit:\n%s", got)
	}
	got := api.ok("GET", "/nodes/z2g4b/ceph/cfg/value", vals("config-keys", "client:rbd_cache;client:rbd_cache_writethrough_until_flush;osd:bdev_enable_discard")).data()
	want := map[string]any{"client": map[string]any{"rbd_cache": "true", "rbd_cache_writethrough_until_flush": "true"}, "osd": map[string]any{"bdev_enable_discard": "true"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cfg/value %v", got)
	}
	// The daemons read the file when they start.
	if got := a.ok("ceph config show osd.0 bdev_enable_discard"); got != "false\n" {
		t.Errorf("running osd.0 before restart: %q", got)
	}
	a.ok("systemctl restart ceph-osd@0")
	s.CephAdvance(time.Minute)
	if got := a.ok("ceph config show osd.0 bdev_enable_discard"); got != "true\n" {
		t.Errorf("osd.0 after restart: %q", got)
	}
	// A PVE write parses and rewrites the file: keys kept, comments gone.
	if st := api.waitTask("z2g4c", api.ok("DELETE", "/nodes/z2g4c/ceph/mon/z2g4c", nil).data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("monitor destroy: %v", st)
	}
	after := a.ok("cat /etc/pve/ceph.conf")
	if strings.Contains(after, "# edited by hand") || !strings.Contains(after, "\trbd_cache_writethrough_until_flush = true\n") || strings.Contains(after, "[mon.z2g4c]") {
		t.Errorf("after PVE's write:\n%s", after)
	}
}
