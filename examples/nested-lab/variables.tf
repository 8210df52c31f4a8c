variable "host" {
  description = <<-EOT
    The PVE host the nested nodes run on: its API endpoint, an API token
    (user@realm!name=secret) or root@pam's password, the API certificate's
    SHA-256 fingerprint, and the node name. The host needs nested
    virtualisation (kvm_intel/kvm_amd nested=1) for the nested nodes' VMs.
  EOT
  type = object({
    endpoint        = string
    api_token       = optional(string)
    password        = optional(string)
    tls_fingerprint = optional(string)
    node            = string
  })
  sensitive = true
}

variable "lab_file" {
  description = "The lab file whose nodes are nested (examples/labs/*/lab.json): node names, NICs, disks, management addresses. Default: the reference lab."
  type        = string
  default     = null
}

variable "root_password" {
  description = "root@pam's password on every nested node (the installer wants at least 8 characters)."
  type        = string
  sensitive   = true
  validation {
    condition     = length(var.root_password) >= 8
    error_message = "root_password: PVE's installer refuses passwords shorter than 8 characters; choose a longer one."
  }
}

variable "root_ssh_keys" {
  description = "SSH public keys for root on the nested nodes (answer.toml root-ssh-keys), for the provider's ssh block."
  type        = list(string)
  default     = []
}

variable "installer" {
  description = <<-EOT
    The PVE installer ISO, prepared for the automated installer to read its
    answer from a partition (proxmox-auto-install-assistant prepare-iso
    --fetch-from partition; scripts/testacc-nested.sh does it on the host):
    either the volume id of an ISO already on the host (volume), or a URL the
    host downloads it from (url, file_name, optional sha256).
  EOT
  type = object({
    volume    = optional(string)
    url       = optional(string)
    file_name = optional(string)
    sha256    = optional(string)
  })
  validation {
    condition     = (var.installer.volume == null) != (var.installer.url == null)
    error_message = "installer: set exactly one of volume (an ISO on the host, such as local:iso/proxmox-ve_9.1-1-auto-from-partition.iso) and url (with file_name)."
  }
  validation {
    condition     = var.installer.url == null || var.installer.file_name != null
    error_message = "installer: with url, also set file_name, the ISO's name on the host's storage, such as proxmox-ve-auto.iso."
  }
}

variable "iso_storage" {
  description = "The host's file storage for the installer and the answer images (content iso)."
  type        = string
  default     = "local"
}

variable "disk_storage" {
  description = "The host's storage for the nested nodes' disks."
  type        = string
  default     = "local-lvm"
}

variable "boot_disk_size" {
  description = "Size of each nested node's boot disk (the lab's boot disk), such as 32G."
  type        = string
  default     = "32G"
}

variable "data_disk_size" {
  description = "Size of each other disk (the lab's OSD candidates; nested, they need not be the lab's size), such as 16G."
  type        = string
  default     = "16G"
}

variable "vmid_base" {
  description = "VM id of the first nested node; the others follow."
  type        = number
  default     = 9101
}

variable "cores" {
  description = "CPU cores of each nested node."
  type        = number
  default     = 4
}

variable "memory" {
  description = "RAM of each nested node in MiB (PVE and Ceph want at least 4096; 6144 leaves room for test VMs)."
  type        = number
  default     = 6144
}

variable "management" {
  description = <<-EOT
    The nested nodes' management network: the host bridge their first NIC
    joins (default vmbr0, so that this machine reaches their APIs), their
    addresses by node name (default: the lab file's, which rarely fit the
    host's LAN), the gateway and DNS server (default: the lab's gateway).
  EOT
  type = object({
    bridge    = optional(string, "vmbr0")
    addresses = optional(map(string), {})
    gateway   = optional(string)
    dns       = optional(string)
  })
  default = {}
}

variable "corosync_network" {
  description = "Internal bridge (no ports, made on the host) for the lab's other 1 GbE NICs: corosync, bonds."
  type = object({
    bridge = optional(string, "vmbr91")
    mtu    = optional(number, 1500)
  })
  default = {}
}

variable "storage_network" {
  description = "Internal bridge (no ports, made on the host) for the lab's fast NICs: Ceph. VLAN-aware; the NICs trunk vlans."
  type = object({
    bridge = optional(string, "vmbr92")
    mtu    = optional(number, 9000)
    vlans  = optional(string, "2-4094")
  })
  default = {}
}

variable "power_on" {
  description = "Start the nested nodes. Apply false first: the installer must find the disks, which are attached after the VMs exist."
  type        = bool
  default     = true
}

variable "wait_for_api" {
  description = "After starting the nested nodes, wait for their APIs (pve_api_endpoint) and output their certificate fingerprints."
  type        = bool
  default     = true
}

variable "api_wait" {
  description = "How long to wait for each nested API (an unattended install takes 5 to 15 minutes)."
  type        = string
  default     = "30m"
}

variable "keyboard" {
  description = "Keyboard layout of the nested nodes (answer.toml), such as en-us or de."
  type        = string
  default     = "en-us"
  validation {
    condition     = contains(["de", "de-ch", "dk", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is", "it", "jp", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "se", "si", "tr"], var.keyboard)
    error_message = "keyboard: the installer offers de, de-ch, dk, en-gb, en-us, es, fi, fr, fr-be, fr-ca, fr-ch, hu, is, it, jp, lt, mk, nl, no, pl, pt, pt-br, se, si, tr."
  }
}

variable "country" {
  description = "Country code of the nested nodes (answer.toml), such as us or at."
  type        = string
  default     = "us"
  validation {
    condition     = can(regex("^[a-z]{2}$", var.country))
    error_message = "country: a two-letter country code in lower case, such as us, de or at."
  }
}

variable "timezone" {
  description = "Time zone of the nested nodes (answer.toml), such as UTC or Europe/Vienna."
  type        = string
  default     = "UTC"
  validation {
    condition     = can(regex("^(UTC|[A-Z][A-Za-z_+-]+(/[A-Za-z0-9_+-]+)+)$", var.timezone))
    error_message = "timezone: UTC or an Area/City zone such as Europe/Vienna."
  }
}
