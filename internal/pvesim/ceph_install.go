package pvesim

import (
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
		"GET /nodes/{node}/ceph/cfg", "GET /nodes/{node}/ceph/fs",
		// Checks after the versions, which it answers without Ceph.
		"GET /cluster/ceph/metadata":
		return ""
	case "POST /nodes/{node}/ceph/mgr/{id}":
		return "/usr/bin/ceph-mgr"
	}
	return "/usr/bin/ceph-mon"
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
