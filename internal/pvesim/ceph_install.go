package pvesim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Ceph packages per node: what `pveceph install` (pve-manager
// PVE/CLI/pveceph.pm) installs, what `dpkg-query` reports, and the API's
// refusal on a node without them.
//
// Every PVE node has the Ceph client (pve-storage depends on ceph-common
// and ceph-fuse), so /usr/bin/ceph exists everywhere and `pveceph init`
// works without an install (it checks only for Ceph >= 14 there). The
// daemons come with `pveceph install`: PVE::Ceph::Tools::check_ceph_inited
// first checks that /usr/bin/ceph-mon is executable, so on a node without
// them nearly every Ceph call dies with "binary not installed:
// /usr/bin/ceph-mon" (manager creation checks /usr/bin/ceph-mgr first),
// before the "not initialized" check. The check runs on the node that
// handles the call: {node} for /nodes/{node}/ceph/..., the node the
// client talks to for /cluster/ceph/....
//
// Releases (PVE/Ceph/Releases.pm): pve-manager 9.1.2 offers only Squid
// (Tentacle arrived as a tech preview in 9.1.5 and became the default in
// later 9.1.x); 8.4.1 offers Quincy, Reef and Squid with Quincy as the
// CLI's default. Package versions: 19.2.3-pve2 on PVE 9.1 (pveversion -v
// of a 9.1.2 node); the PVE 8 ones are the last builds of each release
// as far as known (17.2.8-pve2, 18.2.7-pve1, 19.2.3-pve1).

// cephRelease is one Ceph release pveceph can install.
type cephRelease struct {
	codename, release string // squid, 19.2
	upstream, sha     string // 19.2.3 and its git commit, as ceph --version prints
	pkg               string // the Proxmox package version on this PVE release
}

var cephBuilds = map[string]cephRelease{
	"quincy": {codename: "quincy", release: "17.2", upstream: "17.2.8", sha: "f817ceb7f187defb1d021d6328fa833eb8e943b3"},
	"reef":   {codename: "reef", release: "18.2", upstream: "18.2.7", sha: "6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad"},
	"squid":  {codename: "squid", release: "19.2", upstream: "19.2.3", sha: "c92aebb279828e9c3c1f5d24613efca272649e62"},
}

// cephReleases lists the releases `pveceph install --version` accepts on
// this PVE release, sorted as its enum is.
func (r pveRelease) cephReleases() []cephRelease {
	pkgs := map[string]string{"squid": "19.2.3-pve2"}
	if !r.atLeast9() {
		pkgs = map[string]string{"quincy": "17.2.8-pve2", "reef": "18.2.7-pve1", "squid": "19.2.3-pve1"}
	}
	var out []cephRelease
	for name, pkg := range pkgs {
		cr := cephBuilds[name]
		cr.pkg = pkg
		out = append(out, cr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].codename < out[j].codename })
	return out
}

func (r pveRelease) cephRelease(codename string) (cephRelease, bool) {
	for _, cr := range r.cephReleases() {
		if cr.codename == codename {
			return cr, true
		}
	}
	return cephRelease{}, false
}

// cephDefault is pveceph install's default --version.
func (r pveRelease) cephDefault() string {
	if r.atLeast9() {
		return "squid"
	}
	return "quincy"
}

// cephClientPkg is the ceph-common version of a node without pveceph
// install (from the PVE repository, pulled in by pve-storage).
func (r pveRelease) cephClientPkg() string {
	if r.atLeast9() {
		return "19.2.3-pve2"
	}
	return "17.2.8-pve2"
}

// debianCeph is the Ceph version of the Debian release itself, which apt
// falls back to when the Proxmox Ceph repository cannot be read.
func (r pveRelease) debianCeph() string {
	if r.atLeast9() {
		return "18.2.7+ds-1"
	}
	return "16.2.15+ds-0+deb12u1"
}

// cephPackages is what Ceph a node has installed.
type cephPackages struct {
	// Installed: the daemons (ceph, ceph-mon, ceph-mgr, ceph-osd,
	// ceph-mds, ceph-volume) of Codename at Version.
	Installed bool   `json:"installed"`
	Codename  string `json:"codename,omitempty"`
	Version   string `json:"version,omitempty"`
	// Client is the version of ceph-common, ceph-fuse, librados2, librbd1.
	Client string `json:"client"`
	// Extras are gdisk and nvme-cli, which pveceph install adds.
	Extras bool `json:"extras,omitempty"`
}

// cephPkgs returns node's Ceph packages: unless Options.CephNotInstalled,
// a node starts with Squid installed, as the reference lab has it. Caller
// holds s.mu.
func (s *Sim) cephPkgs(node string) *cephPackages {
	ns := s.st.Nodes[node]
	if ns.CephPkgs == nil {
		p := &cephPackages{Client: s.rel.cephClientPkg()}
		if !s.opts.CephNotInstalled {
			cr, _ := s.rel.cephRelease("squid")
			p.Installed, p.Codename, p.Version, p.Client, p.Extras = true, cr.codename, cr.pkg, cr.pkg, true
		}
		ns.CephPkgs = p
	}
	return ns.CephPkgs
}

// cephBinaryMissing is PVE::Ceph::Tools::check_ceph_installed for a
// daemon binary on node.
func (s *Sim) cephBinaryMissing(node, binary string) *apiError {
	if s.st.Nodes[node] == nil || s.cephPkgs(node).Installed {
		return nil
	}
	return die("binary not installed: %s", binary)
}

// gateCephInstalled makes the Ceph API calls check for the daemons as PVE
// does: after parameter checks, before the handler. It wraps the routes
// registered so far, so it runs after every Ceph registration.
func gateCephInstalled(t *routeTable) {
	for _, rt := range t.routes {
		if !strings.HasPrefix(rt.pattern, "/nodes/{node}/ceph/") && !strings.HasPrefix(rt.pattern, "/cluster/ceph/") {
			continue
		}
		for m, md := range rt.methods {
			bin := cephGateBinary(m, rt.pattern)
			if bin == "" {
				continue
			}
			inner := md.handler
			md.handler = func(c *call) (any, *apiError) {
				node := c.params["node"]
				if !strings.HasPrefix(rt.pattern, "/nodes/") || node == "" {
					node = c.listener
				}
				if err := c.s.cephBinaryMissing(node, bin); err != nil {
					return nil, err
				}
				return inner(c)
			}
		}
	}
}

// cephGateBinary is the binary a Ceph call checks for; "" for calls that
// check none (init needs only /usr/bin/ceph of ceph-common; the index
// listings check nothing).
func cephGateBinary(method, pattern string) string {
	switch method + " " + pattern {
	case "POST /nodes/{node}/ceph/init", "GET /nodes/{node}/ceph/osd/{osdid}", "GET /nodes/{node}/ceph/pool/{name}",
		"GET /nodes/{node}/ceph/cfg", "GET /nodes/{node}/ceph/fs":
		return ""
	case "POST /nodes/{node}/ceph/mgr/{id}":
		return "/usr/bin/ceph-mgr"
	}
	return "/usr/bin/ceph-mon"
}

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

// cephSource is the Ceph repository apt reads on a node.
type cephSource struct {
	codename, component, uri string
	enterprise               bool
}

func (c cephSource) site() string {
	u := strings.TrimPrefix(strings.TrimPrefix(c.uri, "https://"), "http://")
	site, _, _ := strings.Cut(u, "/")
	return site
}

// setCephRepo writes /etc/apt/sources.list.d/ceph.sources (PVE 9) or
// ceph.list (PVE 8) as pveceph install does: one entry, replacing the file.
func (s *Sim) setCephRepo(ns *nodeState, codename, repo string) {
	if ns.APT == nil {
		ns.APT = freshAPT(s.rel)
	}
	cdn := "http://download.proxmox.com"
	if repo == "enterprise" {
		cdn = "https://enterprise.proxmox.com"
	}
	r := &aptRepo{Types: []string{"deb"}, URIs: []string{cdn + "/debian/ceph-" + codename}, Suites: []string{s.rel.aptSuite()},
		Components: []string{repo}, Enabled: true}
	p := "/etc/apt/sources.list.d/ceph.list"
	if s.rel.atLeast9() {
		p = "/etc/apt/sources.list.d/ceph.sources"
		r.Options = []aptOption{{Key: "Signed-By", Values: []string{proxmoxKeyring}}}
	}
	for _, f := range ns.APT.Files {
		if f.Path == p {
			f.Repos = []*aptRepo{r}
			return
		}
	}
	ns.APT.Files = append(ns.APT.Files, &aptFile{Path: p, Repos: []*aptRepo{r}})
	sort.SliceStable(ns.APT.Files, func(i, j int) bool { return ns.APT.Files[i].Path < ns.APT.Files[j].Path })
}

// cephRepoSource finds the first enabled Proxmox Ceph repository of the
// node's suite.
func (s *Sim) cephRepoSource(ns *nodeState) cephSource {
	if ns.APT == nil {
		ns.APT = freshAPT(s.rel)
	}
	for _, f := range ns.APT.Files {
		for _, r := range f.Repos {
			if !r.Enabled || !slices.Contains(r.Suites, s.rel.aptSuite()) {
				continue
			}
			for _, u := range r.URIs {
				u = strings.TrimRight(u, "/")
				i := strings.Index(u, "/debian/ceph-")
				if i < 0 {
					continue
				}
				comp := ""
				if len(r.Components) > 0 {
					comp = r.Components[0]
				}
				return cephSource{codename: u[i+len("/debian/ceph-"):], component: comp, uri: u,
					enterprise: strings.HasPrefix(u, "https://enterprise.proxmox.com")}
			}
		}
	}
	return cephSource{}
}

// cephServerPkgs are the packages pveceph install brings beyond the client.
var cephServerPkgs = []string{"ceph", "ceph-base", "ceph-mds", "ceph-mgr", "ceph-mgr-modules-core", "ceph-mon", "ceph-osd", "ceph-volume",
	"libsqlite3-mod-ceph", "python3-ceph-argparse", "python3-ceph-common", "python3-cephfs", "python3-rados", "python3-rbd"}

// cephClientPkgs are on every node.
var cephClientPkgs = []string{"ceph-common", "ceph-fuse", "libcephfs2", "librados2", "libradosstriper1", "librbd1", "librgw2"}

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

// debVersionLess compares the Debian versions the simulator uses
// (upstream-revision with numeric parts), enough for Ceph packages.
func debVersionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

func versionParts(v string) []int {
	var out []int
	n, in := 0, false
	for _, r := range v {
		if r >= '0' && r <= '9' {
			n, in = n*10+int(r-'0'), true
			continue
		}
		if in {
			out = append(out, n)
		}
		n, in = 0, false
	}
	if in {
		out = append(out, n)
	}
	return out
}

// --- dpkg-query ---

// dpkgPackage is one package the node's dpkg database knows.
type dpkgPackage struct {
	name, version, arch string
	multiArch           bool
}

// dpkgPackages lists the packages of interest the node has installed.
func (x *sshExec) dpkgPackages() map[string]dpkgPackage {
	rel := x.s.rel
	p := x.s.cephPkgs(x.node)
	out := map[string]dpkgPackage{
		"pve-manager": {name: "pve-manager", version: rel.Version, arch: "all"},
		"proxmox-ve":  {name: "proxmox-ve", version: map[bool]string{true: "9.1.0", false: "8.4.0"}[rel.atLeast9()], arch: "all"},
	}
	for _, n := range cephClientPkgs {
		out[n] = dpkgPackage{name: n, version: p.Client, arch: "amd64", multiArch: strings.HasPrefix(n, "lib")}
	}
	if p.Installed {
		for _, n := range cephServerPkgs {
			arch := "amd64"
			if n == "ceph-volume" || n == "ceph-mgr-modules-core" || strings.HasPrefix(n, "python3-ceph-") {
				arch = "all"
			}
			out[n] = dpkgPackage{name: n, version: p.Version, arch: arch}
		}
	}
	if p.Extras {
		for _, n := range []string{"gdisk", "nvme-cli"} {
			out[n] = dpkgPackage{name: n, version: extraPkgVersion(rel, n), arch: "amd64"}
		}
	}
	if !x.s.benchState(x.node).FioMissing {
		v := "3.39-1"
		if !rel.atLeast9() {
			v = "3.33-3"
		}
		out["fio"] = dpkgPackage{name: "fio", version: v, arch: "amd64"}
	}
	return out
}

// sshDpkgQuery is dpkg-query -W [-f FORMAT] [PACKAGE...] (--show).
func sshDpkgQuery(x *sshExec) int {
	format := "${binary:Package}\t${Version}\n"
	show := false
	var names []string
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-W" || a == "--show":
			show = true
		case a == "-f" || a == "--showformat":
			if i+1 >= len(args) {
				x.errf("dpkg-query: error: --showformat needs a value\n\nUse --help for help about querying packages.\n")
				return 2
			}
			i++
			format = args[i]
		case strings.HasPrefix(a, "--showformat="):
			format = strings.TrimPrefix(a, "--showformat=")
		case strings.HasPrefix(a, "-f") && len(a) > 2:
			format = a[2:]
		case a == "--":
			names = append(names, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			x.errf("dpkg-query: error: unknown option %s\n\nUse --help for help about querying packages.\n", a)
			return 2
		default:
			names = append(names, a)
		}
	}
	if !show {
		x.errf("dpkg-query: pvesim simulates only -W/--show\n")
		return 2
	}
	pkgs := x.dpkgPackages()
	if len(names) == 0 {
		for n := range pkgs {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	code := 0
	for _, n := range names {
		p, ok := pkgs[strings.TrimSuffix(n, ":amd64")]
		if !ok {
			x.errf("dpkg-query: no packages found matching %s\n", n)
			code = 1
			continue
		}
		x.outf("%s", dpkgFormat(format, p))
	}
	return code
}

// dpkgFormat expands ${field} and the backslash escapes of a showformat.
func dpkgFormat(format string, p dpkgPackage) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '\\' && i+1 < len(format):
			i++
			switch format[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte('\\')
				b.WriteByte(format[i])
			}
		case c == '$' && i+1 < len(format) && format[i+1] == '{':
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				b.WriteString(format[i:])
				return b.String()
			}
			field := format[i+2 : i+end]
			if k, _, ok := strings.Cut(field, ";"); ok {
				field = k // ${Package;-20}: width ignored
			}
			b.WriteString(dpkgField(field, p))
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func dpkgField(field string, p dpkgPackage) string {
	switch strings.ToLower(field) {
	case "package":
		return p.name
	case "binary:package":
		if p.multiArch {
			return p.name + ":" + p.arch
		}
		return p.name
	case "version":
		return p.version
	case "architecture":
		return p.arch
	case "status":
		return "install ok installed"
	case "db:status-abbrev":
		return "ii "
	case "db:status-want":
		return "install"
	case "db:status-status":
		return "installed"
	case "db:status-eflag":
		return "ok"
	}
	return ""
}

// Test hooks.

// CephInstalled reports the Ceph release and package version installed
// on node by pveceph install; ok is false without the Ceph daemons.
func (s *Sim) CephInstalled(node string) (codename, version string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.cephPkgs(node)
	return p.Codename, p.Version, p.Installed
}

// SetCephInstalled installs the packages of a Ceph release on node, as an
// admin's apt would; "" removes them (apt purge of the daemons).
func (s *Sim) SetCephInstalled(node, codename string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.cephPkgs(node)
	if codename == "" {
		p.Installed, p.Codename, p.Version = false, "", ""
		s.saveLocked()
		return nil
	}
	cr, ok := s.rel.cephRelease(codename)
	if !ok {
		return fmt.Errorf("PVE %s offers no Ceph %q", s.rel.Release, codename)
	}
	p.Installed, p.Codename, p.Version, p.Extras = true, cr.codename, cr.pkg, true
	if debVersionLess(p.Client, cr.pkg) {
		p.Client = cr.pkg
	}
	s.saveLocked()
	return nil
}
