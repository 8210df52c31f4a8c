# The internal networks: bridges without ports on the host, so that the
# nested nodes' corosync and Ceph traffic stays inside it.
resource "pve_node_network" "corosync" {
  node     = var.host.node
  iface    = var.corosync_network.bridge
  type     = "bridge"
  mtu      = var.corosync_network.mtu
  comments = "nested-lab: corosync and bonds"
}

resource "pve_node_network" "storage" {
  node              = var.host.node
  iface             = var.storage_network.bridge
  type              = "bridge"
  bridge_vlan_aware = true
  mtu               = var.storage_network.mtu
  comments          = "nested-lab: Ceph"
}

# The installer, when the host downloads it.
resource "pve_storage_iso" "installer" {
  count              = var.installer.url == null ? 0 : 1
  node               = var.host.node
  storage            = var.iso_storage
  file_name          = var.installer.file_name
  url                = var.installer.url
  checksum           = var.installer.sha256
  checksum_algorithm = var.installer.sha256 == null ? null : "sha256"
}

locals {
  installer_volume = var.installer.url == null ? var.installer.volume : pve_storage_iso.installer[0].volume
}

# Each node's answer file on an image labelled PROXMOX-AIS, where the
# installer prepared with --fetch-from partition looks for it.
resource "pve_storage_iso" "answer" {
  for_each     = local.nodes
  node         = var.host.node
  storage      = var.iso_storage
  file_name    = "nested-${each.key}-answer.iso"
  volume_label = "PROXMOX-AIS"
  files = {
    "answer.toml" = templatefile("${path.module}/answer.toml.tftpl", {
      fqdn          = each.value.fqdn
      mailto        = "root@${each.value.fqdn}"
      keyboard      = var.keyboard
      country       = var.country
      timezone      = var.timezone
      root_password = var.root_password
      root_ssh_keys = var.root_ssh_keys
      cidr          = each.value.cidr
      gateway       = local.gateway
      dns           = local.dns
      mac           = lower(replace(format("02%s", substr(each.value.nics[0].mac, 2, 15)), ":", ""))
      boot_disk     = "sda"
    })
  }
}

resource "pve_vm" "node" {
  for_each = local.nodes
  node     = var.host.node
  vmid     = each.value.vmid
  name     = each.key
  tags     = ["nested-lab"]
  # Nested virtualisation: the nested nodes run VMs of their own.
  cpu    = "host"
  cores  = var.cores
  memory = var.memory
  ostype = "l26"

  network = {
    for i, x in each.value.nics : "net${i}" => {
      model       = "virtio"
      bridge      = local.nic_bridge[each.key][i]
      mac_address = upper(format("02%s", substr(x.mac, 2, 15)))
      mtu         = local.nic_bridge[each.key][i] == var.storage_network.bridge ? var.storage_network.mtu : null
      trunks      = local.nic_bridge[each.key][i] == var.storage_network.bridge ? var.storage_network.vlans : null
    }
  }

  # The installer boots from sata0 while the boot disk (ide0, first in the
  # boot order through its pve_vm_disk) is still empty; sata1 holds the
  # answer.
  cdrom = {
    sata0 = local.installer_volume
    sata1 = pve_storage_iso.answer[each.key].volume
  }

  started = var.power_on

  lifecycle {
    precondition {
      condition     = length(each.value.disks) <= 4
      error_message = "Lab node ${each.key} has ${length(each.value.disks)} disks; a nested node gets them as IDE disks (PVE reports a drive model only on IDE), of which it has four (ide0-ide3). Remove disks from the lab file's node."
    }
  }

  depends_on = [pve_node_network.corosync, pve_node_network.storage]
}

# The lab's disks as IDE disks with the lab's serials and models (PVE
# sets a drive's model only on IDE), so the nested nodes list the drives
# the real lab has: the provider judges OSD candidates by model. Nested,
# their sizes are boot_disk_size and data_disk_size.
resource "pve_vm_disk" "disk" {
  for_each = merge([
    for name, n in local.nodes : {
      for i, d in n.disks : "${name}/ide${i}" => { node = name, slot = "ide${i}", disk = d, boot = i == 0 }
    }
  ]...)
  vm_id   = pve_vm.node[each.value.node].vmid
  slot    = each.value.slot
  storage = var.disk_storage
  size    = each.value.boot ? var.boot_disk_size : var.data_disk_size
  serial  = substr(each.value.disk.serial, 0, 20)
  model   = substr(each.value.disk.model, 0, 40)
  ssd     = !try(each.value.disk.rotational, false)
  boot    = each.value.boot ? true : null
  # The lab is disposable: destroying it deletes its disks.
  delete_on_destroy = true
}

# Each nested API, once the node is installed and up.
data "pve_api_endpoint" "node" {
  for_each = var.power_on && var.wait_for_api ? local.nodes : {}
  endpoint = "https://${split("/", each.value.cidr)[0]}:8006"
  timeout  = var.api_wait

  depends_on = [pve_vm.node, pve_vm_disk.disk]
}
