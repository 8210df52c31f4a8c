package apt

import (
	"regexp"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// PVE reports whether a standard repository is configured, but not which
// entry it is. To disable one, the provider finds its entries by the rule
// proxmox-apt uses (package type deb, a Proxmox URI and the handle's
// component), derived from the handle's name rather than a list of
// handles, so a Ceph release PVE adds later is found the same way.

var cephHandleRE = regexp.MustCompile(`^ceph-([a-z0-9]+)-(enterprise|no-subscription|test)$`)

// handleMatcher returns whether an entry belongs to handle, or false
// when the handle's naming is not understood.
func handleMatcher(handle string) (func(pve.APTRepository) bool, bool) {
	var uriSuffixes, components []string
	switch handle {
	case "enterprise":
		uriSuffixes, components = []string{"/debian/pve", "/debian"}, []string{"pve-enterprise"}
	case "no-subscription":
		uriSuffixes, components = []string{"/debian/pve", "/debian"}, []string{"pve-no-subscription"}
	case "test":
		uriSuffixes, components = []string{"/debian/pve", "/debian"}, []string{"pve-test", "pvetest"}
	default:
		m := cephHandleRE.FindStringSubmatch(handle)
		if m == nil {
			return nil, false
		}
		uriSuffixes, components = []string{"/debian/ceph-" + m[1]}, []string{m[2]}
		if m[2] == "no-subscription" && m[1] == "quincy" {
			components = append(components, "main")
		}
	}
	return func(r pve.APTRepository) bool {
		return contains(r.Types, "deb") && anyURI(r.URIs, uriSuffixes) && anyOf(r.Components, components)
	}, true
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func anyOf(list, want []string) bool {
	for _, w := range want {
		if contains(list, w) {
			return true
		}
	}
	return false
}

// anyURI reports whether a URI is a proxmox.com repository whose path is
// one of suffixes.
func anyURI(uris, suffixes []string) bool {
	for _, u := range uris {
		u = strings.TrimRight(u, "/")
		rest, ok := strings.CutPrefix(u, "https://")
		if !ok {
			rest, ok = strings.CutPrefix(u, "http://")
		}
		if !ok {
			continue
		}
		host, p, _ := strings.Cut(rest, "/")
		if host != "enterprise.proxmox.com" && host != "download.proxmox.com" {
			continue
		}
		for _, s := range suffixes {
			if "/"+p == s {
				return true
			}
		}
	}
	return false
}

// entryRef is one entry: its file and index.
type entryRef struct {
	Path    string
	Index   int64
	Enabled bool
}

// entriesOf lists the entries that belong to handle, in file order.
func entriesOf(repos *pve.APTRepositories, match func(pve.APTRepository) bool) []entryRef {
	var out []entryRef
	for _, f := range repos.Files {
		for i, r := range f.Repositories {
			if match(r) {
				out = append(out, entryRef{Path: f.Path, Index: int64(i), Enabled: r.Enabled})
			}
		}
	}
	return out
}

// entryAt returns the entry at path and index, if there is one.
func entryAt(repos *pve.APTRepositories, path string, index int64) (*pve.APTRepository, bool) {
	f := repos.Find(path)
	if f == nil || index < 0 || index >= int64(len(f.Repositories)) {
		return nil, false
	}
	return &f.Repositories[index], true
}
