package adopt

import (
	"context"
	"fmt"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/service/storage"
)

// adoptStorage adopts storages (pve_storage): every storage of
// storage.cfg, the installer's local and local-lvm included (what they
// are is what Read reports, so adopting them plans nothing, and a
// configuration that leaves them out describes the cluster less).
func adoptStorage(ctx context.Context, r *run) error {
	list, err := r.api.StorageConfigs(ctx, "")
	if err != nil {
		return fmt.Errorf("list the storages (GET /storage): %w", err)
	}
	for _, sc := range list {
		if why, ok := storageNotExpressible[sc.Type]; ok {
			r.skip(fmt.Sprintf("storage %s (type %s)", sc.Storage, sc.Type), why)
			continue
		}
		base := strings.NewReplacer("-", "_", ".", "_").Replace(sc.Storage)
		name := base
		// a-b and a_b are both valid ids, and one resource name.
		for i := 2; r.byAddr["pve_storage."+name] != nil; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		g := Group{File: "storage.tf", Type: "pve_storage", Name: name, Comment: storageComment(sc.Storage, sc.Type)}
		// shared is computed for every type; only some take it (the
		// resource refuses it for the others), and false is PVE's
		// default where it is taken.
		if !storage.SharedSettable(sc.Type) || !sc.Shared {
			g.Omit = []string{"shared"}
		}
		if _, err := r.add(ctx, g, "", sc.Storage); err != nil {
			return err
		}
	}
	return nil
}

// storageNotExpressible are the storage types whose configuration needs a
// secret PVE keeps in /etc/pve/priv and never returns, which pve_storage
// has no attribute for (its options map is not sensitive): a configuration
// could not re-create them and would hold the secret in plain text if it
// tried.
var storageNotExpressible = map[string]string{
	"pbs":  "a Proxmox Backup Server storage needs its password (and encryption key), which PVE never returns and pve_storage cannot hold as a secret",
	"cifs": "a CIFS storage needs its password, which PVE never returns and pve_storage cannot hold as a secret",
	"esxi": "an ESXi import source needs its password, which PVE never returns and pve_storage cannot hold as a secret",
}

// storageComment says what a storage is, naming the installer's two.
func storageComment(id, typ string) string {
	switch {
	case id == "local" && typ == "dir":
		return "The installer's directory storage on the root file system (ISO images, templates, backups)."
	case id == "local-lvm" && typ == "lvmthin":
		return "The installer's LVM thin pool on the boot disk (guest disks)."
	}
	return fmt.Sprintf("Storage %s (%s).", id, typ)
}
