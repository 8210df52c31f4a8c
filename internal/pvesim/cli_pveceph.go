package pvesim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// --- pveceph ---

const pvecephInstallUsage = "pveceph install  [OPTIONS]\n"

// pvecephExit is the exit status of a pveceph that died: perl exits with
// errno or 255.
const pvecephExit = 255

func sshPveceph(x *sshExec) int {
	if len(x.argv) < 2 {
		x.errf("ERROR: no command specified\nUSAGE: pveceph <COMMAND> [ARGS] [OPTIONS]\n")
		return pvecephExit
	}
	if x.argv[1] != "install" {
		x.errf("pveceph: pvesim simulates only the install command, not %q\n", x.argv[1])
		return pvecephExit
	}
	// setup_default_cli_env comes before the parameters are parsed.
	if !x.root {
		x.errf("please run as root\n")
		return pvecephExit
	}
	rel := x.s.rel
	var names []string
	for _, cr := range rel.cephReleases() {
		names = append(names, cr.codename)
	}
	repos := []string{"enterprise", "no-subscription", "test"}
	if rel.atLeast9() {
		repos = append(repos, "manual")
	}
	opts := map[string]string{}
	args := x.argv[2:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			x.errf("400 too many arguments\n%s", pvecephInstallUsage)
			return pvecephExit
		}
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch key {
		case "version", "repository", "allow-experimental":
		default:
			x.errf("Unknown option: %s\n400 unable to parse option\n%s", key, pvecephInstallUsage)
			return pvecephExit
		}
		if !hasVal {
			if i+1 >= len(args) {
				x.errf("Option %s requires an argument\n400 unable to parse option\n%s", key, pvecephInstallUsage)
				return pvecephExit
			}
			i++
			val = args[i]
		}
		opts[key] = val
	}
	errs := map[string]string{}
	if v, ok := opts["version"]; ok && !slices.Contains(names, v) {
		errs["version"] = fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", v, strings.Join(names, ", "))
	}
	if v, ok := opts["repository"]; ok && !slices.Contains(repos, v) {
		errs["repository"] = fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", v, strings.Join(repos, ", "))
	}
	if v, ok := opts["allow-experimental"]; ok && !slices.Contains([]string{"0", "1", "yes", "no", "true", "false", "on", "off"}, strings.ToLower(v)) {
		errs["allow-experimental"] = "type check ('boolean') failed - got '" + v + "'"
	}
	if len(errs) > 0 {
		x.errf("400 Parameter verification failed.\n")
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x.errf("%s: %s\n", k, errs[k])
		}
		x.errf("%s", pvecephInstallUsage)
		return pvecephExit
	}
	codename := opts["version"]
	if codename == "" {
		codename = rel.cephDefault()
	}
	cr, _ := rel.cephRelease(codename)
	repo := opts["repository"]
	if repo == "" {
		repo = "enterprise"
	}
	// The simulated nodes have no subscription.
	switch repo {
	case "enterprise":
		x.errf("\nWARN: Enterprise repository selected, but no active subscription!\n\n")
	case "no-subscription":
		x.errf("\nHINT: The no-subscription repository is not the best choice for production setups.\n" +
			"Proxmox recommends using the enterprise repository with a valid subscription.\n")
	case "manual":
		x.errf("\nHINT: The manual repository option expects that the Ceph repository is already correctly configured. " +
			"For example, when used in combination with Proxmox Offline Mirror.\n")
	default:
		x.errf("\nWARN: The test repository should only be used for test setups or after consulting the official Proxmox support!\n\n")
	}
	ns := x.s.st.Nodes[x.node]
	if repo != "manual" {
		x.s.setCephRepo(ns, codename, repo)
		x.changed = true
	}
	x.outf("update available package list\n")
	suite := rel.aptSuite()
	// What apt finds: the configured Ceph repository's packages, unless it
	// is the enterprise one, which answers 401 without a subscription.
	source := x.s.cephRepoSource(ns)
	if source.enterprise {
		x.errf("E: Failed to fetch https://enterprise.proxmox.com/debian/ceph-%s/dists/%s/InRelease  401  Unauthorized [IP: 212.224.123.70 443]\n", source.codename, suite)
		x.errf("E: The repository 'https://enterprise.proxmox.com/debian/ceph-%s %s InRelease' is not signed.\n", source.codename, suite)
	}
	if repo == "manual" {
		avail := rel.cephClientPkg()
		if src, ok := rel.cephRelease(source.codename); ok && !source.enterprise {
			avail = src.pkg
		}
		if !strings.HasPrefix(avail, cr.release) {
			x.errf("Selected Ceph version '%s' does not match the available version in the repository '%s' \n", cr.release, avail)
			return pvecephExit
		}
		x.outf("\nUsing the following manual repository:\nSite:\t\t %s\nComponent:\t %s\n\n", source.site(), source.component)
	}
	x.outf("start installation\n")
	pkgs := x.s.cephPkgs(x.node)
	target, reachable := rel.cephRelease(source.codename)
	if !reachable || source.enterprise {
		if !pkgs.Installed {
			x.aptBrokenCeph()
			x.errf("apt failed during ceph installation (25600)\n")
			return 100
		}
		target = cephRelease{codename: pkgs.Codename, pkg: pkgs.Version}
	}
	x.aptInstallCeph(pkgs, target, source)
	x.outf("\ninstalled Ceph %s %s successfully!\n", cr.release, titleCase(codename))
	x.outf("\nreloading API to load new Ceph RADOS library...\n")
	x.changed = true
	return 0
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// aptBrokenCeph prints apt-get install failing when only Debian's Ceph is
// available: its ceph depends on daemons of its own version, which would
// need the newer Proxmox ceph-common downgraded.
func (x *sshExec) aptBrokenCeph() {
	deb := x.s.rel.debianCeph()
	x.outf("Reading package lists...\nBuilding dependency tree...\nReading state information...\n")
	x.outf("Some packages could not be installed. This may mean that you have\nrequested an impossible situation or if you are using the unstable\n" +
		"distribution that some required packages have not yet been created\nor been moved out of Incoming.\n" +
		"The following information may help to resolve the situation:\n\nThe following packages have unmet dependencies:\n")
	x.outf(" ceph : Depends: ceph-mgr (= %s) but it is not going to be installed\n", deb)
	x.outf("        Depends: ceph-mon (= %s) but it is not going to be installed\n", deb)
	x.outf("        Depends: ceph-osd (= %s) but it is not going to be installed\n", deb)
	x.outf(" ceph-mds : Depends: ceph-base (= %s) but it is not going to be installed\n", deb)
	x.errf("E: Unable to correct problems, you have held broken packages.\n")
}

// aptInstallCeph is `apt-get install -- ceph ceph-common ceph-fuse
// ceph-mds ceph-volume gdisk nvme-cli` against target's packages: new
// packages, upgrades, or nothing when the installed ones are as new or
// newer (apt never downgrades on its own).
func (x *sshExec) aptInstallCeph(p *cephPackages, target cephRelease, src cephSource) {
	x.outf("Reading package lists...\nBuilding dependency tree...\nReading state information...\n")
	newer := func(installed string) bool { return installed == "" || debVersionLess(installed, target.pkg) }
	var fresh, upgrade []string
	current := map[string]string{}
	for _, n := range cephClientPkgs {
		current[n] = p.Client
	}
	for _, n := range cephServerPkgs {
		if p.Installed {
			current[n] = p.Version
		}
	}
	all := append(append([]string(nil), cephServerPkgs...), cephClientPkgs...)
	sort.Strings(all)
	for _, n := range all {
		switch {
		case current[n] == "":
			fresh = append(fresh, n)
		case newer(current[n]):
			upgrade = append(upgrade, n)
		}
	}
	if !p.Extras {
		fresh = append(fresh, "gdisk", "nvme-cli")
	}
	sort.Strings(fresh)
	for _, n := range []string{"ceph", "ceph-common", "ceph-fuse", "ceph-mds", "ceph-volume", "gdisk", "nvme-cli"} {
		v := current[n]
		if n == "gdisk" || n == "nvme-cli" {
			if !p.Extras {
				continue
			}
			v = extraPkgVersion(x.s.rel, n)
		}
		if v != "" && !slices.Contains(upgrade, n) {
			x.outf("%s is already the newest version (%s).\n", n, v)
		}
	}
	if len(upgrade) > 0 {
		x.outf("The following packages will be upgraded:\n  %s\n", strings.Join(upgrade, " "))
	}
	if len(fresh) > 0 {
		x.outf("The following NEW packages will be installed:\n  %s\n", strings.Join(fresh, " "))
	}
	x.outf("%d upgraded, %d newly installed, 0 to remove and 0 not upgraded.\n", len(upgrade), len(fresh))
	if len(upgrade)+len(fresh) == 0 {
		return
	}
	suite := x.s.rel.aptSuite()
	n := 0
	for _, name := range append(append([]string(nil), upgrade...), fresh...) {
		n++
		v := target.pkg
		uri := src.uri
		comp := src.component
		if name == "gdisk" || name == "nvme-cli" {
			v, uri, comp = extraPkgVersion(x.s.rel, name), "http://deb.debian.org/debian", "main"
		}
		x.outf("Get:%d %s %s/%s amd64 %s amd64 %s [%s kB]\n", n, uri, suite, comp, name, v, fmtThousands(int(hash64(name, v)%9000)+120))
	}
	for _, name := range upgrade {
		x.outf("Preparing to unpack .../%s_%s_amd64.deb ...\nUnpacking %s (%s) over (%s) ...\n", name, target.pkg, name, target.pkg, current[name])
	}
	for _, name := range fresh {
		v := target.pkg
		if name == "gdisk" || name == "nvme-cli" {
			v = extraPkgVersion(x.s.rel, name)
		}
		x.outf("Selecting previously unselected package %s.\nPreparing to unpack .../%s_%s_amd64.deb ...\nUnpacking %s (%s) ...\n", name, name, v, name, v)
	}
	for _, name := range append(append([]string(nil), upgrade...), fresh...) {
		v := target.pkg
		if name == "gdisk" || name == "nvme-cli" {
			v = extraPkgVersion(x.s.rel, name)
		}
		x.outf("Setting up %s (%s) ...\n", name, v)
	}
	x.outf("Processing triggers for man-db (2.13.1-1) ...\nProcessing triggers for libc-bin (2.41-12) ...\n")
	if newer(p.Client) {
		p.Client = target.pkg
	}
	if !p.Installed || newer(p.Version) {
		p.Installed, p.Codename, p.Version = true, target.codename, target.pkg
	}
	p.Extras = true
}

func extraPkgVersion(rel pveRelease, name string) string {
	switch {
	case name == "gdisk" && rel.atLeast9():
		return "1.0.10-2"
	case name == "gdisk":
		return "1.0.9-2.1"
	case rel.atLeast9():
		return "2.13-2"
	}
	return "2.4+really2.3-3"
}

func fmtThousands(n int) string {
	s := fmt.Sprint(n)
	if len(s) <= 3 {
		return s
	}
	return s[:len(s)-3] + "," + s[len(s)-3:]
}
