# The plugin id.
terraform import pve_acme_plugin.lab_dns lab-dns
