# Import an account by name.
terraform import pve_acme_account.internal internal
