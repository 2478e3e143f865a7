package logrules

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
)

// containsAll is the reference for litMatcher.scan: the literals of lits that
// occur in text, one strings.Contains each.
func containsAll(lits []string, text string) litSet {
	var s litSet
	for i, l := range lits {
		if strings.Contains(text, l) {
			s.add(i)
		}
	}
	return s
}

// literalSets are the literal lists the matcher is tested with: those of the
// Engine's plans, and small ones with the awkward cases (empty and short
// literals, literals inside others, shared four-byte windows, bytes ≥ 0x80).
func literalSets(t testing.TB) [][]string {
	t.Helper()
	e := New(Options{})
	var sets [][]string
	for i := range e.plans {
		if m := e.plans[i].m; m != nil {
			sets = append(sets, m.lits)
		}
	}
	return append(sets,
		[]string{"", "ab", "abab", "bab", "aaaa", "aaaab", "abcdefgh"},
		[]string{"topic", "topic-partitions", "pic-p", " took ", "took", "ö→ü"},
		[]string{"xyzzy"},
	)
}

// texts returns test texts for lits: random mixes of literal pieces, noise
// from a small alphabet (many near misses) and the literals at the very start
// and end.
func texts(lits []string, rnd *rand.Rand) []string {
	out := []string{"", "a", "abc"}
	for _, l := range lits {
		out = append(out, l, "x"+l, l+"x", l[:len(l)/2], strings.Repeat(l, 3))
	}
	const alphabet = "ab pt-oksiw\xc3\xb6"
	for n := 0; n < 400; n++ {
		var b strings.Builder
		for b.Len() < rnd.IntN(200) {
			switch rnd.IntN(3) {
			case 0:
				if l := lits[rnd.IntN(len(lits))]; l != "" {
					i, j := rnd.IntN(len(l)), rnd.IntN(len(l)+1)
					if rnd.IntN(2) == 0 {
						i, j = 0, len(l)
					}
					if i <= j {
						b.WriteString(l[i:j])
					}
				}
			default:
				b.WriteByte(alphabet[rnd.IntN(len(alphabet))])
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestLitMatcherAgreesWithContains: one pass of the matcher finds exactly the
// literals strings.Contains finds, whatever the text.
func TestLitMatcherAgreesWithContains(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	for _, lits := range literalSets(t) {
		m, err := newLitMatcher(lits)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts(lits, rnd) {
			var got litSet
			m.scan(text, &got)
			if want := containsAll(lits, text); got != want {
				for i, l := range lits {
					if got.has(i) != want.has(i) {
						t.Errorf("text %q: literal %q found=%v, strings.Contains says %v", text, l, got.has(i), want.has(i))
					}
				}
			}
		}
	}
}

func TestLitMatcherLimits(t *testing.T) {
	lits := make([]string, maxLiterals+1)
	for i := range lits {
		lits[i] = strings.Repeat("x", i+1)
	}
	if _, err := newLitMatcher(lits); err == nil {
		t.Errorf("%d literals accepted", len(lits))
	}
	if _, err := newLitMatcher(lits[:maxLiterals]); err != nil {
		t.Errorf("%d literals: %v", maxLiterals, err)
	}
}

func FuzzLitMatcher(f *testing.F) {
	e := New(Options{})
	m := e.plans[planAny].m
	for _, l := range m.lits {
		f.Add("[x] " + l + " y")
	}
	f.Add("Could not create topic-partitions for orders. took ")
	f.Fuzz(func(t *testing.T, text string) {
		var got litSet
		m.scan(text, &got)
		if want := containsAll(m.lits, text); got != want {
			t.Errorf("text %q: matcher and strings.Contains disagree", text)
		}
	})
}

// pickLinear is the reference for Engine.pick: every row of the table tried
// in order with strings.Contains, the way the rule table reads.
func pickLinear(e *Engine, rec *watcher.Record) (*Rule, []int, map[string]string) {
	lv := levelOf(rec.Level)
	known := lv != 0
	if !known {
		lv = lvAll
	}
	msg := rec.Message
	for i := range e.rows {
		r := &e.rows[i]
		if r.Cause || r.levels&lv == 0 || !strings.Contains(msg, r.Prefilter) {
			continue
		}
		if r.Logger != "" && rec.Logger != "" && !strings.HasSuffix(rec.Logger, r.Logger) {
			continue
		}
		var m []int
		if r.re != nil {
			if m = r.re.FindStringSubmatchIndex(msg); m == nil {
				continue
			}
		}
		return r, m, nil
	}
	if lv&(lvWarn|lvError) != 0 && (known || len(rec.Stack) > 0) {
		for _, c := range e.causes {
			if !c.standalone || c.levels&lv == 0 {
				continue
			}
			if _, ok := findInException(msg, rec.Stack, c.Prefilter); !ok {
				continue
			}
			if g, ok := causeMatch(c, rec.Message, rec.Stack); ok {
				return c, nil, g
			}
		}
	}
	return nil, nil, nil
}

// TestPickMatchesTableOrder: the prefiltered pick chooses the same row, with
// the same match, as trying the whole table in order, for every record of the
// fixtures and for synthetic records that carry each row's prefilter (often
// several, so that first-match-wins is exercised) at every level, with and
// without logger and stack.
func TestPickMatchesTableOrder(t *testing.T) {
	e := New(Options{})
	var recs []*watcher.Record
	for _, dir := range []string{logsDir, fieldDir} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, p := range paths {
			if _, err := logparse.ScanFile(context.Background(), p, logparse.Options{}, func(r *watcher.Record) error {
				recs = append(recs, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fixtures := len(recs)
	rnd := rand.New(rand.NewPCG(3, 4))
	rows := e.rows
	levels := []string{"", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "NOTICE"}
	for i := 0; i < 20000; i++ {
		a, b := &rows[rnd.IntN(len(rows))], &rows[rnd.IntN(len(rows))]
		msg := "[Worker clientId=A->B, groupId=A-mm2] " + a.Prefilter + "orders.x" + b.Prefilter
		if i%3 == 0 {
			// Something the patterns of real lines may accept.
			src := recs[rnd.IntN(fixtures)]
			msg = src.Message + " " + a.Prefilter
		}
		rec := &watcher.Record{Level: levels[rnd.IntN(len(levels))], Message: msg}
		if rnd.IntN(2) == 0 {
			rec.Logger = "org.apache.kafka.connect.mirror." + []string{"Scheduler", "MirrorSourceTask", "X"}[rnd.IntN(3)]
		}
		if rnd.IntN(2) == 0 {
			c := &rows[rnd.IntN(len(rows))]
			rec.Stack = []string{"org.apache.kafka.common.errors.SomeException: " + c.Prefilter, "\tat " + b.Prefilter, "Caused by: x.Y: " + a.Prefilter}
		}
		recs = append(recs, rec)
	}
	matched := 0
	for _, rec := range recs {
		gr, gm, gg := e.pick(rec)
		wr, wm, wg := pickLinear(e, rec)
		if gr != wr || !slices.Equal(gm, wm) || len(gg) != len(wg) {
			t.Fatalf("level %q logger %q message %q stack %q:\n got row %+v %v %v\nwant row %+v %v %v",
				rec.Level, rec.Logger, rec.Message, rec.Stack, rowName(gr), gm, gg, rowName(wr), wm, wg)
		}
		for k, v := range wg {
			if gg[k] != v {
				t.Fatalf("message %q: cause group %s=%q, want %q", rec.Message, k, gg[k], v)
			}
		}
		if gr != nil {
			matched++
		}
	}
	if matched < len(recs)/4 {
		t.Errorf("only %d of %d records matched a row: the test does not exercise the rows", matched, len(recs))
	}
}

func rowName(r *Rule) string {
	if r == nil {
		return "<none>"
	}
	return r.ID + "/" + r.Prefilter
}

func TestPrefilters(t *testing.T) {
	ps := Prefilters()
	seen := map[string]bool{}
	for _, p := range ps {
		if p == "" || strings.ContainsAny(p, "\n\r") {
			t.Errorf("prefilter %q cannot be a grep -F pattern line", p)
		}
		if seen[p] {
			t.Errorf("prefilter %q listed twice", p)
		}
		seen[p] = true
	}
	for _, r := range table() {
		if !seen[r.Prefilter] {
			t.Errorf("row %s: prefilter %q not listed", r.ID, r.Prefilter)
		}
	}
}

// TestTaskIndexFollowsEviction: the index of task entries used by "task
// started" signals holds exactly the task entries kept, through evictions.
func TestTaskIndexFollowsEviction(t *testing.T) {
	e := New(Options{MaxTracked: 5})
	for n := 0; n < 12; n++ {
		e.Observe(r(float64(n), "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-"+string(rune('0'+n%10))+"} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
			"ctx:A->B.MirrorSourceConnector|task-"+string(rune('0'+n%10)), "org.apache.kafka.connect.errors.ConnectException: x"))
		e.Observe(r(float64(n)+0.5, "WARN", "Could not create topic-partitions for orders.", "org.apache.kafka.common.errors.PolicyViolationException: x"))
		kept := 0
		for _, ent := range e.byID {
			if ent.kind == kindTask {
				kept++
				if !slices.Contains(e.tasks, ent) {
					t.Fatalf("after %d records: task entry %s not indexed", n, ent.f.Identity())
				}
			}
		}
		if kept != len(e.tasks) {
			t.Fatalf("after %d records: %d task entries kept, %d indexed", n, kept, len(e.tasks))
		}
	}
	if len(e.tasks) == 0 {
		t.Fatal("no task entries: the test does not exercise the index")
	}
	// The newest task failure is resolved by its task starting again.
	got := e.Observe(r(20, "INFO", "WorkerSourceTask{id=MirrorSourceConnector-1} Executing source task", "ctx:A->B.MirrorSourceConnector|task-1"))
	if len(got) != 1 || !got[0].Recovered {
		t.Errorf("task restart: %+v", got)
	}
}

func TestRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern, prefilter, prefix string
		musts                      []string
	}{
		{`^refreshing topics took \d+ ms`, " took ", "refreshing topics took ", nil},
		{`checkpointing \d+ consumer groups (?P<flow>[^-]+->[^:]+)`, " consumer groups ", "", []string{"checkpointing "}},
		{`(?:Found (?P<n>\d+) new on (?P<s>\w+)\. )?Found (?P<m>\d+) missing on (?P<t>\w+)`, "missing on ", "", []string{"Found ", " missing on "}},
		{`(?i)fail.*zombie fencing(?: for (?P<c>\S+))?`, "ombie fencing", "", nil},
		{`(?P<code>\w*Exception) occurred while trying to (?P<op>.+?)`, "occurred while", "", []string{"Exception", " occurred while trying to "}},
		{`a|bcdefg`, "a", "", nil},
		{`(?m)^abcdef`, "abc", "", []string{"abcdef"}},
		{`x(?:abcd)?y{2}(abcde)`, "abcde", "", nil},
		{`(`, "x", "", nil},
	} {
		prefix, musts := requiredLiterals(c.pattern, c.prefilter)
		if prefix != c.prefix || !slices.Equal(musts, c.musts) {
			t.Errorf("%s: prefix %q musts %q, want %q %q", c.pattern, prefix, musts, c.prefix, c.musts)
		}
	}
}
