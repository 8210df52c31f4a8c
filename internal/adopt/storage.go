package adopt

import "context"

// adoptStorage adopts storages (pve_storage).
func adoptStorage(ctx context.Context, r *run) error {
	_ = ctx
	_ = r
	return nil
}
