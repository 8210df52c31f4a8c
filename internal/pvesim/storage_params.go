package pvesim

// Parameters of POST /storage and PUT /storage/{storage} that belong to
// plugins pvesim does not model (CIFS share/domain/smbversion/password, PBS
// datastore/fingerprint/port/encryption keys, iSCSI and ZFS over iSCSI
// portal/target/nowritecache/zfs-base-path and the target options,
// BTRFS nocow, ESXi skip-cert-verification) and LVM's
// saferemove-stepsize: PVE's API declares every plugin's properties for
// every type (pve-storage Plugin.pm properties, SectionConfig
// createSchema/updateSchema), so their values are checked and accepted
// before the type is looked at. Creating such a storage is still 501.
func addStoragePluginParams(rel pveRelease, create bool, sc schema) {
	sc["bwlimit"] = psParam(datacenterFormats(rel)["bwlimit"], "bwlimit")
	sc["domain"] = pStr().maxLen(256)
	sc["password"] = pStr().maxLen(256)
	sc["smbversion"] = pEnum("default", "2.0", "2.1", "3", "3.0", "3.11")
	fp := pStr()
	fp.pattern = fingerprintRE
	sc["fingerprint"] = fp
	sc["port"] = pInt(i64(1), i64(65535))
	sc["nocow"] = pBool()
	sc["nowritecache"] = pBool()
	sc["skip-cert-verification"] = pBool()
	// ZFS over iSCSI targets, PBS encryption: plain strings.
	for _, k := range []string{"comstar_hg", "comstar_tg", "lio_tpg", "encryption-key", "master-pubkey"} {
		sc[k] = pStr()
	}
	if create { // fixed: not in the update schema
		sc["portal"] = pFmt("pve-storage-portal-dns")
		for _, k := range []string{"share", "datastore", "target", "iscsiprovider", "authsupported"} {
			sc[k] = pStr()
		}
	}
	if rel.atLeast9() {
		step := pInt(nil, nil)
		step.enum = []string{"1", "2", "4", "8", "16", "32"}
		sc["saferemove-stepsize"] = step
		sc["zfs-base-path"] = pFmt("pve-storage-path")
	}
}
