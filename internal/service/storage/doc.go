// Package storage manages PVE storages (/etc/pve/storage.cfg) of every
// built-in type and of third-party plugins (LINSTOR's drbd, Vitastor),
// and LVM thin pools and ZFS pools on a node's free disks. Nothing here
// replaces a storage or a pool for an attribute change: a replacement
// would orphan or destroy the volumes on it, so what PVE cannot change in
// place is refused at plan with the reason.
package storage
