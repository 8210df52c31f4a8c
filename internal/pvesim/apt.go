package pvesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// APT repositories (GET/PUT/POST /nodes/{node}/apt/repositories) after
// pve-manager PVE::API2::APT, which hands the work to proxmox-apt through
// Proxmox::RS::APT::Repositories: files parsed from /etc/apt/sources.list
// and /etc/apt/sources.list.d, a per-file SHA-256 digest (as an array of
// bytes) and a common digest (hex) over the files sorted by path, origin
// infos, and the standard repositories of the node's Debian release with a
// status of 1 (configured and enabled), 0 (configured, disabled) or none.
// Writers check the common digest when one is given, and their errors are
// plain dies (500). PVE's API cannot remove an entry, only add a standard
// one or enable/disable an existing one.

type aptSources struct {
	Files []*aptFile `json:"files"`
}

type aptFile struct {
	Path  string     `json:"path"`
	Repos []*aptRepo `json:"repos"`
}

type aptRepo struct {
	Types      []string    `json:"types"`
	URIs       []string    `json:"uris"`
	Suites     []string    `json:"suites"`
	Components []string    `json:"components"`
	Options    []aptOption `json:"options,omitempty"`
	Comment    string      `json:"comment,omitempty"`
	Enabled    bool        `json:"enabled"`
}

type aptOption struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

const proxmoxKeyring = "/usr/share/keyrings/proxmox-archive-keyring.gpg"

func (f *aptFile) fileType() string {
	if strings.HasSuffix(f.Path, ".sources") {
		return "sources"
	}
	return "list"
}

// aptSuite is the node's Debian codename.
func (r pveRelease) aptSuite() string {
	if r.atLeast9() {
		return "trixie"
	}
	return "bookworm"
}

// freshAPT is what a freshly installed node has: Debian's repositories and
// the enterprise repositories of PVE and Ceph (Squid), enabled.
func freshAPT(rel pveRelease) *aptSources {
	deb := func(uri, suite string, comps ...string) *aptRepo {
		return &aptRepo{Types: []string{"deb"}, URIs: []string{uri}, Suites: []string{suite}, Components: comps, Enabled: true}
	}
	if !rel.atLeast9() {
		security := deb("http://security.debian.org", "bookworm-security", "main", "contrib")
		security.Comment = " security updates"
		return &aptSources{Files: []*aptFile{
			{Path: "/etc/apt/sources.list", Repos: []*aptRepo{
				deb("http://ftp.debian.org/debian", "bookworm", "main", "contrib"),
				deb("http://ftp.debian.org/debian", "bookworm-updates", "main", "contrib"),
				security,
			}},
			{Path: "/etc/apt/sources.list.d/ceph.list", Repos: []*aptRepo{
				deb("https://enterprise.proxmox.com/debian/ceph-squid", "bookworm", "enterprise"),
			}},
			{Path: "/etc/apt/sources.list.d/pve-enterprise.list", Repos: []*aptRepo{
				deb("https://enterprise.proxmox.com/debian/pve", "bookworm", "pve-enterprise"),
			}},
		}}
	}
	signed := func(r *aptRepo, keyring string) *aptRepo {
		r.Options = []aptOption{{Key: "Signed-By", Values: []string{keyring}}}
		return r
	}
	debian := signed(deb("http://deb.debian.org/debian/", "trixie", "main", "contrib", "non-free-firmware"), "/usr/share/keyrings/debian-archive-keyring.gpg")
	debian.Suites = []string{"trixie", "trixie-updates"}
	return &aptSources{Files: []*aptFile{
		{Path: "/etc/apt/sources.list.d/ceph.sources", Repos: []*aptRepo{
			signed(deb("https://enterprise.proxmox.com/debian/ceph-squid", "trixie", "enterprise"), proxmoxKeyring),
		}},
		{Path: "/etc/apt/sources.list.d/debian.sources", Repos: []*aptRepo{
			debian,
			signed(deb("http://security.debian.org/debian-security/", "trixie-security", "main", "contrib", "non-free-firmware"), "/usr/share/keyrings/debian-archive-keyring.gpg"),
		}},
		{Path: "/etc/apt/sources.list.d/pve-enterprise.sources", Repos: []*aptRepo{
			signed(deb("https://enterprise.proxmox.com/debian/pve", "trixie", "pve-enterprise"), proxmoxKeyring),
		}},
	}}
}

func aptOf(c *call) *aptSources {
	n := c.node()
	if n.APT == nil {
		n.APT = freshAPT(c.s.rel)
	}
	return n.APT
}

// render writes the file as proxmox-apt does (one-line or deb822 format);
// the digest is taken over it.
func (f *aptFile) render() string {
	var b strings.Builder
	for i, r := range f.Repos {
		for _, line := range strings.Split(r.Comment, "\n") {
			if r.Comment != "" {
				fmt.Fprintf(&b, "#%s\n", line)
			}
		}
		if f.fileType() == "sources" {
			fmt.Fprintf(&b, "Types: %s\nURIs: %s\nSuites: %s\n", strings.Join(r.Types, " "), strings.Join(r.URIs, " "), strings.Join(r.Suites, " "))
			if len(r.Components) > 0 {
				fmt.Fprintf(&b, "Components: %s\n", strings.Join(r.Components, " "))
			}
			for _, o := range r.Options {
				fmt.Fprintf(&b, "%s: %s\n", o.Key, strings.Join(o.Values, " "))
			}
			if i < len(f.Repos)-1 {
				b.WriteString("\n")
			}
			continue
		}
		if !r.Enabled {
			b.WriteString("# ")
		}
		b.WriteString(r.Types[0] + " ")
		if len(r.Options) > 0 {
			b.WriteString("[ ")
			for _, o := range r.Options {
				fmt.Fprintf(&b, "%s=%s ", o.Key, strings.Join(o.Values, ","))
			}
			b.WriteString("] ")
		}
		fmt.Fprintf(&b, "%s %s %s\n", r.URIs[0], r.Suites[0], strings.Join(r.Components, " "))
	}
	return b.String()
}

func (f *aptFile) digest() [32]byte { return sha256.Sum256([]byte(f.render())) }

// commonDigest is proxmox-apt's common_digest: SHA-256 over the file
// digests in path order.
func (a *aptSources) commonDigest() string {
	files := append([]*aptFile(nil), a.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var raw []byte
	for _, f := range files {
		d := f.digest()
		raw = append(raw, d[:]...)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// setEnabled is proxmox-apt's set_enabled: deb822 stanzas carry the flag
// as an Enabled option, one-line entries as a leading "# ".
func (r *aptRepo) setEnabled(enabled bool, fileType string) {
	r.Enabled = enabled
	if fileType != "sources" {
		return
	}
	v := "false"
	if enabled {
		v = "true"
	}
	for i := range r.Options {
		if r.Options[i].Key == "Enabled" {
			r.Options[i].Values = []string{v}
			return
		}
	}
	r.Options = append(r.Options, aptOption{Key: "Enabled", Values: []string{v}})
}

// aptHandle is one standard repository of a release.
type aptHandle struct {
	handle, name, description string
	uris                      []string // the first is the one written
	component                 string
	altComponent              string // Quincy's old "main"
	path                      string // where PVE adds it
}

func cephHandles(rel pveRelease, release, title string) []aptHandle {
	path := "/etc/apt/sources.list.d/ceph.list"
	if rel.atLeast9() {
		path = "/etc/apt/sources.list.d/ceph.sources"
	}
	ent := "https://enterprise.proxmox.com/debian/ceph-" + release
	dl := "http://download.proxmox.com/debian/ceph-" + release
	noSub := "This repository holds the Proxmox Ceph " + title + " packages intended for non-production use."
	alt := ""
	if release == "quincy" {
		noSub += " The deprecated 'main' repository is an alias for this in Proxmox VE 8."
		alt = "main"
	}
	return []aptHandle{
		{handle: "ceph-" + release + "-enterprise", name: "Ceph " + title + " Enterprise",
			description: "This repository holds the production-ready Proxmox Ceph " + title + " packages.",
			uris:        []string{ent}, component: "enterprise", path: path},
		{handle: "ceph-" + release + "-no-subscription", name: "Ceph " + title + " No-Subscription",
			description: noSub, uris: []string{dl}, component: "no-subscription", altComponent: alt, path: path},
		{handle: "ceph-" + release + "-test", name: "Ceph " + title + " Test",
			description: "This repository contains the Ceph " + title + " packages before they are moved to the main repository.",
			uris:        []string{dl}, component: "test", path: path},
	}
}

// aptHandles lists the standard repositories proxmox-apt offers on the
// release: PVE 9 (trixie) only Ceph Squid, PVE 8 (bookworm) Quincy, Reef
// and Squid.
func aptHandles(rel pveRelease) []aptHandle {
	entPath, mainPath, testComp := "/etc/apt/sources.list.d/pve-enterprise.list", "/etc/apt/sources.list", "pvetest"
	if rel.atLeast9() {
		entPath, mainPath, testComp = "/etc/apt/sources.list.d/pve-enterprise.sources", "/etc/apt/sources.list.d/proxmox.sources", "pve-test"
	}
	ent := []string{"https://enterprise.proxmox.com/debian/pve", "https://enterprise.proxmox.com/debian"}
	dl := []string{"http://download.proxmox.com/debian/pve", "http://download.proxmox.com/debian"}
	hs := []aptHandle{
		{handle: "enterprise", name: "Enterprise", uris: ent, component: "pve-enterprise", path: entPath,
			description: "This is the default, stable, and recommended repository, available for all Proxmox subscription users."},
		{handle: "no-subscription", name: "No-Subscription", uris: dl, component: "pve-no-subscription", path: mainPath,
			description: "This is the recommended repository for testing and non-production use. Its packages are not as heavily tested and validated as the production ready enterprise repository. You don't need a subscription key to access this repository."},
		{handle: "test", name: "Test", uris: dl, component: testComp, path: mainPath,
			description: "This repository contains the latest packages and is primarily used for test labs and by developers to test new features."},
	}
	if !rel.atLeast9() {
		hs = append(hs, cephHandles(rel, "quincy", "Quincy")...)
		hs = append(hs, cephHandles(rel, "reef", "Reef")...)
	}
	return append(hs, cephHandles(rel, "squid", "Squid")...)
}

// references is proxmox-apt's is_referenced_repository.
func (h aptHandle) references(r *aptRepo, suite string) bool {
	uri := false
	for _, u := range r.URIs {
		u = strings.TrimRight(u, "/")
		for _, hu := range h.uris {
			uri = uri || u == hu
		}
	}
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == v && v != "" {
				return true
			}
		}
		return false
	}
	comp := has(r.Components, h.component) || has(r.Components, h.altComponent)
	return has(r.Types, "deb") && uri && has(r.Suites, suite) && comp
}

func registerAPT(t *routeTable) {
	handles := aptHandles(t.rel)
	suite := t.rel.aptSuite()
	t.add("GET", "/nodes/{node}/apt/repositories", &method{params: schema{"node": nodeParam()}, handler: func(c *call) (any, *apiError) {
		return aptOf(c).view(handles, suite), nil
	}})
	digest := pStr().maxLen(80)
	t.add("PUT", "/nodes/{node}/apt/repositories", &method{params: schema{
		"node": nodeParam(), "handle": pStr().req(), "digest": digest,
	}, handler: func(c *call) (any, *apiError) {
		return addStandardRepo(c, handles, suite)
	}})
	t.add("POST", "/nodes/{node}/apt/repositories", &method{params: schema{
		"node": nodeParam(), "path": pStr().req(), "index": pInt(nil, nil).req(), "enabled": pBool(), "digest": digest,
	}, handler: changeRepo})
}

func (a *aptSources) view(handles []aptHandle, suite string) map[string]any {
	files := make([]map[string]any, 0, len(a.Files))
	infos := []map[string]any{}
	for _, f := range a.Files {
		repos := make([]map[string]any, 0, len(f.Repos))
		for i, r := range f.Repos {
			m := map[string]any{
				"Types": r.Types, "URIs": r.URIs, "Suites": r.Suites, "Components": aptList(r.Components),
				"FileType": f.fileType(), "Enabled": aptBool(r.Enabled),
			}
			if len(r.Options) > 0 {
				opts := make([]map[string]any, 0, len(r.Options))
				for _, o := range r.Options {
					opts = append(opts, map[string]any{"Key": o.Key, "Values": o.Values})
				}
				m["Options"] = opts
			}
			if r.Comment != "" {
				m["Comment"] = r.Comment
			}
			repos = append(repos, m)
			if origin := aptOrigin(r); origin != "" {
				infos = append(infos, map[string]any{"path": f.Path, "index": i, "kind": "origin", "message": origin})
			}
		}
		d := f.digest()
		digest := make([]int, len(d))
		for i, b := range d {
			digest[i] = int(b)
		}
		files = append(files, map[string]any{"path": f.Path, "file-type": f.fileType(), "repositories": repos, "digest": digest})
	}
	std := make([]map[string]any, 0, len(handles))
	for _, h := range handles {
		m := map[string]any{"handle": h.handle, "name": h.name, "description": h.description}
		var status *bool
		for _, f := range a.Files {
			for _, r := range f.Repos {
				if (status == nil || !*status) && h.references(r, suite) {
					e := r.Enabled
					status = &e
				}
			}
		}
		if status != nil {
			m["status"] = aptBool(*status)
		}
		std = append(std, m)
	}
	return map[string]any{"files": files, "errors": []any{}, "digest": a.commonDigest(), "infos": infos, "standard-repos": std}
}

func aptList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func aptBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

// aptOrigin is proxmox-apt's origin guess from the URI's host.
func aptOrigin(r *aptRepo) string {
	for _, u := range r.URIs {
		rest, ok := strings.CutPrefix(u, "http://")
		if !ok {
			rest, ok = strings.CutPrefix(u, "https://")
		}
		if !ok {
			continue
		}
		host, _, _ := strings.Cut(rest, "/")
		if _, h, found := strings.Cut(host, "@"); found {
			host = h
		}
		host, _, _ = strings.Cut(host, ":")
		switch {
		case host == "proxmox.com" || strings.HasSuffix(host, ".proxmox.com"):
			return "Proxmox"
		case host == "debian.org" || strings.HasSuffix(host, ".debian.org"):
			return "Debian"
		}
	}
	return ""
}

// checkDigest is ConfigDigest::detect_modification.
func (a *aptSources) checkDigest(c *call) *apiError {
	d, ok := c.params["digest"]
	if !ok {
		return nil
	}
	if !strings.EqualFold(d, a.commonDigest()) {
		return die("detected modified configuration - file changed by other user? Try again.")
	}
	return nil
}

// addStandardRepo is add_repository_handle: enable the standard repository
// where it is already configured, else append it to the file PVE keeps it
// in (creating the file).
func addStandardRepo(c *call, handles []aptHandle, suite string) (any, *apiError) {
	var h *aptHandle
	names := make([]string, 0, len(handles))
	for i := range handles {
		names = append(names, "`"+handles[i].handle+"`")
		if handles[i].handle == c.params["handle"] {
			h = &handles[i]
		}
	}
	if h == nil {
		// The handle does not deserialize into proxmox-apt's handle enum.
		return nil, die("unknown variant `%s`, expected one of %s", c.params["handle"], strings.Join(names, ", "))
	}
	a := aptOf(c)
	if err := a.checkDigest(c); err != nil {
		return nil, err
	}
	for _, f := range a.Files {
		for _, r := range f.Repos {
			if h.references(r, suite) {
				if !r.Enabled {
					r.setEnabled(true, f.fileType())
					c.s.saveLocked()
				}
				return nil, nil
			}
		}
	}
	var file *aptFile
	for _, f := range a.Files {
		if f.Path == h.path {
			file = f
		}
	}
	if file == nil {
		file = &aptFile{Path: h.path}
		a.Files = append(a.Files, file)
		sort.SliceStable(a.Files, func(i, j int) bool { return aptFileOrder(a.Files[i].Path) < aptFileOrder(a.Files[j].Path) })
	}
	r := &aptRepo{Types: []string{"deb"}, URIs: []string{h.uris[0]}, Suites: []string{suite}, Components: []string{h.component}, Enabled: true}
	if file.fileType() == "sources" {
		r.Options = []aptOption{{Key: "Signed-By", Values: []string{proxmoxKeyring}}}
	}
	file.Repos = append(file.Repos, r)
	c.s.saveLocked()
	return nil, nil
}

// aptFileOrder lists /etc/apt/sources.list before sources.list.d, whose
// files come in name order.
func aptFileOrder(p string) string {
	if p == "/etc/apt/sources.list" {
		return ""
	}
	return p
}

// changeRepo is change_repository: only the enabled flag can change.
func changeRepo(c *call) (any, *apiError) {
	a := aptOf(c)
	if err := a.checkDigest(c); err != nil {
		return nil, err
	}
	path := c.params["path"]
	for _, f := range a.Files {
		if f.Path != path {
			continue
		}
		idx := c.params["index"]
		var i int
		if _, err := fmt.Sscan(idx, &i); err != nil || i < 0 || i >= len(f.Repos) || strings.HasPrefix(idx, "-") {
			return nil, die("invalid index - %s", strings.TrimPrefix(idx, "+"))
		}
		if v, ok := c.params["enabled"]; ok {
			f.Repos[i].setEnabled(v == "1", f.fileType())
		}
		c.s.saveLocked()
		return nil, nil
	}
	return nil, die("invalid path - %s", path)
}
