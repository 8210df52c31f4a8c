package pvesim

import (
	"fmt"
	"slices"
	"sort"
)

// pveRelease is one PVE release the simulator can be: its version strings
// and the API differences between releases that matter to us.
type pveRelease struct {
	Version, Release, RepoID, Kernel string
}

// releases are the PVE releases pvesim simulates; the default is the newest.
var releases = map[string]pveRelease{
	"9.1": {Version: "9.1.2", Release: "9.1", RepoID: "c2ea2e4b3ef53a41", Kernel: "6.17.2-1-pve"},
	"8.4": {Version: "8.4.1", Release: "8.4", RepoID: "2a5fa54a8503f96d", Kernel: "6.8.12-9-pve"},
}

// DefaultRelease is the PVE release simulated unless Options.PVERelease says otherwise.
const DefaultRelease = "9.1"

// Releases lists the PVE releases the simulator supports.
func Releases() []string {
	out := make([]string, 0, len(releases))
	for r := range releases {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func lookupRelease(r string) (pveRelease, error) {
	if r == "" {
		r = DefaultRelease
	}
	rel, ok := releases[r]
	if !ok {
		return pveRelease{}, fmt.Errorf("unsupported PVE release %q; pvesim simulates %v", r, Releases())
	}
	return rel, nil
}

// atLeast9 reports whether the release is PVE 9 or later, where the
// network API gained SDN fabrics (type fabric, regenerate-frr).
func (r pveRelease) atLeast9() bool { return !slices.Contains([]string{"8.4"}, r.Release) }

func (r pveRelease) versionInfo() map[string]any {
	return map[string]any{"version": r.Version, "release": r.Release, "repoid": r.RepoID}
}

func registerVersion(t *routeTable) {
	t.add("GET", "/version", &method{params: schema{}, handler: func(c *call) (any, *apiError) {
		return c.s.rel.versionInfo(), nil
	}})
}
