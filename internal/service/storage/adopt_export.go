package storage

import "slices"

// SharedSettable reports whether a storage of type typ takes the shared
// option: PVE decides sharing for the others (network storages always
// are), and the resource refuses shared for them. The adoption
// (internal/adopt) leaves shared out of those storages' configuration.
func SharedSettable(typ string) bool { return slices.Contains(sharedSettable, typ) }
