# A standard repository: NODE/HANDLE.
terraform import 'pve_apt_repository.no_subscription["z2g4a"]' z2g4a/no-subscription

# An entry by file and index: NODE/PATH:INDEX.
terraform import pve_apt_repository.debian_security z2g4a//etc/apt/sources.list.d/debian.sources:1
