package mm2config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testdata = "../../testdata/mm2/"

// testOptions maps /etc/mm2/... to testdata and serves a fixed environment.
func testOptions(env map[string]string) Options {
	return Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ReadFile: func(p string) ([]byte, error) {
			if rest, ok := strings.CutPrefix(p, "/etc/mm2/"); ok {
				p = filepath.Join(testdata, rest)
			}
			return os.ReadFile(p)
		},
	}
}

func mustParse(t *testing.T, text string, opts Options) *Config {
	t.Helper()
	c, err := Parse("mm2.properties", []byte(text), opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func flowNames(fs []*Flow) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.String())
	}
	return strings.Join(s, " ")
}

func TestExampleKafkaToLimited(t *testing.T) {
	c, err := Load(testdata+"kafka-to-limited.properties", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Clusters, ","); got != "kafka,vast" {
		t.Errorf("clusters %q", got)
	}
	if got := flowNames(c.Flows); got != "kafka->vast" {
		t.Errorf("flows %q", got)
	}
	// vast->kafka.enabled=false, but heartbeats are on: a heartbeat-only herder.
	if got := flowNames(c.Herders); got != "kafka->vast vast->kafka" {
		t.Errorf("herders %q", got)
	}
	f := c.Flow("kafka", "vast")
	if _, ok := f.Policy.(*IdentityPolicy); !ok {
		t.Fatalf("policy %T, want Identity", f.Policy)
	}
	if f.SyncTopicACLsEnabled || f.SyncTopicConfigsEnabled || !f.SyncGroupOffsetsEnabled {
		t.Errorf("sync flags acls=%v configs=%v groups=%v", f.SyncTopicACLsEnabled, f.SyncTopicConfigsEnabled, f.SyncGroupOffsetsEnabled)
	}
	for topic, want := range map[string]bool{"orders": true, "clicks": true, "other": false, "heartbeats": true, "vast.heartbeats": false, "__consumer_offsets": false} {
		if got := f.ShouldReplicateTopic(topic); got != want {
			t.Errorf("ShouldReplicateTopic(%q) = %v, want %v", topic, got, want)
		}
	}
	if got := f.TargetTopic("orders"); got != "orders" {
		t.Errorf("TargetTopic(orders) = %q", got)
	}
	if got := f.TargetTopic("heartbeats"); got != "kafka.heartbeats" {
		t.Errorf("TargetTopic(heartbeats) = %q", got)
	}
	if cl, n := f.OffsetSyncsTopic(); cl != "kafka" || n != "mm2-offset-syncs.vast.internal" {
		t.Errorf("offset-syncs on %s: %s", cl, n)
	}
	rev := c.Flow("vast", "kafka")
	if rev.Enabled || !rev.HeartbeatsEnabled || rev.ShouldReplicateTopic("orders") {
		t.Errorf("reverse herder enabled=%v heartbeats=%v", rev.Enabled, rev.HeartbeatsEnabled)
	}
	want := []InternalTopic{{"kafka", "mm2-configs.vast.internal", "connect-configs"}, {"kafka", "mm2-offsets.vast.internal", "connect-offsets"},
		{"kafka", "mm2-status.vast.internal", "connect-status"}, {"kafka", "heartbeats", "heartbeats"}}
	if got := rev.InternalTopics(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reverse internal topics %v, want %v", got, want)
	}
	vast, err := c.Client("vast")
	if err != nil {
		t.Fatal(err)
	}
	if got := vast.For(RoleProducer)["enable.idempotence"]; got != "false" {
		t.Errorf("vast producer enable.idempotence %q", got)
	}
	if _, ok := vast.For(RoleAdmin)["enable.idempotence"]; ok {
		t.Error("producer override leaked into admin settings")
	}
	if got := vast.BootstrapServers(); len(got) != 2 || got[1] != "broker-vip-2:9092" {
		t.Errorf("bootstrap %q", got)
	}
}

func TestExampleLimitedToKafka(t *testing.T) {
	c, err := Load(testdata+"limited-to-kafka.properties", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	f := c.Flow("vast", "kafka")
	if !f.Enabled || f.OffsetSyncsLocation != "target" {
		t.Fatalf("enabled=%v location=%q", f.Enabled, f.OffsetSyncsLocation)
	}
	if cl, n := f.OffsetSyncsTopic(); cl != "kafka" || n != "mm2-offset-syncs.vast.internal" {
		t.Errorf("offset-syncs on %s: %s", cl, n)
	}
	if got := f.TargetTopic("orders"); got != "vast.orders" || !f.ShouldReplicateTopic("orders") || f.ShouldReplicateTopic("orders2") {
		t.Errorf("TargetTopic %q", got)
	}
	// Cycle: a topic that came from kafka is not sent back.
	if f.ShouldReplicateTopic("kafka.orders") || !f.IsCycle("kafka.orders") {
		t.Error("kafka.orders should be a cycle on vast->kafka")
	}
	if v, line, ok := f.Get("topics"); !ok || v != "orders" || line != 8 {
		t.Errorf("Get(topics) = %q line %d", v, line)
	}
	if v, line, ok := f.Get("refresh.topics.interval.seconds"); !ok || v != "600" || line != 0 {
		t.Errorf("default refresh = %q line %d", v, line)
	}
	if f.RefreshTopicsInterval != 10*time.Minute || f.HeartbeatInterval != time.Second || f.CheckpointInterval != time.Minute {
		t.Errorf("intervals %v %v %v", f.RefreshTopicsInterval, f.HeartbeatInterval, f.CheckpointInterval)
	}
}

func TestThreeClustersPrecedence(t *testing.T) {
	c, err := Load(testdata+"three-clusters.properties", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Clusters, ","); got != "east,west,backup" {
		t.Errorf("clusters (with continuation) %q", got)
	}
	if got := flowNames(c.Herders); got != "east->west east->backup west->east" {
		t.Errorf("herders %q", got)
	}
	east, _ := c.Client("east")
	backup, _ := c.Client("backup")
	checks := []struct{ name, got, want string }{
		{"east security.protocol (alias beats top level)", east.Props["security.protocol"], "PLAINTEXT"},
		{"east sasl.mechanism (top-level default)", east.Props["sasl.mechanism"], "SCRAM-SHA-512"},
		{"backup producer security.protocol (role beats all)", backup.For(RoleProducer)["security.protocol"], "SSL"},
		{"backup admin security.protocol", backup.For(RoleAdmin)["security.protocol"], "SASL_PLAINTEXT"},
		{"backup bootstrap (whitespace separator)", backup.Props["bootstrap.servers"], "backup-1:9092"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: %q, want %q", ck.name, ck.got, ck.want)
		}
	}

	ew := c.Flow("east", "west")
	if ew.RefreshTopicsInterval != time.Minute || c.Flow("west", "east").RefreshTopicsInterval != 5*time.Minute {
		t.Error("per-flow refresh.topics.interval.seconds did not beat the top level")
	}
	if ew.HeartbeatInterval != 5*time.Second {
		t.Errorf("heartbeat interval %v", ew.HeartbeatInterval)
	}
	// topics.exclude (top level) wins over the flow's 3.9 alias topics.blacklist.
	if ew.Topics.Exclude.Key != "topics.exclude" || !ew.Topics.Exclude.Matches("test-x") {
		t.Errorf("exclude came from %q", ew.Topics.Exclude.Key)
	}
	for topic, want := range map[string]bool{"orders": true, "payments": true, "orders.tmp": false, "test-orders": false, "other": false} {
		if got := ew.ShouldReplicateTopic(topic); got != want {
			t.Errorf("east->west ShouldReplicateTopic(%q) = %v", topic, got)
		}
	}
	if got := ew.TargetTopic("orders"); got != "east_orders" {
		t.Errorf("custom separator: %q", got)
	}
	if got := ew.CheckpointsTopic(); got != "east_checkpoints_internal" {
		t.Errorf("checkpoints %q", got)
	}
	if cl, n := ew.OffsetSyncsTopic(); cl != "west" || n != "mm2-offset-syncs_east_internal" {
		t.Errorf("offset-syncs %s %s", cl, n)
	}
	eb := c.Flow("east", "backup")
	if got := eb.CheckpointsTopic(); got != "east.checkpoints.internal" {
		t.Errorf("internal separator disabled: %q", got)
	}
	if eb.HeartbeatsEnabled || eb.OffsetsTopic != "mm2-offsets-backup" || eb.ConfigsTopic != "mm2-configs.east.internal" || eb.GroupID != "east-mm2" {
		t.Errorf("east->backup hb=%v offsets=%q configs=%q group=%q", eb.HeartbeatsEnabled, eb.OffsetsTopic, eb.ConfigsTopic, eb.GroupID)
	}
	for g, want := range map[string]bool{"billing": true, "audit-42": true, "audit-x": false, "connect-x": false} {
		if got := eb.ShouldReplicateGroup(g); got != want {
			t.Errorf("ShouldReplicateGroup(%q) = %v", g, got)
		}
	}
	if !hasWarning(c, 24, "topics.blacklist was removed in Kafka 4.0") {
		t.Errorf("no removal warning: %v", c.Warnings)
	}
}

func hasWarning(c *Config, line int, substr string) bool {
	for _, w := range c.Warnings {
		if w.Line == line && strings.Contains(w.Message, substr) {
			return true
		}
	}
	return false
}

func TestHerders(t *testing.T) {
	for _, tc := range []struct{ name, text, herders, flows string }{
		{"defaults: every pair gets a heartbeat herder", "clusters=A,B,C\nA->B.enabled=true\n", "A->B A->C B->A B->C C->A C->B", "A->B"},
		{"global heartbeats off", "clusters=A,B\nA->B.enabled=true\nemit.heartbeats.enabled=false\n", "A->B", "A->B"},
		{"pair heartbeats back on", "clusters=A,B\nemit.heartbeats.enabled=false\nB->A.emit.heartbeats.enabled=true\n", "B->A", ""},
		{"enabled is Boolean.parseBoolean", "clusters=A,B\nemit.heartbeats.enabled=false\nA->B.enabled=TRUE\nB->A.enabled=yes\n", "A->B", "A->B"},
		{"duplicate alias", "clusters=A, B, A\nemit.heartbeats.enabled=false\nA->B.enabled=true\n", "A->B", "A->B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.text + "A.bootstrap.servers=a:9092\nB.bootstrap.servers=b:9092\nC.bootstrap.servers=c:9092\n"
			c := mustParse(t, text, testOptions(nil))
			if got := flowNames(c.Herders); got != tc.herders {
				t.Errorf("herders %q, want %q", got, tc.herders)
			}
			if got := flowNames(c.Flows); got != tc.flows {
				t.Errorf("flows %q, want %q", got, tc.flows)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	c, err := Load(testdata+"sasl-ssl.properties", testOptions(map[string]string{"MM2_ADMIN_TIMEOUT": "15000"}))
	if err != nil {
		t.Fatal(err)
	}
	vast, err := c.Client("vast")
	if err != nil {
		t.Fatal(err)
	}
	jaas := vast.Props["sasl.jaas.config"]
	if !strings.Contains(jaas, `username="mirror"`) || !strings.Contains(jaas, `password="CANARY-jaas-9f3b";`) {
		t.Errorf("jaas not resolved: %s", RedactValue("sasl.jaas.config", jaas))
	}
	if vast.Props["ssl.truststore.password"] != "CANARY-trust-77aa" {
		t.Error("truststore password not resolved")
	}
	if vast.For(RoleAdmin)["request.timeout.ms"] != "15000" {
		t.Errorf("env placeholder: %q", vast.For(RoleAdmin)["request.timeout.ms"])
	}
	// Entries keep the raw text.
	for _, e := range c.Entries() {
		if e.Key == "vast.ssl.truststore.password" && (e.Line != 18 || !strings.HasPrefix(e.Value, "${file:")) {
			t.Errorf("entry %+v", e)
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "password"), []byte("dir-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := "clusters=A\nA.bootstrap.servers=a:9092\n"
	c = mustParse(t, base+"config.providers=directory\nconfig.providers.directory.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider\nA.ssl.key.password=${directory:"+dir+":password}\n", testOptions(nil))
	if v, _, _ := c.Value("A.ssl.key.password"); v != "dir-secret" {
		t.Errorf("directory provider gave %q", v)
	}

	// No config.providers: resolved leniently, with a warning.
	c = mustParse(t, base+"A.sasl.mechanism=${env:MECH}\n", testOptions(map[string]string{"MECH": "PLAIN"}))
	if v, _, _ := c.Value("A.sasl.mechanism"); v != "PLAIN" || !hasWarning(c, 3, "config.providers is not set") {
		t.Errorf("lenient env: %q %v", v, c.Warnings)
	}
	// Declared providers only: env is not declared, so it stays as written.
	c = mustParse(t, base+"config.providers=file\nconfig.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\nA.sasl.mechanism=${env:MECH}\n", testOptions(map[string]string{"MECH": "PLAIN"}))
	if v, _, _ := c.Value("A.sasl.mechanism"); v != "${env:MECH}" || !hasWarning(c, 5, "does not declare") {
		t.Errorf("undeclared provider: %q %v", v, c.Warnings)
	}

	for _, tc := range []struct{ name, line, want string }{
		{"missing file", "A.ssl.truststore.password=${file:/nonexistent/s.properties:pw}", `mm2.properties:3: key "A.ssl.truststore.password": placeholder ${file:/nonexistent/s.properties:pw}: reading properties file:`},
		{"missing key", "A.ssl.truststore.password=${file:/etc/mm2/secrets.properties:nope}", `mm2.properties:3: key "A.ssl.truststore.password": placeholder ${file:/etc/mm2/secrets.properties:nope}: /etc/mm2/secrets.properties: key not found`},
		{"missing env", "A.ssl.truststore.password=${env:NOPE}", `mm2.properties:3: key "A.ssl.truststore.password": placeholder ${env:NOPE}: environment variable not set`},
		{"missing directory entry", "A.ssl.truststore.password=${directory:" + dir + ":nope}", `placeholder ${directory:` + dir + `:nope}: reading directory entry:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("mm2.properties", []byte(base+tc.line+"\n"), testOptions(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Line != 3 {
				t.Errorf("not an *Error at line 3: %#v", err)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.properties"), Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unreadable file: %v", err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"malformed escape", "clusters=A\nA.bootstrap.servers=\\u00zz\n", `mm2.properties:2: malformed properties: malformed \uXXXX escape`},
		{"separator without key", "clusters=A\n= x\n", "mm2.properties:2: malformed properties: line starts with a separator"},
		{"no clusters", "A.bootstrap.servers=a:9092\n", `mm2.properties: key "clusters": required key is missing`},
		{"bad regex", "clusters=kafka,vast\nkafka.bootstrap.servers=k:1\nvast.bootstrap.servers=v:1\n\nkafka->vast.enabled=true\nkafka->vast.topics=a(b\n",
			`mm2.properties:6: key "kafka->vast.topics": regex "a(b" does not compile: missing closing )`},
		{"lookahead", "clusters=A,B\nA->B.enabled=true\ngroups=(?!test.*\n", `mm2.properties:3: key "groups": regex "(?!test.*" does not compile: missing closing )`},
		{"comma inside a quantifier", "clusters=A,B\nA->B.enabled=true\nA->B.topics=a{1,3}\n", `mm2.properties:3: key "A->B.topics": regex "a{1|3}" does not compile: illegal repetition`},
		{"bad boolean", "clusters=A,B\nA->B.enabled=true\nA->B.sync.topic.acls.enabled=no\n", `mm2.properties:3: key "A->B.sync.topic.acls.enabled": expected true or false, got "no"`},
		{"bad location", "clusters=A,B\noffset-syncs.topic.location=middle\n", `mm2.properties:2: key "offset-syncs.topic.location": must be source or target`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("mm2.properties", []byte(tc.text), testOptions(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}

	// A regex error in a disabled (heartbeat-only) flow is only a warning.
	c := mustParse(t, "clusters=A,B\nB->A.topics=a(b\nA.bootstrap.servers=a:1\nB.bootstrap.servers=b:1\n", testOptions(nil))
	if !hasWarning(c, 2, "never compiles it") {
		t.Errorf("warnings %v", c.Warnings)
	}

	// An alias without bootstrap.servers: Client fails, Parse warns.
	c = mustParse(t, "clusters=A,B\nA.bootstrap.servers=a:1\nA->B.enabled=true\n", testOptions(nil))
	_, err = c.Client("B")
	if err == nil || err.Error() != `mm2.properties:1: key "clusters": cluster "B" has no bootstrap.servers (expected "B.bootstrap.servers")` {
		t.Errorf("Client(B): %v", err)
	}
	if _, err := c.Client("Z"); err == nil {
		t.Error("Client(Z) of an unknown alias succeeded")
	}
	// B is used by an enabled flow: Client's error says it, once.
	if hasWarning(c, 1, `cluster "B" has no bootstrap.servers`) {
		t.Errorf("warned as well as failing Client: %v", c.Warnings)
	}
	// Set but empty: the error points at that line.
	c = mustParse(t, "clusters=A,B\nA.bootstrap.servers=a:1\nB.bootstrap.servers = \nA->B.enabled=true\n", testOptions(nil))
	if _, err := c.Client("B"); err == nil || err.Error() != `mm2.properties:3: key "B.bootstrap.servers": cluster "B" has an empty bootstrap.servers` {
		t.Errorf("Client(B) with an empty value: %v", err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %v", c.Warnings)
	}
	// A heartbeat-only herder's alias is never connected to: a warning.
	c = mustParse(t, "clusters=A,B\nA.bootstrap.servers=a:1\nA->B.enabled=false\n", testOptions(nil))
	if !hasWarning(c, 1, `cluster "B" has no bootstrap.servers`) {
		t.Errorf("heartbeat-only alias: warnings %v", c.Warnings)
	}
}

func TestCustomPolicy(t *testing.T) {
	text := "clusters=A,B\nA->B.enabled=true\nreplication.policy.class=com.example.PrefixPolicy\n"
	c := mustParse(t, text, testOptions(nil))
	f := c.Flow("A", "B")
	if f.TargetTopic("t") != "A.t" || !hasWarning(c, 3, "assuming DefaultReplicationPolicy") {
		t.Errorf("custom without template: %q %v", f.TargetTopic("t"), c.Warnings)
	}
	opts := testOptions(nil)
	opts.TargetTopicTemplate = "{topic}.from-{source}"
	c = mustParse(t, text, opts)
	f = c.Flow("A", "B")
	if got := f.TargetTopic("t"); got != "t.from-A" {
		t.Errorf("template: %q", got)
	}
	if f.Policy.TopicSource("t.from-B") != "B" || !f.IsCycle("t.from-B") || f.Policy.UpstreamTopic("x.y.from-A") != "x.y" {
		t.Error("template parse-back")
	}
	opts.TargetTopicTemplate = "{source}"
	if _, err := Parse("mm2.properties", []byte(text), opts); err == nil {
		t.Error("template without {topic} accepted")
	}
}

// TestRedactionCanary proves that a password written in the file, or
// resolved from a secrets file, never shows up in String, %v, %#v, slog
// output, Redacted, warnings or errors.
func TestRedactionCanary(t *testing.T) {
	const plain = "CANARY-plain-5e1d"
	text := "clusters=A,B\nA->B.enabled=true\nA.bootstrap.servers=a:1\nB.bootstrap.servers=b:1\n" +
		"A.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"" + plain + "\";\n" +
		"B.ssl.keystore.password=" + plain + "\n" +
		"B.producer.basic.auth.user.info=u:" + plain + "\n" +
		"B.consumer.sasl.oauthbearer.client.credentials.client.secret=" + plain + "\n" +
		"A.ssl.truststore.password=${file:/etc/mm2/secrets.properties:truststore.password}\n" +
		"B.sasl.jaas.config=x required clientSecret=${file:/etc/mm2/secrets.properties:vast.password};\n" +
		"A->B.topics=(?=" + plain + "\n" // a bad regex, so that Parse fails
	canaries := []string{plain, "CANARY-trust-77aa", "CANARY-jaas-9f3b"}
	check := func(what, s string) {
		t.Helper()
		for _, cn := range canaries {
			if strings.Contains(s, cn) {
				t.Errorf("%s leaks %s: %s", what, cn, s)
			}
		}
	}
	_, err := Parse("mm2.properties", []byte(text), testOptions(nil))
	if err == nil {
		t.Fatal("expected the regex error")
	}
	// The regex itself is not a secret and is quoted; only the keys above hold secrets.
	canaries = canaries[1:]
	check("error", err.Error())
	canaries = append(canaries, plain)

	c := mustParse(t, strings.Replace(text, "A->B.topics=(?="+plain+"\n", "", 1), testOptions(nil))
	for _, a := range c.Clusters {
		cs, err := c.Client(a)
		if err != nil {
			t.Fatal(err)
		}
		var logged strings.Builder
		slog.New(slog.NewTextHandler(&logged, nil)).Info("client", "settings", cs)
		check("String", cs.String())
		check("%v", fmt.Sprintf("%v %+v %#v %s", cs, cs, cs, cs))
		check("slog", logged.String())
		check("Redacted", fmt.Sprint(cs.Redacted()))
		if a == "A" && !strings.Contains(cs.String(), `username="u" password="[redacted]"`) {
			t.Errorf("jaas redaction lost the structure: %s", cs)
		}
	}
	for _, w := range c.Warnings {
		check("warning", w.String())
	}
	for _, e := range c.Entries() {
		check("redacted entry", RedactValue(e.Key, e.Value))
	}
	// The unresolved placeholder in Entries names no secret either.
	_, err = Parse("mm2.properties", []byte(text+"B.ssl.key.password=${file:/etc/mm2/secrets.properties:absent}\n"), testOptions(nil))
	canaries = canaries[1:]
	check("placeholder error", err.Error())
}
