package pve

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// VMs (qemu-server): config with pending changes, disks, power state,
// migration. Every config write of PVE takes the VM's config lock and may
// fail with "can't lock file '/var/lock/qemu-server/lock-<vmid>.conf' - got
// timeout" when other writers hold it; synchronous calls are retried by
// the transport (the write did not happen), task-based ones by
// AwaitVMTask.

func vmPath(node string, vmid int64) string {
	return "/nodes/" + PathEscape(node) + "/qemu/" + strconv.FormatInt(vmid, 10)
}

// VMConfig is a VM's configuration: every key as PVE's text (numbers in
// decimal, booleans 0/1), unknown keys included, so a read-modify-write
// never drops what the provider does not model.
type VMConfig struct {
	// Digest is the SHA-1 of the config file; pass it back to refuse a
	// write when someone else changed the VM in between.
	Digest string
	Values map[string]string
}

// Get returns key's value and whether it is set.
func (c *VMConfig) Get(k string) (string, bool) {
	v, ok := c.Values[k]
	return v, ok
}

// Int returns key as an integer, def when unset or not a number.
func (c *VMConfig) Int(k string, def int64) int64 {
	if n, err := strconv.ParseInt(c.Values[k], 10, 64); err == nil {
		return n
	}
	return def
}

// Bool returns a 0/1 key, def when unset.
func (c *VMConfig) Bool(k string, def bool) bool {
	switch normalizeBool(c.Values[k]) {
	case "1":
		return true
	case "0":
		return false
	}
	return def
}

// Drives returns the drive keys (scsi0, virtio1, efidisk0, ...) parsed;
// values PVE wrote that do not parse are skipped.
func (c *VMConfig) Drives() map[string]Drive {
	out := map[string]Drive{}
	for k, v := range c.Values {
		if !IsDriveKey(k) {
			continue
		}
		if d, err := ParseDrive(v); err == nil {
			out[k] = d
		}
	}
	return out
}

// Unused returns the unusedN keys and their volumes.
func (c *VMConfig) Unused() map[string]string {
	out := map[string]string{}
	for k, v := range c.Values {
		if rest, ok := strings.CutPrefix(k, "unused"); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				d, err := ParseDrive(v)
				if err == nil {
					v = d.Volume
				}
				out[k] = v
			}
		}
	}
	return out
}

// Nets returns the netN devices by index.
func (c *VMConfig) Nets() map[int]NetDevice {
	out := map[int]NetDevice{}
	for k, v := range c.Values {
		rest, ok := strings.CutPrefix(k, "net")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(rest)
		if err != nil || strconv.Itoa(i) != rest {
			continue
		}
		if n, err := ParseNetDevice(v); err == nil {
			out[i] = n
		}
	}
	return out
}

// decodeConfig turns GET config's loosely typed object into VMConfig.
func decodeConfig(wire map[string]flexString) *VMConfig {
	c := &VMConfig{Values: make(map[string]string, len(wire))}
	for k, v := range wire {
		if k == "digest" {
			c.Digest = string(v)
			continue
		}
		c.Values[k] = string(v)
	}
	return c
}

// VMConfig reads a VM's config; current=false includes pending changes
// (what the VM will run after a restart), current=true only what applies
// now. A VM that does not exist on node is ErrNotFound.
//
//pve:operation GET /nodes/{node}/qemu/{vmid}/config
func (c *Client) VMConfig(ctx context.Context, node string, vmid int64, current bool) (*VMConfig, error) {
	p := Params{}
	if current {
		p.SetBool("current", true)
	}
	var wire map[string]flexString
	if err := c.Get(ctx, vmPath(node, vmid)+"/config", p, &wire); err != nil {
		return nil, err
	}
	return decodeConfig(wire), nil
}

// VMPendingItem is one row of GET pending: the current value, the pending
// one, and whether the key is to be deleted (Delete 1, or 2 = forced).
type VMPendingItem struct {
	Key        string
	Value      string
	HasValue   bool
	Pending    string
	HasPending bool
	Delete     int64
}

// IsPending reports a change waiting for a restart.
func (i VMPendingItem) IsPending() bool { return i.HasPending || i.Delete > 0 }

// VMPending lists the VM's config keys with their pending changes.
//
//pve:operation GET /nodes/{node}/qemu/{vmid}/pending
func (c *Client) VMPending(ctx context.Context, node string, vmid int64) ([]VMPendingItem, error) {
	var wire []struct {
		Key     flexString  `json:"key"`
		Value   *flexString `json:"value"`
		Pending *flexString `json:"pending"`
		Delete  flexInt     `json:"delete"`
	}
	if err := c.Get(ctx, vmPath(node, vmid)+"/pending", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]VMPendingItem, 0, len(wire))
	for _, w := range wire {
		it := VMPendingItem{Key: string(w.Key), Delete: int64(w.Delete)}
		if w.Value != nil {
			it.Value, it.HasValue = string(*w.Value), true
		}
		if w.Pending != nil {
			it.Pending, it.HasPending = string(*w.Pending), true
		}
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// EffectiveConfig is GET config (current=0) rebuilt from GET pending's
// rows: a pending value replaces the current one and a pending delete
// removes the key, as qemu-server merges them. One pending read then
// serves both the config and its pending changes.
func EffectiveConfig(items []VMPendingItem) *VMConfig {
	c := &VMConfig{Values: make(map[string]string, len(items))}
	for _, it := range items {
		switch {
		case it.Key == "digest":
			c.Digest = it.Value
		case it.Delete > 0:
		case it.HasPending:
			c.Values[it.Key] = it.Pending
		case it.HasValue:
			c.Values[it.Key] = it.Value
		}
	}
	return c
}

// PendingChanges returns the keys with a pending change (value or
// delete), sorted.
func PendingChanges(items []VMPendingItem) []string {
	var out []string
	for _, it := range items {
		if it.Key != "digest" && it.IsPending() {
			out = append(out, it.Key)
		}
	}
	return out
}

// CreateVM starts qmcreate for vmid on node with the given options
// (disks in allocation syntax `<storage>:<GiB>,...`). Await the UPID,
// preferably with AwaitVMTask.
//
//pve:operation POST /nodes/{node}/qemu
func (c *Client) CreateVM(ctx context.Context, node string, vmid int64, opts Params) (string, error) {
	p := Params{}
	for k, v := range opts {
		p[k] = v
	}
	p.SetInt("vmid", vmid)
	var upid string
	err := c.Post(ctx, "/nodes/"+PathEscape(node)+"/qemu", p, &upid)
	return upid, err
}

// VMConfigUpdate is one config write: options to set, keys to delete,
// pending changes to revert, and the digest the write must match ("" =
// none).
type VMConfigUpdate struct {
	Set    Params
	Delete []string
	Revert []string
	// Force deletes a disk's volume instead of keeping it as unusedN.
	Force  bool
	Digest string
}

func (u VMConfigUpdate) params() Params {
	p := Params{}
	for k, v := range u.Set {
		p[k] = v
	}
	p.Delete(u.Delete...)
	if len(u.Revert) > 0 {
		p.Set("revert", strings.Join(u.Revert, ","))
	}
	if u.Force && len(u.Delete) > 0 {
		p.SetBool("force", true)
	}
	if u.Digest != "" {
		p.Set("digest", u.Digest)
	}
	return p
}

// UpdateVMConfig writes the config through the asynchronous POST (task
// qmconfig, which may allocate disks); await the UPID with AwaitVMTask.
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/config
func (c *Client) UpdateVMConfig(ctx context.Context, node string, vmid int64, u VMConfigUpdate) (string, error) {
	var upid string
	err := c.Post(ctx, vmPath(node, vmid)+"/config", u.params(), &upid)
	return upid, err
}

// configUpdateWait is the background_delay UpdateVMConfigWaiting asks
// for, in seconds: the GUI's hardware editor asks for 5.
const configUpdateWait = 5

// UpdateVMConfigWaiting is UpdateVMConfig with background_delay: PVE
// waits up to configUpdateWait seconds for its qmconfig worker (woken
// when it exits) and answers null when the worker ended well, so a write
// that allocates a disk in a moment needs no task status read. It returns
// NoTask then, else the UPID of the worker still running (await it).
// PVE answers a worker that failed in time with "failed to update VM
// <vmid>: <exit status>" and no UPID; that is returned as the task's
// *TaskError without its log (AwaitVMTask starts the write again after a
// lock timeout, as for any qmconfig task). The task is not looked up:
// another writer's qmconfig task of the VM could be taken for it.
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/config
func (c *Client) UpdateVMConfigWaiting(ctx context.Context, node string, vmid int64, u VMConfigUpdate) (string, error) {
	p := u.params()
	p.Set("background_delay", strconv.Itoa(configUpdateWait))
	var upid string
	err := c.Post(ctx, vmPath(node, vmid)+"/config", p, &upid)
	var ae *APIError
	failed := fmt.Sprintf("failed to update VM %d: ", vmid)
	if errors.As(err, &ae) && strings.HasPrefix(ae.Message, failed) {
		return "", &TaskError{
			UPID:       UPID{Node: node, Type: "qmconfig", ID: strconv.FormatInt(vmid, 10)},
			ExitStatus: strings.TrimSpace(strings.TrimPrefix(ae.Message, failed)),
		}
	}
	if err == nil && upid == "" {
		return NoTask, nil
	}
	return upid, err
}

// NoTask is the UPID of a write PVE finished before it answered
// (UpdateVMConfigWaiting): there is no task to await.
const NoTask = ""

// UpdateVMConfigSync writes the config through the synchronous PUT (no
// task; changes that cannot apply to a running VM stay pending).
//
//pve:operation PUT /nodes/{node}/qemu/{vmid}/config
func (c *Client) UpdateVMConfigSync(ctx context.Context, node string, vmid int64, u VMConfigUpdate) error {
	return c.Put(ctx, vmPath(node, vmid)+"/config", u.params(), nil)
}

// ResizeVMDisk grows disk to size (`+16G` adds, `48G` is absolute; PVE
// refuses to shrink). Await the UPID.
//
//pve:operation PUT /nodes/{node}/qemu/{vmid}/resize
func (c *Client) ResizeVMDisk(ctx context.Context, node string, vmid int64, disk, size, digest string) (string, error) {
	p := Params{"disk": disk, "size": size}
	if digest != "" {
		p.Set("digest", digest)
	}
	var upid string
	err := c.Put(ctx, vmPath(node, vmid)+"/resize", p, &upid)
	return upid, err
}

// MoveVMDiskRequest moves a disk's volume to another storage.
type MoveVMDiskRequest struct {
	Disk    string
	Storage string
	// Format of the new volume ("" = the storage's default).
	Format string
	// DeleteSource frees the old volume; otherwise it stays as unusedN.
	DeleteSource bool
	Digest       string
}

// MoveVMDisk starts qmmove. Await the UPID.
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/move_disk
func (c *Client) MoveVMDisk(ctx context.Context, node string, vmid int64, r MoveVMDiskRequest) (string, error) {
	p := Params{"disk": r.Disk, "storage": r.Storage}
	if r.Format != "" {
		p.Set("format", r.Format)
	}
	if r.DeleteSource {
		p.SetBool("delete", true)
	}
	if r.Digest != "" {
		p.Set("digest", r.Digest)
	}
	var upid string
	err := c.Post(ctx, vmPath(node, vmid)+"/move_disk", p, &upid)
	return upid, err
}

// UnlinkVMDisks removes disks from the config: with force their volumes
// are deleted, otherwise they become unusedN (and unusedN keys are
// deleted).
//
//pve:operation PUT /nodes/{node}/qemu/{vmid}/unlink
func (c *Client) UnlinkVMDisks(ctx context.Context, node string, vmid int64, ids []string, force bool) error {
	p := Params{"idlist": strings.Join(ids, ",")}
	if force {
		p.SetBool("force", true)
	}
	return c.Put(ctx, vmPath(node, vmid)+"/unlink", p, nil)
}

// VMStatus is GET status/current.
type VMStatus struct {
	Status    string // running, stopped
	QMPStatus string
	Name      string
	Lock      string
	PID       int64
	Uptime    int64
	MaxMem    int64
	MaxDisk   int64
	CPUs      int64
	HAManaged bool
	HAState   string
	Tags      string
}

// Running reports a running VM.
func (s *VMStatus) Running() bool { return s.Status == "running" }

// VMStatus reads the VM's power state.
//
//pve:operation GET /nodes/{node}/qemu/{vmid}/status/current
func (c *Client) VMStatus(ctx context.Context, node string, vmid int64) (*VMStatus, error) {
	var w struct {
		Status    flexString `json:"status"`
		QMPStatus flexString `json:"qmpstatus"`
		Name      flexString `json:"name"`
		Lock      flexString `json:"lock"`
		PID       flexInt    `json:"pid"`
		Uptime    flexInt    `json:"uptime"`
		MaxMem    flexInt    `json:"maxmem"`
		MaxDisk   flexInt    `json:"maxdisk"`
		CPUs      flexInt    `json:"cpus"`
		Tags      flexString `json:"tags"`
		HA        struct {
			Managed flexBool   `json:"managed"`
			State   flexString `json:"state"`
		} `json:"ha"`
	}
	if err := c.Get(ctx, vmPath(node, vmid)+"/status/current", nil, &w); err != nil {
		return nil, err
	}
	return &VMStatus{Status: string(w.Status), QMPStatus: string(w.QMPStatus), Name: string(w.Name), Lock: string(w.Lock),
		PID: int64(w.PID), Uptime: int64(w.Uptime), MaxMem: int64(w.MaxMem), MaxDisk: int64(w.MaxDisk), CPUs: int64(w.CPUs),
		HAManaged: bool(w.HA.Managed), HAState: string(w.HA.State), Tags: string(w.Tags)}, nil
}

func (c *Client) vmPower(ctx context.Context, node string, vmid int64, action string, p Params) (string, error) {
	var upid string
	err := c.Post(ctx, vmPath(node, vmid)+"/status/"+action, p, &upid)
	return upid, err
}

// StartVM starts the VM (qmstart; hastart when HA manages it). Pending
// changes apply on start.
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/status/start
func (c *Client) StartVM(ctx context.Context, node string, vmid int64) (string, error) {
	return c.vmPower(ctx, node, vmid, "start", nil)
}

// StopVM stops the VM at once (qmstop), like pulling the plug.
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/status/stop
func (c *Client) StopVM(ctx context.Context, node string, vmid int64) (string, error) {
	return c.vmPower(ctx, node, vmid, "stop", nil)
}

// ShutdownVM asks the guest to shut down (qmshutdown); with forceStop
// PVE stops it after timeoutSeconds (0 = PVE's default).
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/status/shutdown
func (c *Client) ShutdownVM(ctx context.Context, node string, vmid int64, forceStop bool, timeoutSeconds int64) (string, error) {
	p := Params{}
	if forceStop {
		p.SetBool("forceStop", true)
	}
	if timeoutSeconds > 0 {
		p.SetInt("timeout", timeoutSeconds)
	}
	return c.vmPower(ctx, node, vmid, "shutdown", p)
}

// RebootVM shuts the VM down and starts it again (qmreboot), which
// applies pending changes.
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/status/reboot
func (c *Client) RebootVM(ctx context.Context, node string, vmid int64) (string, error) {
	return c.vmPower(ctx, node, vmid, "reboot", nil)
}

// DeleteVM destroys the VM and the volumes it owns (qmdestroy). purge
// also removes it from HA, backup and replication jobs;
// destroyUnreferenced deletes volumes of the vmid that the config does not
// list.
//
//pve:operation DELETE /nodes/{node}/qemu/{vmid}
func (c *Client) DeleteVM(ctx context.Context, node string, vmid int64, purge, destroyUnreferenced bool) (string, error) {
	p := Params{}
	if purge {
		p.SetBool("purge", true)
	}
	if destroyUnreferenced {
		p.SetBool("destroy-unreferenced-disks", true)
	}
	var upid string
	err := c.Delete(ctx, vmPath(node, vmid), p, &upid)
	return upid, err
}

// DeleteReservedVM destroys a VM whose config is still locked (a create
// worker killed after PVE reserved the id with `lock: create`): qmdestroy
// with skiplock, which PVE allows only root@pam, and purge.
//
//pve:operation DELETE /nodes/{node}/qemu/{vmid}
func (c *Client) DeleteReservedVM(ctx context.Context, node string, vmid int64) (string, error) {
	p := Params{}
	p.SetBool("skiplock", true)
	p.SetBool("purge", true)
	var upid string
	err := c.Delete(ctx, vmPath(node, vmid), p, &upid)
	return upid, err
}

// MigrateVMRequest moves a VM to another node.
type MigrateVMRequest struct {
	Target string
	// Online migrates a running VM live (PVE refuses a running VM without it).
	Online bool
	// WithLocalDisks copies disks on node-local storage during a live
	// migration.
	WithLocalDisks bool
}

// MigrateVM starts qmigrate (hamigrate when HA manages the VM). Await the
// UPID, then wait for the VM to appear on the target (WaitVMOnNode).
//
//pve:operation POST /nodes/{node}/qemu/{vmid}/migrate
func (c *Client) MigrateVM(ctx context.Context, node string, vmid int64, r MigrateVMRequest) (string, error) {
	p := Params{"target": r.Target}
	if r.Online {
		p.SetBool("online", true)
	}
	if r.WithLocalDisks {
		p.SetBool("with-local-disks", true)
	}
	var upid string
	err := c.Post(ctx, vmPath(node, vmid)+"/migrate", p, &upid)
	return upid, err
}

// VMListEntry is one row of GET /nodes/{node}/qemu.
type VMListEntry struct {
	VMID   int64
	Name   string
	Status string
	Lock   string
	Tags   string
}

// VMs lists the VMs whose config lives on node.
//
//pve:operation GET /nodes/{node}/qemu
func (c *Client) VMs(ctx context.Context, node string) ([]VMListEntry, error) {
	var wire []struct {
		VMID   flexInt    `json:"vmid"`
		Name   flexString `json:"name"`
		Status flexString `json:"status"`
		Lock   flexString `json:"lock"`
		Tags   flexString `json:"tags"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/qemu", nil, &wire); err != nil {
		return nil, err
	}
	out := make([]VMListEntry, 0, len(wire))
	for _, w := range wire {
		out = append(out, VMListEntry{VMID: int64(w.VMID), Name: string(w.Name), Status: string(w.Status), Lock: string(w.Lock), Tags: string(w.Tags)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VMID < out[j].VMID })
	return out, nil
}

// NextVMID asks PVE for the lowest free VM id.
//
//pve:operation GET /cluster/nextid
func (c *Client) NextVMID(ctx context.Context) (int64, error) {
	var id flexInt
	if err := c.Get(ctx, "/cluster/nextid", nil, &id); err != nil {
		return 0, err
	}
	return int64(id), nil
}

// CheckVMIDFree fails with PVE's "VM <id> already exists" when vmid is
// taken anywhere in the cluster.
//
//pve:operation GET /cluster/nextid
func (c *Client) CheckVMIDFree(ctx context.Context, vmid int64) error {
	p := Params{}
	p.SetInt("vmid", vmid)
	return c.Get(ctx, "/cluster/nextid", p, nil)
}

// FindVM returns the node that holds the VM's config, from the cluster's
// resource index; ErrNotFound when no node has it.
//
//pve:operation GET /cluster/resources
func (c *Client) FindVM(ctx context.Context, vmid int64) (string, error) {
	r, err := c.VMResource(ctx, vmid)
	if err != nil {
		return "", err
	}
	return r.Node, nil
}

// VMResource is the VM's row of the cluster's resource index: its node,
// config lock and HA state; ErrNotFound when no node has it.
//
//pve:operation GET /cluster/resources
func (c *Client) VMResource(ctx context.Context, vmid int64) (*ClusterResource, error) {
	rows, err := c.ClusterResources(ctx, "vm")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Type == "qemu" && r.VMID == vmid {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("VM %d: %w", vmid, ErrNotFound)
}

// IsVMMigrating reports PVE's "VM is locked (migrate)": a migration (one
// the HA manager runs, too) holds the VM, so the request did nothing and
// may be sent again once the VM arrived on its new node.
func IsVMMigrating(err error) bool {
	const msg = "VM is locked (migrate)"
	var ae *APIError
	if errors.As(err, &ae) {
		return strings.Contains(ae.Message, msg)
	}
	var te *TaskError
	return errors.As(err, &te) && strings.Contains(te.ExitStatus, msg)
}

// IsVMConfigMissing reports PVE's "Configuration file
// 'nodes/<node>/qemu-server/<vmid>.conf' does not exist", as a request or a
// task's failure: the VM is not (or no longer) on that node.
func IsVMConfigMissing(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	var te *TaskError
	return errors.As(err, &te) && strings.Contains(te.ExitStatus, "qemu-server/") && strings.Contains(te.ExitStatus, "does not exist")
}

// IsConfigLockTimeout reports PVE's "can't lock file '...' - got timeout"
// or cfs_lock's "cfs-lock '...' error: got lock request timeout", from a
// request or from a task whose worker failed to take its lock first (a VM's
// config, the disk-manage lock, ceph.conf for a monitor): the write did not
// happen and may be sent again.
func IsConfigLockTimeout(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.IsLockTimeout()
	}
	var te *TaskError
	return errors.As(err, &te) && (strings.Contains(te.ExitStatus, "can't lock file") && strings.Contains(te.ExitStatus, "got timeout") ||
		strings.Contains(te.ExitStatus, "cfs-lock '") && strings.Contains(te.ExitStatus, "got lock request timeout"))
}

// vmTaskLockAttempts bounds how often AwaitVMTask starts a task again
// after it failed on the config lock.
const vmTaskLockAttempts = 12

// AwaitVMTask starts a VM task with start and waits for it; when the task
// (or the request) failed on the VM's config lock, which means PVE did
// nothing, it starts it again after a jittered backoff. Other failures
// are returned as they are.
//
//pve:operation GET /nodes/{node}/tasks/{upid}/status
func (c *Client) AwaitVMTask(ctx context.Context, start func() (string, error)) (*TaskResult, error) {
	for attempt := 0; ; attempt++ {
		upid, err := start()
		if err == nil && upid == NoTask {
			return &TaskResult{ExitStatus: "OK"}, nil
		}
		res, err := c.Await(ctx, upid, err)
		if err == nil || !IsConfigLockTimeout(err) || attempt+1 >= vmTaskLockAttempts {
			return res, err
		}
		d := c.retry.Backoff(attempt)
		c.log("VM config lock busy, starting the task again", "attempt", attempt+2, "delay", d.String())
		if serr := sleepCtx(ctx, d); serr != nil {
			return nil, fmt.Errorf("%w (gave up retrying: %w)", err, serr)
		}
	}
}

// AwaitVMTaskOf is AwaitVMTask for a task of type typ on VM vmid whose
// lost answer is followed through its task or, when PVE provably did
// not act, sent again (StartTask). typ is PVE's worker type: qmstart,
// qmshutdown, qmstop, qmdestroy, qmigrate, qmconfig, qmmove, resize,
// qmreboot, joined with HA's (hastart, hastop, hamigrate) by "|" where an
// HA-managed VM's request goes through HA.
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) AwaitVMTaskOf(ctx context.Context, node, typ string, vmid int64, start func() (string, error)) (*TaskResult, error) {
	id := strconv.FormatInt(vmid, 10)
	return c.AwaitVMTask(ctx, func() (string, error) { return c.StartTask(ctx, node, typ, id, start) })
}
