package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// reply is one scripted answer of the fake Slack server.
type reply struct {
	status     int
	retryAfter string
	body       string // Web API JSON; empty means ok
}

// call is one request the fake Slack server received.
type call struct {
	path   string
	token  string // Web API form field "token"
	ts     string // chat.update's ts
	text   string
	blocks []map[string]any
	ok     bool // answered 200 ok
}

// fakeSlack is an httptest Slack: an incoming webhook at hookPath and the
// Web API under /api/. Scripted replies are used first, then success.
type fakeSlack struct {
	srv *httptest.Server

	mu      sync.Mutex
	script  []reply
	calls   []call
	nextTS  int
	changed chan struct{}
}

const hookPath = "/services/T000/B000/XXXX"

func newFakeSlack(t *testing.T, script ...reply) *fakeSlack {
	f := &fakeSlack{script: script, changed: make(chan struct{}, 1000)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSlack) hookURL() string { return f.srv.URL + hookPath }
func (f *fakeSlack) apiURL() string  { return f.srv.URL + "/api/" }

func (f *fakeSlack) serve(w http.ResponseWriter, r *http.Request) {
	c := call{path: r.URL.Path}
	switch {
	case r.URL.Path == hookPath:
		var msg struct {
			Text   string           `json:"text"`
			Blocks []map[string]any `json:"blocks"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		c.text, c.blocks = msg.Text, msg.Blocks
	case strings.HasPrefix(r.URL.Path, "/api/chat."):
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		c.token, c.ts, c.text = r.Form.Get("token"), r.Form.Get("ts"), r.Form.Get("text")
		if err := json.Unmarshal([]byte(r.Form.Get("blocks")), &c.blocks); err != nil {
			http.Error(w, "bad blocks", http.StatusBadRequest)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}

	f.mu.Lock()
	var rp reply
	if len(f.script) > 0 {
		rp, f.script = f.script[0], f.script[1:]
	}
	c.ok = rp.status == 0 && rp.body == ""
	ts := ""
	if c.ok && c.path == "/api/chat.postMessage" {
		f.nextTS++
		ts = fmt.Sprintf("1700000000.%06d", f.nextTS)
	}
	if c.path == "/api/chat.update" {
		ts = c.ts
	}
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	defer func() { f.changed <- struct{}{} }()

	if rp.retryAfter != "" {
		w.Header().Set("Retry-After", rp.retryAfter)
	}
	if rp.status != 0 {
		w.WriteHeader(rp.status)
		fmt.Fprint(w, "<html>error</html>")
		return
	}
	if c.path == hookPath {
		fmt.Fprint(w, "ok")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rp.body != "" {
		fmt.Fprint(w, rp.body)
		return
	}
	fmt.Fprintf(w, `{"ok":true,"channel":"C0ALERTS","ts":%q}`, ts)
}

func (f *fakeSlack) got() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// okCalls returns the calls answered with success.
func (f *fakeSlack) okCalls() []call {
	var out []call
	for _, c := range f.got() {
		if c.ok {
			out = append(out, c)
		}
	}
	return out
}

// sectionTexts returns the mrkdwn text of the section blocks of c.
func (c call) sectionTexts() []string {
	var out []string
	for _, b := range c.blocks {
		if b["type"] != "section" {
			continue
		}
		if t, ok := b["text"].(map[string]any); ok {
			out = append(out, fmt.Sprint(t["text"]))
		}
	}
	return out
}

// header returns the header block's text of c.
func (c call) header() string {
	for _, b := range c.blocks {
		if b["type"] == "header" {
			return fmt.Sprint(b["text"].(map[string]any)["text"])
		}
	}
	return ""
}

// allStrings returns every string in the blocks and the fallback text.
func (c call) allStrings() []string {
	out := []string{c.text}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, b := range c.blocks {
		walk(b)
	}
	return out
}
