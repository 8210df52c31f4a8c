variable "installer_sha256" {
  description = "The installer's SHA-256, from https://enterprise.proxmox.com/iso/SHA256SUMS."
  type        = string
}

# The PVE installer, downloaded by the node itself and verified.
resource "pve_storage_iso" "installer" {
  node               = "z2g4a"
  storage            = "local"
  file_name          = "proxmox-ve_9.1-1.iso"
  url                = "https://enterprise.proxmox.com/iso/proxmox-ve_9.1-1.iso"
  checksum           = var.installer_sha256
  checksum_algorithm = "sha256"
}

# An answer file for PVE's automated installer, on an image labelled as
# an installer prepared with --fetch-from partition looks for it.
resource "pve_storage_iso" "answer" {
  node         = "z2g4a"
  storage      = "local"
  file_name    = "pve1-answer.iso"
  volume_label = "PROXMOX-AIS"
  files = {
    "answer.toml" = <<-EOT
      [global]
      keyboard = "en-us"
      country = "us"
      fqdn = "pve1.lab.example"
      mailto = "root@pve1.lab.example"
      timezone = "UTC"
      root-password-hashed = "$y$j9T$..."

      [network]
      source = "from-dhcp"

      [disk-setup]
      filesystem = "ext4"
      disk-list = ["sda"]
    EOT
  }
}

# A local file, uploaded by the provider.
resource "pve_storage_iso" "virtio" {
  node        = "z2g4a"
  storage     = "local"
  file_name   = "virtio-win.iso"
  source_file = "${path.module}/virtio-win.iso"
}
