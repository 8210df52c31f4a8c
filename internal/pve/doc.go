// Package pve is a small, dependency-free client for the Proxmox VE HTTP API
// (https://HOST:8006/api2/json).
//
// It exists instead of an off-the-shelf library because the provider needs
// PVE's quirks handled exactly once and correctly:
//
//   - errors are typed (*APIError, *ConnectError, *TLSError) and PVE's many
//     "does not exist" answers map to ErrNotFound, so resources can drop out
//     of state;
//   - writes are never blindly retried (a re-POST could create twice); only
//     PVE lock timeouts and connections that never got established are;
//   - tasks that end in "WARNINGS: n" count as successes, failed tasks turn
//     into *TaskError, and waiting honours the context;
//   - booleans go out as 0/1 and lenient decoders accept PVE's mixed
//     string/number/flag JSON.
//
// Every method that maps to an API call carries a `//pve:operation METHOD
// /path` annotation, which the simulator's coverage test parses.
package pve
