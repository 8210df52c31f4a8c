package pve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PVE's JSON is loosely typed: the same field can arrive as a number in one
// endpoint (or version) and a string in another ("vlan-id":"2", "netmask":"24"),
// flags come as 1/0, and absent values as null. These decoders accept all of
// those so one odd field cannot break a whole read.

// flexString accepts a string, a number (kept as its literal text), a
// boolean, or null ("").
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*f = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("expected a string or number, got %s", b)
	default:
		*f = flexString(b)
	}
	return nil
}

// flexInt accepts a number, a numeric string, "" or null (0).
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	t := strings.TrimSpace(string(s))
	switch t {
	case "", "null":
		*f = 0
		return nil
	case "true":
		*f = 1
		return nil
	case "false":
		*f = 0
		return nil
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		*f = flexInt(n)
		return nil
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("expected an integer, got %s", b)
	}
	*f = flexInt(int64(x))
	return nil
}

// flexBool accepts true/false, 1/0, "1"/"0", "yes"/"no", "on"/"off" and null
// (false).
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(string(s))) {
	case "", "0", "false", "no", "off":
		*f = false
	case "1", "true", "yes", "on":
		*f = true
	default:
		n, err := strconv.ParseFloat(string(s), 64)
		if err != nil {
			return fmt.Errorf("expected a boolean, got %s", b)
		}
		*f = n != 0
	}
	return nil
}
