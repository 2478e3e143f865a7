package mm2config

import (
	"fmt"
	"strings"
	"testing"
)

func TestJavaSplit(t *testing.T) {
	for _, tc := range []struct {
		in, sep string
		want    []string
	}{
		{"a.b.c", ".", []string{"a", "b", "c"}},
		{"foo.", ".", []string{"foo"}},
		{".foo", ".", []string{"", "foo"}},
		{"a..b", ".", []string{"a", "", "b"}},
		{".", ".", []string{}},
		{"", ".", []string{""}},
		{"plain", ".", []string{"plain"}},
		{"a__b", "__", []string{"a", "b"}},
		{"abc", "", []string{"a", "b", "c"}},
	} {
		if got := javaSplit(tc.in, tc.sep); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("split(%q, %q) = %q, want %q", tc.in, tc.sep, got, tc.want)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	d := NewDefaultPolicy()
	for _, tc := range []struct{ topic, source, upstream, original string }{
		{"A.orders", "A", "orders", "orders"},
		{"B.A.orders", "B", "A.orders", "orders"},
		{"orders", "", "", "orders"},
		{"foo.", "", "", "foo."},   // trailing empty string dropped: not remote
		{".foo", "", "foo", "foo"}, // empty alias, still remote
		{"a..b", "a", ".b", "b"},   // a -> .b -> b
		{"A.my.topic", "A", "my.topic", "topic"},
	} {
		if got := d.TopicSource(tc.topic); got != tc.source {
			t.Errorf("TopicSource(%q) = %q, want %q", tc.topic, got, tc.source)
		}
		if got := d.UpstreamTopic(tc.topic); got != tc.upstream {
			t.Errorf("UpstreamTopic(%q) = %q, want %q", tc.topic, got, tc.upstream)
		}
		if got := d.OriginalTopic(tc.topic); got != tc.original {
			t.Errorf("OriginalTopic(%q) = %q, want %q", tc.topic, got, tc.original)
		}
	}
	if d.FormatRemoteTopic("A", "t") != "A.t" || d.CheckpointsTopic("A") != "A.checkpoints.internal" ||
		d.OffsetSyncsTopic("B") != "mm2-offset-syncs.B.internal" || d.HeartbeatsTopic() != "heartbeats" {
		t.Error("default names")
	}
	for topic, want := range map[string]bool{"heartbeats": true, "A.heartbeats": true, "B.A.heartbeats": true, "app-heartbeats": false, "heartbeats.x": false} {
		if got := d.IsHeartbeatsTopic(topic); got != want {
			t.Errorf("IsHeartbeatsTopic(%q) = %v", topic, got)
		}
	}
	for topic, want := range map[string]bool{"__consumer_offsets": true, ".hidden": true, "x-internal": true, "mm2-configs.A.internal": true, "orders": false, "internal": false} {
		if got := d.IsInternalTopic(topic); got != want {
			t.Errorf("IsInternalTopic(%q) = %v", topic, got)
		}
	}

	custom := &DefaultPolicy{Separator: "__", InternalSeparator: true}
	if custom.FormatRemoteTopic("A", "t") != "A__t" || custom.TopicSource("A__b__t") != "A" || custom.UpstreamTopic("A__b__t") != "b__t" {
		t.Error("custom separator")
	}
	if custom.CheckpointsTopic("A") != "A__checkpoints__internal" || custom.OffsetSyncsTopic("B") != "mm2-offset-syncs__B__internal" ||
		!custom.IsInternalTopic("x__internal") || !custom.IsCheckpointsTopic("A__checkpoints__internal") {
		t.Error("custom internal names")
	}
	custom.InternalSeparator = false
	if custom.CheckpointsTopic("A") != "A.checkpoints.internal" || custom.OffsetSyncsTopic("B") != "mm2-offset-syncs.B.internal" {
		t.Error("internal separator disabled")
	}
}

func TestIdentityPolicy(t *testing.T) {
	p := &IdentityPolicy{DefaultPolicy: *NewDefaultPolicy(), SourceClusterAlias: "A"}
	for _, tc := range []struct{ topic, remote, source, upstream string }{
		{"orders", "orders", "A", "orders"},
		{"heartbeats", "A.heartbeats", "", ""},
		{"B.heartbeats", "A.B.heartbeats", "B", "heartbeats"},
		// The quirk: any name ending in "heartbeats" is prefixed.
		{"app-heartbeats", "A.app-heartbeats", "", ""},
	} {
		if got := p.FormatRemoteTopic("A", tc.topic); got != tc.remote {
			t.Errorf("FormatRemoteTopic(%q) = %q, want %q", tc.topic, got, tc.remote)
		}
		if got := p.TopicSource(tc.topic); got != tc.source {
			t.Errorf("TopicSource(%q) = %q, want %q", tc.topic, got, tc.source)
		}
		if got := p.UpstreamTopic(tc.topic); got != tc.upstream {
			t.Errorf("UpstreamTopic(%q) = %q, want %q", tc.topic, got, tc.upstream)
		}
	}
	if !p.IsHeartbeatsTopic("B.heartbeats") || p.IsHeartbeatsTopic("app-heartbeats") || p.OriginalTopic("orders") != "orders" {
		t.Error("identity heartbeats")
	}

	// Identity both ways: MM2 cannot see the cycle.
	c := mustParse(t, "clusters=A,B\nA->B.enabled=true\nB->A.enabled=true\nreplication.policy.class = "+IdentityPolicyClass+"\n", testOptions(nil))
	ab := c.Flow("A", "B")
	if !ab.ShouldReplicateTopic("orders") || ab.IsCycle("orders") {
		t.Error("identity flow should replicate orders with no cycle detected")
	}
	if ab.ShouldReplicateTopic("B.heartbeats") {
		t.Error("B.heartbeats came from the target and must not go back")
	}
}

func TestHeartbeatsReplication(t *testing.T) {
	base := "clusters=A,B\nA->B.enabled=true\nA->B.topics=orders\n"
	f := mustParse(t, base, testOptions(nil)).Flow("A", "B")
	if !f.ShouldReplicateTopic("heartbeats") || !f.ShouldReplicateTopic("C.heartbeats") || f.ShouldReplicateTopic("B.heartbeats") {
		t.Error("heartbeats must pass the filter (3.9), except from the target")
	}
	f = mustParse(t, base+"A->B.heartbeats.replication.enabled=false\n", testOptions(nil)).Flow("A", "B")
	if f.ShouldReplicateTopic("heartbeats") {
		t.Error("heartbeats.replication.enabled=false ignored")
	}
}

func TestTemplatePolicy(t *testing.T) {
	p, err := NewTemplatePolicy("{topic}", "A", *NewDefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if p.FormatRemoteTopic("A", "t") != "t" || p.TopicSource("t") != "A" || p.UpstreamTopic("t") != "t" || p.OriginalTopic("t") != "t" {
		t.Error("identity-like template")
	}
	for _, bad := range []string{"", "{source}", "{topic}{topic}", "{source}{source}{topic}"} {
		if _, err := NewTemplatePolicy(bad, "A", *NewDefaultPolicy()); err == nil || !strings.Contains(err.Error(), "template") {
			t.Errorf("template %q accepted", bad)
		}
	}
}
