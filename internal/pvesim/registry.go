package pvesim

import (
	"sort"
	"strings"
)

// The simulator's registries, side by side and built per simulator
// (nothing registers itself): the API routes the nodes serve, and the
// programs, systemd units and files the nodes' shells know. Package-level
// maps elsewhere are read-only tables.

func buildRoutes(rel pveRelease) []*route {
	t := &routeTable{rel: rel}
	registerVersion(t)
	registerAuth(t)
	registerNodes(t)
	registerTasks(t)
	registerNetwork(t)
	registerRootOnly(t)
	registerCluster(t)
	registerOptions(t)
	registerAPT(t)
	registerCertificates(t)
	registerACME(t)
	registerNodeConfig(t)
	registerCeph(t)
	registerCephMon(t)
	registerCephOSD(t)
	registerCephPool(t)
	registerCephMetadata(t)
	registerDisks(t)
	registerHA(t)
	registerStorage(t)
	registerStorageVolumeInfo(t)
	registerStorageUpload(t)
	// After every Ceph registration: wraps their handlers.
	gateCephInstalled(t)
	// VMs (qemu.go).
	registerQemu(t)
	registerPools(t)
	// Literal segments win over variables, as in PVE's handler lookup.
	sort.SliceStable(t.routes, func(i, j int) bool {
		return literalCount(t.routes[i]) > literalCount(t.routes[j])
	})
	return t.routes
}

func literalCount(rt *route) int {
	n := 0
	for _, s := range rt.segs {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// nodeOS is what a node's shell finds: programs by name (argv[0]), units
// that are views of simulator state, and files that are.
type nodeOS struct {
	programs map[string]*sshProgram
	units    []*unitHook
	files    map[string]*fileHook
	// timers are the transient timers systemd-run armed (cli_systemd_run.go).
	timers *transientTimers
}

func buildNodeOS() *nodeOS {
	timers := newTransientTimers()
	return &nodeOS{
		timers: timers,
		programs: map[string]*sshProgram{
			"systemctl":              {run: sshSystemctl},
			"tuned-adm":              {run: sshTunedAdm},
			"ethtool":                {run: sshEthtool},
			"update-ca-certificates": {run: sshUpdateCACertificates},
			"cat":                    fileProgram("cat"),
			"stat":                   fileProgram("stat"),
			"install":                fileProgram("install"),
			"mv":                     fileProgram("mv"),
			"rm":                     fileProgram("rm"),
			"cp":                     fileProgram("cp"),
			"ls":                     {run: sshLs},
			"ifreload":               {run: sshIfreload},
			"systemd-run":            {run: sshSystemdRun},
			"mkdir":                  {run: sshMkdir},
			"rmdir":                  {run: sshRmdir},
			"lsblk":                  {run: sshLsblk},
			"findmnt":                {run: sshFindmnt},
			"fio":                    {run: sshFio},
			"ceph":                   {run: sshCeph, elsewhere: realCephCLI},
			"pveceph":                {run: sshPveceph},
			"dpkg-query":             {run: sshDpkgQuery},
		},
		units: []*unitHook{cephUnits(), transientUnits(timers)},
		files: nodeFiles(),
	}
}
