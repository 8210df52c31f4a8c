package pvesim

// The simulated PVE release.
const (
	pveVersion = "9.1.2"
	pveRelease = "9.1"
	pveRepoID  = "c2ea2e4b3ef53a41"
	kernel     = "6.17.2-1-pve"
)

func registerVersion(t *routeTable) {
	t.add("GET", "/version", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return map[string]any{"version": pveVersion, "release": pveRelease, "repoid": pveRepoID}, nil
	}})
}
