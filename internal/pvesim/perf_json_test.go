package pvesim

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"testing"
)

type jsonProbe struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

// marshalResponse writes the bytes json.Marshal writes, for the values
// it writes itself and for those it hands to json.Marshal.
func TestMarshalResponseIsJSONMarshal(t *testing.T) {
	var nilMap map[string]any
	var nilRows []map[string]any
	var nilList []string
	values := []any{
		nil, "", "plain", `q"uote`, `back\slash`, "<b>&amp;</b>", "tab\there\nnl\r\b\f\x01\x1f\x7f",
		"\u2028\u2029", "bad\xffutf8", "ünïcode ✓", 0, -1, int64(math.MaxInt64), int32(-5), uint64(math.MaxUint64),
		true, false, 0.5, 1e21, 1e-7, 3.0, float32(0.1), json.Number("12"),
		nilMap, nilRows, nilList, []any{}, []any{nil, 1, "x", []string{"a"}},
		map[string]any{"z": 1, "a": map[string]any{"y": nil, "b": []map[string]any{{"k": "v"}}}, "<": "&"},
		map[string]string{"b": "2", "a": "1", "é": "\n"},
		[]map[string]any{{"id": "qemu/100", "maxmem": int64(8 << 30)}, nil},
		jsonProbe{A: 1}, &jsonProbe{B: "x"}, map[string]int{"b": 2, "a": 1}, []int{3, 2},
		json.RawMessage(`{ "a" : 1 }`),
	}
	for _, v := range values {
		env := map[string]any{"data": v, "total": 2}
		want, werr := json.Marshal(env)
		got, gerr := marshalResponse(env)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%#v:\n got %s (%v)\nwant %s (%v)", v, got, gerr, want, werr)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"c": make(chan int)}} {
		_, werr := json.Marshal(map[string]any{"data": bad})
		_, gerr := marshalResponse(map[string]any{"data": bad})
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Errorf("%v: error %v, want %v", bad, gerr, werr)
		}
	}
}

// Every answer of a plan of the lab encodes as json.Marshal encodes it.
func TestMarshalResponseOnLabAnswers(t *testing.T) {
	l, reqs := planLab(t, 3)
	s := l.s
	for _, r := range reqs {
		q, _ := url.ParseQuery(r.query)
		params := map[string]string{}
		for k, v := range q {
			params[k] = v[0]
		}
		rt, vars := s.findRoute(r.path)
		if rt == nil || rt.methods["GET"] == nil {
			t.Fatalf("no route for %s", r.path)
		}
		for k, v := range vars {
			params[k] = v
		}
		c := &call{s: s, listener: r.node, method: "GET", path: r.path, params: params, user: "root@pam"}
		s.mu.Lock()
		res, herr := s.dispatch(c, rt, rt.methods["GET"])
		var want, got []byte
		var werr, gerr error
		if herr == nil {
			env := map[string]any{"data": res}
			for k, v := range c.extra {
				env[k] = v
			}
			want, werr = json.Marshal(env)
			got, gerr = marshalResponse(env)
		}
		s.mu.Unlock()
		if herr != nil {
			t.Fatalf("GET %s: %v", r.path, herr.Message)
		}
		if werr != nil || gerr != nil || !bytes.Equal(got, want) {
			t.Errorf("GET %s:\n got %s (%v)\nwant %s (%v)", r.path, got, gerr, want, werr)
		}
	}
}
