package pvesim

import (
	"encoding/json"
	"sort"
	"strconv"
)

// marshalResponse is json.Marshal(v), byte for byte, faster for what
// handlers return: maps of string keys, slices, strings, ints and bools
// are written directly (json.Marshal reflects over every value of every
// /cluster/resources row); anything else, and any string that needs
// escaping, goes through json.Marshal itself.
func marshalResponse(v any) ([]byte, error) {
	return appendJSON(make([]byte, 0, 512), v)
}

func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x)
	case bool:
		if x {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case map[string]any:
		return appendJSONObject(b, x, appendJSON)
	case map[string]string:
		return appendJSONObject(b, x, appendJSONString)
	case []map[string]any:
		return appendJSONArray(b, x, func(b []byte, e map[string]any) ([]byte, error) { return appendJSON(b, e) })
	case []any:
		return appendJSONArray(b, x, appendJSON)
	case []string:
		return appendJSONArray(b, x, appendJSONString)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// appendJSONString writes plain printable ASCII as it is; json.Marshal
// escapes the rest (control characters, quotes, backslashes, <, >, &,
// invalid UTF-8, U+2028/9).
func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(b, enc...), nil
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// appendJSONArray encodes a slice as json.Marshal does (nil is null).
func appendJSONArray[T any](b []byte, xs []T, elem func([]byte, T) ([]byte, error)) ([]byte, error) {
	if xs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, e := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = elem(b, e); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendJSONObject encodes a map as json.Marshal does: keys sorted, nil is
// null.
func appendJSONObject[T any](b []byte, m map[string]T, elem func([]byte, T) ([]byte, error)) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, k); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = elem(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
