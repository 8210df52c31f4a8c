package adopt

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/service/node"
)

// What only a node holds, read over SSH with reading commands: the CA
// certificates the user added to the trust store, the files under /etc a
// resource can own (drop-ins and unit files under /etc/systemd/system,
// the configuration files of services the user enabled), those services,
// tuned's profile and NIC rings kept across reboots. Each is one for_each
// group in node.tf, keyed by node (or <node>/<name>), so that what is the
// same on every node (a PEM, a drop-in) is written once in the block.

const nodeTF = "node.tf"

const (
	systemdDir = "/etc/systemd/system/"
	caDir      = "/usr/local/share/ca-certificates/"
)

// serviceConfigs are the configuration files of services, by unit: the
// file is adopted when the service is enabled (systemd.unit(5) does not
// name them; these are the services' own man pages). Each is a conffile of
// the package that installs the service (systemd-journal-remote), so it
// is adopted with keep_on_destroy (destroying the resource leaves the
// package's file) and restart_units (the running service reads it only
// when it starts).
var serviceConfigs = map[string][]string{
	"systemd-journal-upload.service": {"/etc/systemd/journal-upload.conf"}, // journal-upload.conf(5)
	"systemd-journal-remote.service": {"/etc/systemd/journal-remote.conf"}, // journal-remote.conf(5)
}

// pveOwnUnit reports whether unit belongs to PVE's own installation (its
// packages enable it, and Ceph's units are the Ceph resources'): a drop-in
// of it is adopted, its enabled and running state is not made a
// pve_node_service, which would manage what PVE manages.
func pveOwnUnit(unit string) bool {
	for _, p := range []string{"pve", "proxmox-", "ceph", "corosync.", "spiceproxy.", "qmeventd.", "lxc", "watchdog-mux.", "ksmtuned.", "rrdcached."} {
		if strings.HasPrefix(unit, p) {
			return true
		}
	}
	return false
}

// driverRings are the ring sizes Linux drivers start with (rx, tx): a NIC
// whose rings differ was set by hand (ethtool -G). Sources: mlx4_en.h
// (MLX4_EN_DEF_RX/TX_RING_SIZE), e1000e/e1000.h (E1000_DEFAULT_RXD/TXD),
// tg3.c (TG3_DEF_RX_RING_PENDING, TG3_DEF_TX_RING_PENDING), igb.h,
// ixgbe.h, i40e.h (I40E_DEFAULT_NUM_DESCRIPTORS). Other drivers are not
// compared.
var driverRings = map[string][2]int{
	"mlx4_en": {1024, 1024},
	"e1000e":  {256, 256},
	"tg3":     {200, 511},
	"igb":     {256, 256},
	"ixgbe":   {512, 512},
	"i40e":    {512, 512},
}

// adoptNode adopts what only a node holds, over SSH: trusted CAs, files under /etc, units, tuned, NIC rings.
func adoptNode(ctx context.Context, r *run) error {
	if r.src.SSH == nil {
		r.skip("node files, trusted CAs, tuned", "need SSH: give the adoption the nodes' SSH key to read the files under /etc, "+
			"the trusted CAs, the units, tuned's profile and the NIC rings")
		return nil
	}
	a := &nodeAdoption{r: r, names: map[string]string{}, used: map[string]bool{}, skips: map[[2]string][]string{},
		ringUnits: map[string]bool{}}
	online, err := r.onlineNodes(ctx, "files, trusted CAs, units, tuned and NIC rings")
	if err != nil {
		return err
	}
	var reachable []string
	for _, n := range online {
		ok, err := a.trustedCAs(ctx, n)
		if err != nil {
			return err
		}
		if ok {
			reachable = append(reachable, n)
		}
	}
	for _, n := range reachable {
		if err := a.units(ctx, n); err != nil {
			return err
		}
	}
	for _, n := range reachable {
		if err := a.tuned(ctx, n); err != nil {
			return err
		}
	}
	for _, n := range reachable {
		if err := a.rings(ctx, n); err != nil {
			return err
		}
	}
	a.flushSkips()
	return nil
}

type nodeAdoption struct {
	r     *run
	names map[string]string // type + "\x00" + object -> resource name
	used  map[string]bool   // type + "\x00" + resource name
	// skips are what is not adopted: (object, reason) -> nodes, so that
	// the same object on every node is one line.
	skips map[[2]string][]string
	order [][2]string
	// ringUnits are the unit files pve_node_nic_ring writes found on
	// the nodes (<node>/pve-nic-ring-<iface>.service).
	ringUnits map[string]bool
}

// skip records object on node as not adopted, and why.
func (a *nodeAdoption) skip(nodeName, object, reason string) {
	k := [2]string{object, reason}
	if _, ok := a.skips[k]; !ok {
		a.order = append(a.order, k)
	}
	a.skips[k] = append(a.skips[k], nodeName)
}

func (a *nodeAdoption) flushSkips() {
	for _, k := range a.order {
		a.r.skip(fmt.Sprintf("%s (%s)", k[0], strings.Join(a.skips[k], ", ")), k[1])
	}
}

// name is the resource name for object (a path, a unit) in type typ: the
// same object on every node gets the same name, different objects
// different ones.
func (a *nodeAdoption) name(typ, object, want string) string {
	if n, ok := a.names[typ+"\x00"+object]; ok {
		return n
	}
	n := want
	for i := 2; a.used[typ+"\x00"+n]; i++ {
		n = want + "_" + strconv.Itoa(i)
	}
	a.used[typ+"\x00"+n] = true
	a.names[typ+"\x00"+object] = n
	return n
}

// ident makes s a Terraform name: lower case, '_' for anything else.
func ident(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	out := strings.TrimSuffix(b.String(), "_")
	if out == "" || (out[0] >= '0' && out[0] <= '9') {
		out = "f_" + out
	}
	return out
}

// lsEntry is one name ls -p printed.
type lsEntry struct {
	name string
	dir  bool
}

// ls lists directories (ls -1 -A -p) and returns their entries by
// directory; a directory that does not exist has none. connErr is set
// when the node could not be reached at all.
func (a *nodeAdoption) ls(ctx context.Context, nodeName string, dirs ...string) (map[string][]lsEntry, error) {
	out, err := a.r.sshRead(ctx, nodeName, "ls", append([]string{"-1", "-A", "-p", "--"}, dirs...)...)
	if err != nil {
		var e *nodeexec.Error
		// ls exits 2 when an operand is missing and lists the others.
		if !errors.As(err, &e) || e.Err != nil || e.ExitCode != 2 || !strings.Contains(e.Stderr, "No such file or directory") {
			return nil, err
		}
		out = []byte(e.Stdout)
	}
	res := map[string][]lsEntry{}
	cur := ""
	if len(dirs) == 1 {
		cur = dirs[0]
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		if len(dirs) > 1 && strings.HasSuffix(line, ":") && strings.HasPrefix(line, "/") {
			cur = strings.TrimSuffix(line, ":")
			continue
		}
		if cur == "" {
			continue
		}
		name, dir := strings.CutSuffix(line, "/")
		res[cur] = append(res[cur], lsEntry{name: name, dir: dir})
	}
	return res, nil
}

// unreachable reports whether err is the node not answering (rather than
// a command failing on it).
func unreachable(err error) bool {
	var e *nodeexec.Error
	return !errors.As(err, &e) || e.Err != nil
}

// trustedCAs adopts the certificates in /usr/local/share/ca-certificates
// as pve_node_trusted_ca; false when the node cannot be reached over SSH
// (the rest of the node is then skipped).
func (a *nodeAdoption) trustedCAs(ctx context.Context, nodeName string) (bool, error) {
	dir := strings.TrimSuffix(caDir, "/")
	listed, err := a.ls(ctx, nodeName, dir)
	if err != nil {
		if unreachable(err) {
			a.r.skip("node "+nodeName, fmt.Sprintf("not reachable over SSH, so its files, trusted CAs, units, tuned and NIC rings are not adopted: %v", err))
			return false, nil
		}
		return false, fmt.Errorf("node %s: %w", nodeName, err)
	}
	for _, e := range listed[dir] {
		p := caDir + e.name
		name, ok := node.TrustedCAName(e.name)
		switch {
		case e.dir:
			a.skip(nodeName, p+"/", "a directory: update-ca-certificates reads the certificates in it, pve_node_trusted_ca manages only files directly in "+caDir)
			continue
		case !strings.HasSuffix(e.name, ".crt"):
			a.skip(nodeName, p, "not a .crt file: update-ca-certificates ignores it")
			continue
		case !ok:
			a.skip(nodeName, p, "its name is not one pve_node_trusted_ca can give (letters, digits, '.', '_', '-')")
			continue
		}
		id := nodeName + "/" + name
		st, err := a.r.read(ctx, "pve_node_trusted_ca", id)
		if err != nil {
			return false, err
		}
		if st == nil {
			continue
		}
		if why := node.TrustedCAProblem(st.String("pem")); why != "" {
			a.skip(nodeName, p, why+": pve_node_trusted_ca refuses it")
			continue
		}
		if !st.Bool("trusted") {
			a.skip(nodeName, p, "not in the trust store: update-ca-certificates was not run after the file was added; "+
				"pve_node_trusted_ca would run it (a change), so it is not adopted")
			continue
		}
		g := Group{File: nodeTF, Type: "pve_node_trusted_ca", Name: "lab", Local: "trusted_cas",
			Comment: "CA certificates added to the nodes' trust store (" + caDir + "<name>.crt, linked into /etc/ssl/certs)."}
		if err := a.r.addState(ctx, g, id, id, st); err != nil {
			return false, err
		}
	}
	return true, nil
}

// unitState is what systemctl show says of a unit.
type unitState struct{ load, fileState, active string }

// units adopts drop-ins and unit files under /etc/systemd/system, the
// configuration files of enabled services, and the units so configured
// that are enabled (as pve_node_service).
func (a *nodeAdoption) units(ctx context.Context, nodeName string) error {
	top := strings.TrimSuffix(systemdDir, "/")
	listed, err := a.ls(ctx, nodeName, top)
	if err != nil {
		return fmt.Errorf("node %s: %w", nodeName, err)
	}
	var dropDirs, unitFiles []string
	dropUnit := map[string]string{} // drop-in directory -> unit
	for _, e := range listed[top] {
		unit, isDropDir := strings.CutSuffix(e.name, ".d")
		switch {
		case e.dir && isDropDir && isUnitName(unit):
			dropDirs = append(dropDirs, systemdDir+e.name)
			dropUnit[systemdDir+e.name] = unit
		case !e.dir && isUnitName(e.name):
			unitFiles = append(unitFiles, systemdDir+e.name)
		}
		// Other entries: *.wants/ and *.requires/ hold the links of
		// enabled units (pve_node_service's state, not files).
	}
	dropIns := map[string][]string{} // unit -> drop-in paths
	if len(dropDirs) > 0 {
		inside, err := a.ls(ctx, nodeName, dropDirs...)
		if err != nil {
			return fmt.Errorf("node %s: %w", nodeName, err)
		}
		for _, d := range dropDirs {
			for _, e := range inside[d] {
				p := d + "/" + e.name
				switch {
				case e.dir:
					a.skip(nodeName, p+"/", "a directory in a drop-in directory: systemd does not read it")
				case !strings.HasSuffix(e.name, ".conf"):
					a.skip(nodeName, p, "systemd reads only the *.conf files of a drop-in directory")
				default:
					dropIns[dropUnit[d]] = append(dropIns[dropUnit[d]], p)
				}
			}
		}
	}
	// Unit files: only regular files (links are aliases, masks or
	// enablement, which systemctl owns).
	ownFile := map[string]bool{}
	if len(unitFiles) > 0 {
		out, err := a.r.sshRead(ctx, nodeName, "stat", append([]string{"-c", "%F|%n", "--"}, unitFiles...)...)
		if err != nil {
			return fmt.Errorf("node %s: %w", nodeName, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			kind, p, ok := strings.Cut(line, "|")
			if ok && strings.HasPrefix(kind, "regular") {
				ownFile[path.Base(p)] = true
			}
		}
	}

	unitSet := map[string]bool{}
	for u := range dropIns {
		unitSet[u] = true
	}
	for u := range ownFile {
		unitSet[u] = true
	}
	for u := range serviceConfigs {
		unitSet[u] = true
	}
	units := make([]string, 0, len(unitSet))
	for u := range unitSet {
		units = append(units, u)
	}
	sort.Strings(units)
	state, err := a.showUnits(ctx, nodeName, units)
	if err != nil {
		return err
	}

	var services []string
	files := map[string][]string{} // unit -> its file groups' addresses
	for _, u := range units {
		st := state[u]
		configured := false
		if ownFile[u] && strings.HasPrefix(u, "pve-nic-ring-") {
			a.ringUnits[nodeName+"/"+u] = true // adopted with its NIC (rings)
			continue
		}
		if st.fileState == "enabled" && !pveOwnUnit(u) {
			for _, p := range serviceConfigs[u] {
				g := Group{File: nodeTF, Type: "pve_node_file", Name: a.name("pve_node_file", p, ident(path.Base(p))),
					Comment: p + ", the configuration of " + u + " (its package's file: kept on destroy),\n" +
						"restarted after a change so that the running service uses it."}
				got, err := a.r.add(ctx, g, nodeName, nodeName+":"+p+"?restart_units="+u+"&keep_on_destroy=true")
				if err != nil {
					return err
				}
				if got != nil {
					configured = true
					files[u] = append(files[u], "pve_node_file."+g.Name)
				}
			}
		}
		if ownFile[u] {
			p := systemdDir + u
			if why := node.FileRefused(p); why != "" {
				a.skip(nodeName, p, "pve_node_file does not manage it: it "+why)
			} else {
				g := Group{File: nodeTF, Type: "pve_node_file", Name: a.name("pve_node_file", p, ident(u)),
					Comment: "The unit file " + p + "."}
				if _, err := a.r.add(ctx, g, nodeName, nodeName+":"+p); err != nil {
					return err
				}
				configured = true
				files[u] = append(files[u], "pve_node_file."+g.Name)
			}
		}
		sort.Strings(dropIns[u])
		for _, p := range dropIns[u] {
			if why := node.FileRefused(p); why != "" {
				a.skip(nodeName, p, "pve_node_file does not manage it: it "+why)
				continue
			}
			id, comment := nodeName+":"+p, "Drop-in "+p+" of "+u+"."
			switch {
			case strings.HasSuffix(u, ".timer") && st.load == "loaded":
				// A timer takes a changed schedule (OnCalendar=) when it
				// is restarted: the configuration says so, and the import
				// ID's option records it (the node cannot tell).
				id += "?restart_units=" + u
				comment = "Drop-in " + p + " of " + u + ", restarted after a change so that its schedule takes effect."
			case strings.HasSuffix(u, ".service") && st.load == "loaded" && st.fileState == "enabled" && !pveOwnUnit(u):
				// An enabled service of the user's runs with the drop-in
				// it read at its start: a change takes effect on restart
				// (PVE's own services are left to restart by hand).
				id += "?restart_units=" + u
				comment = "Drop-in " + p + " of " + u + ", restarted after a change so that the running service uses it."
			}
			g := Group{File: nodeTF, Type: "pve_node_file", Name: a.name("pve_node_file", p, dropInName(u, p)), Comment: comment}
			if _, err := a.r.add(ctx, g, nodeName, id); err != nil {
				return err
			}
			configured = true
			files[u] = append(files[u], "pve_node_file."+g.Name)
		}
		switch {
		case !configured:
		case pveOwnUnit(u):
			a.skip(nodeName, "unit "+u, "part of PVE's own installation: its drop-ins are adopted, whether it is enabled and running is left to PVE (no pve_node_service)")
		case st.load == "template":
			a.skip(nodeName, "unit "+u, "a template: its files are adopted; the state of its instances is not made a pve_node_service")
		case st.load != "loaded":
			a.skip(nodeName, "unit "+u, fmt.Sprintf("systemd reports it %s: its files are adopted, not its state", orNone(st.load)))
		case st.fileState != "enabled":
			a.skip(nodeName, "unit "+u, fmt.Sprintf("configured but %s, not enabled: its files are adopted, its state is not made a pve_node_service", orNone(st.fileState)))
		default:
			services = append(services, u)
		}
	}
	for _, u := range services {
		g := Group{File: nodeTF, Type: "pve_node_service", Name: a.name("pve_node_service", u, ident(strings.TrimSuffix(u, ".service"))),
			Comment: u + ", configured by the files above: enabled, and running as it is now.", DependsOn: files[u]}
		if _, err := a.r.add(ctx, g, nodeName, nodeName+"/"+u); err != nil {
			return err
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// dropInName names a drop-in's group: the unit (without .service) and the
// drop-in's name, such as pve_daily_update_timer_override.
func dropInName(unit, p string) string {
	return ident(strings.TrimSuffix(unit, ".service") + "_" + strings.TrimSuffix(path.Base(p), ".conf"))
}

// isUnitName reports whether name is a systemd unit name with a type
// suffix.
func isUnitName(name string) bool {
	for _, suf := range []string{".service", ".socket", ".target", ".timer", ".path", ".mount", ".automount", ".swap", ".slice"} {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) {
			return true
		}
	}
	return false
}

// showUnits asks systemd for the units' load, enablement and activity,
// in one command; systemctl show prints one block per unit, in order.
func (a *nodeAdoption) showUnits(ctx context.Context, nodeName string, units []string) (map[string]unitState, error) {
	out := map[string]unitState{}
	var query []string
	for _, u := range units {
		// A template (ceph-osd@.service) has no state of its own, and
		// systemctl show refuses its name: its drop-ins apply to every
		// instance.
		if strings.Contains(u, "@.") {
			out[u] = unitState{load: "template"}
			continue
		}
		query = append(query, u)
	}
	units = query
	if len(units) == 0 {
		return out, nil
	}
	b, err := a.r.sshRead(ctx, nodeName, "systemctl", append([]string{"show", "-p", "LoadState,UnitFileState,ActiveState"}, units...)...)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", nodeName, err)
	}
	blocks := strings.Split(strings.TrimRight(string(b), "\n"), "\n\n")
	if len(blocks) != len(units) {
		return nil, fmt.Errorf("node %s: systemctl show printed %d blocks for %d units: %q", nodeName, len(blocks), len(units), b)
	}
	for i, blk := range blocks {
		var st unitState
		for _, line := range strings.Split(blk, "\n") {
			k, v, _ := strings.Cut(line, "=")
			switch k {
			case "LoadState":
				st.load = v
			case "UnitFileState":
				st.fileState = v
			case "ActiveState":
				st.active = v
			}
		}
		out[units[i]] = st
	}
	return out, nil
}

// tuned adopts tuned's profile where the daemon runs one. The resource's
// own Read asks tuned-adm; a node where it cannot (tuned not installed) is
// listed, not an error.
func (a *nodeAdoption) tuned(ctx context.Context, nodeName string) error {
	st, err := a.r.read(ctx, "pve_node_tuned_profile", nodeName)
	switch {
	case err != nil:
		a.skip(nodeName, "tuned", fmt.Sprintf("not read: %v", err))
		return nil
	case st == nil:
		return nil
	case st.String("profile") == "":
		a.skip(nodeName, "tuned", "the daemon runs no profile: pve_node_tuned_profile would start one (a change)")
		return nil
	}
	return a.r.addState(ctx, Group{File: nodeTF, Type: "pve_node_tuned_profile", Name: "lab",
		Comment: "tuned's profile of each node."}, nodeName, nodeName, st)
}

// rings adopts NIC ring sizes kept across reboots by the unit
// pve_node_nic_ring installs; rings set by hand and not kept are listed:
// adopting them would install that unit, a change.
func (a *nodeAdoption) rings(ctx context.Context, nodeName string) error {
	nl, err := a.r.api.Network(ctx, nodeName)
	if err != nil {
		return fmt.Errorf("list the interfaces of %s (GET /nodes/%s/network): %w", nodeName, nodeName, err)
	}
	var nics []string
	for _, in := range nl.Interfaces {
		if in.Type == "eth" && in.Exists {
			nics = append(nics, in.Iface)
		}
	}
	sort.Strings(nics)
	for _, nic := range nics {
		if err := a.ring(ctx, nodeName, nic); err != nil {
			return err
		}
	}
	return nil
}

func (a *nodeAdoption) ring(ctx context.Context, nodeName, nic string) error {
	unit := "pve-nic-ring-" + nic + ".service"
	info, err := a.r.sshRead(ctx, nodeName, "ethtool", "-i", nic)
	if err != nil {
		return nil //nolint:nilerr // no driver information: not a NIC with rings to compare
	}
	driver := ""
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "driver: "); ok {
			driver = strings.TrimSpace(v)
		}
	}
	out, err := a.r.sshRead(ctx, nodeName, "ethtool", "-g", nic)
	if err != nil {
		return nil //nolint:nilerr // the driver has no ring parameters
	}
	rx, tx, ok := currentRings(string(out))
	if !ok {
		return nil
	}
	// Persisted by the resource's unit: adopt it when its Read finds the
	// unit running exactly the current sizes.
	if a.ringUnits[nodeName+"/"+unit] {
		id := nodeName + "/" + nic
		st, err := a.r.read(ctx, "pve_node_nic_ring", id)
		if err != nil {
			return err
		}
		want := fmt.Sprintf("ethtool -G %s rx %d tx %d", nic, rx, tx)
		if st != nil && st.String("boot_command") == want {
			return a.r.addState(ctx, Group{File: nodeTF, Type: "pve_node_nic_ring", Name: "lab", Local: "nic_rings",
				Comment: "NIC ring sizes, set again at every boot by pve-nic-ring-<iface>.service."}, id, id, st)
		}
		a.skip(nodeName, fmt.Sprintf("NIC %s rings rx %d tx %d", nic, rx, tx),
			fmt.Sprintf("%s exists but does not set these sizes at boot (it was changed, disabled or sets other sizes): pve_node_nic_ring would rewrite it (a change)", unit))
		return nil
	}
	def, known := driverRings[driver]
	if !known || (def[0] == rx && def[1] == tx) {
		return nil
	}
	a.skip(nodeName, fmt.Sprintf("NIC %s rings rx %d tx %d", nic, rx, tx),
		fmt.Sprintf("set by hand (the %s driver starts with rx %d tx %d) and not kept across reboots: pve_node_nic_ring would install %s to make them survive a reboot (a change), so it is not adopted",
			driver, def[0], def[1], unit))
	return nil
}

// currentRings reads the current RX and TX of `ethtool -g`.
func currentRings(out string) (rx, tx int, ok bool) {
	cur, found := false, 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Current hardware settings:"):
			cur = true
			continue
		case strings.HasPrefix(line, "Pre-set maximums:"):
			cur = false
			continue
		}
		k, v, has := strings.Cut(line, ":")
		if !cur || !has {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		switch k {
		case "RX":
			rx, found = n, found+1
		case "TX":
			tx, found = n, found+1
		}
	}
	return rx, tx, found == 2
}
