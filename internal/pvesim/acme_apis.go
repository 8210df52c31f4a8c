package pvesim

import (
	"slices"
	"strings"
)

// acmeDNSAPIs is the `api` enumeration of POST and PUT
// /cluster/acme/plugins: the names of the acme.sh DNS API scripts
// (acme.sh dnsapi/dns_<name>.sh) that the acme.sh proxmox-acme bundles
// ships (PVE::ACME::DNSChallenge), which grows with each release. PVE
// lists them sorted. Names only; checked against acme.sh's dnsapi/.
func acmeDNSAPIs(rel pveRelease) []string {
	names := strings.Fields(`
	1984hosting acmedns acmeproxy active24 ad ali alviy anx artfiles arvan aurora autodns aws azion azure
	bookmyname bunny cf clouddns cloudns cn conoha constellix cpanel curanet cyon da ddnss desec df dgon dnsexit
	dnshome dnsimple dnsservices doapi domeneshop dp dpi dreamhost duckdns durabledns dyn dynu dynv6 easydns
	edgedns euserv exoscale fornex freedns gandi_livedns gcloud gcore gd geoscaling googledomains he hetzner
	hexonet hostingde huaweicloud infoblox infomaniak inwx ionos ionos_cloud ipv64 ispconfig jd joker
	kappernet kas kinghost knot la leaseweb lexicon limacity linode linode_v4 loopia lua maradns me miab misaka
	myapi mydevil mydnsjp mythic_beasts namecheap namecom namesilo nanelo nederhost neodigit netcup netlify nic
	njalla nm nsd nsone nsupdate nw oci omglol one online openprovider openstack opnsense ovh pdns pleskxml
	pointhq porkbun rackcorp rackspace rage4 rcode0 regru scaleway schlundtech selectel selfhost servercow simply
	technitium tele3 tencent timeweb transip udr ultra unoeuro variomedia veesp vercel vscale vultr websupport
	west_cn world4you yandex360 yc zilore zone zoneedit zonomi`)
	names = append(names, "internetbs") //nolint:misspell // a DNS API name, not a typo
	if rel.atLeast9() {
		names = append(names, "beget", "edgecenter", "freemyip", "he_ddns", "hetznercloud", "mijnhost", "openprovider_rest", "spaceship")
	}
	slices.Sort(names)
	return names
}
