package logrules

import (
	"fmt"
	"regexp/syntax"
	"strings"
)

// The prefilter stage of the Engine: every record is first searched, in one
// pass over its message, for all the literal prefilters of the rows that
// apply to its level, and only the rows whose literal occurred go on to their
// logger check and regular expression, which first checks the literals its
// pattern requires. The matchers are built once per level in New; a pass
// costs a hash and a bit test every few bytes of the message, whatever the
// number of rows, and allocates nothing.

// maxLiterals is the number of distinct prefilters one litMatcher can hold
// (the width of litSet).
const maxLiterals = 256

// litSet is a set of literal indexes of one litMatcher.
type litSet [maxLiterals / 64]uint64

func (s *litSet) add(i int)       { s[i>>6] |= 1 << (i & 63) }
func (s *litSet) has(i int) bool  { return s[i>>6]&(1<<(i&63)) != 0 }
func (s *litSet) union(o *litSet) { s[0] |= o[0]; s[1] |= o[1]; s[2] |= o[2]; s[3] |= o[3] }
func (s *litSet) meets(o *litSet) bool {
	return s[0]&o[0]|s[1]&o[1]|s[2]&o[2]|s[3]&o[3] != 0
}

// gramBits is the size, in bits, of the hash of a four-byte window.
const gramBits = 16

// litMatcher reports which of a fixed list of literals occur in a text.
//
// It hashes four-byte windows of the text and tests the hash against a
// bitmap of the hashes of the literals' windows (8 KiB, which stays in the L1
// cache); only on a hit are the literals that have that window compared.
// Every literal of n >= 4 bytes is registered with its windows at offsets 0
// to stride-1, where stride is the smallest n-3 of the set, so that looking
// at every stride-th window of the text is enough: an occurrence spans
// stride consecutive window positions, one of which is looked at. The test
// has no dependency from one window to the next, so the processor overlaps
// them; with a few dozen literals a hit that is no occurrence is rare (about
// one window in a thousand). Literals shorter than four bytes are searched
// for one by one.
//
// It is immutable once built and safe for concurrent use.
type litMatcher struct {
	lits []string
	// stride is the distance between the windows looked at.
	stride int
	// bits has bit gramHash(g) set for every registered window g.
	bits [1 << gramBits / 64]uint64
	// byGram lists, per window, the literals that have it and where.
	byGram map[uint32][]gramRef
	// short are the literals of one to three bytes.
	short []int
	// always holds the empty literal, which occurs in every text.
	always litSet
}

// gramRef is a literal that has a window at offset off.
type gramRef struct {
	lit int32
	off int32
}

// maxStride bounds litMatcher.stride, and so the number of windows
// registered per literal (each one a bit in the bitmap that lets more
// windows of a text through to the comparison).
const maxStride = 8

// gramHash hashes a four-byte window to gramBits bits (Fibonacci hashing).
func gramHash(g uint32) uint32 { return (g * 0x9E3779B1) >> (32 - gramBits) }

// gramAt returns the four bytes of s at i, little-endian. i+3 < len(s).
func gramAt(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// newLitMatcher builds the matcher of lits; a literal's index in lits is its
// index in the litSets the matcher reports. It returns an error when there
// are more than maxLiterals literals.
func newLitMatcher(lits []string) (*litMatcher, error) {
	if len(lits) > maxLiterals {
		return nil, fmt.Errorf("%d prefilter literals, at most %d fit one matcher", len(lits), maxLiterals)
	}
	m := &litMatcher{lits: lits, stride: maxStride, byGram: map[uint32][]gramRef{}}
	for i, l := range lits {
		switch {
		case l == "":
			m.always.add(i)
		case len(l) < 4:
			m.short = append(m.short, i)
		default:
			m.stride = min(m.stride, len(l)-3)
		}
	}
	for i, l := range lits {
		if len(l) < 4 {
			continue
		}
		for off := 0; off < m.stride; off++ {
			g := gramAt(l, off)
			h := gramHash(g)
			m.bits[h>>6] |= 1 << (h & 63)
			m.byGram[g] = append(m.byGram[g], gramRef{lit: int32(i), off: int32(off)})
		}
	}
	return m, nil
}

// scan adds to acc the literals that occur in text. It does not allocate.
func (m *litMatcher) scan(text string, acc *litSet) {
	acc.union(&m.always)
	for _, i := range m.short {
		if strings.Contains(text, m.lits[i]) {
			acc.add(i)
		}
	}
	bits := &m.bits
	for i := 0; i+3 < len(text); i += m.stride {
		g := gramAt(text, i)
		h := gramHash(g)
		if bits[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		m.verify(text, i, g, acc)
	}
}

// verify adds to acc the literals registered with window g that occur in
// text where the window at i places them.
func (m *litMatcher) verify(text string, i int, g uint32, acc *litSet) {
	for _, ref := range m.byGram[g] {
		at := i - int(ref.off)
		if at >= 0 && strings.HasPrefix(text[at:], m.lits[ref.lit]) {
			acc.add(int(ref.lit))
		}
	}
}

// Prefilters returns the distinct literal prefilters of the rule table, in
// table order: the strings the Engine searches a record's message (and, for
// cause rows, the exception lines of its stack) for before any regular
// expression runs. A line that contains none of them produces no finding,
// which makes the list a fair "grep -F -f" baseline for the cost of a scan.
func Prefilters() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range table() {
		if !seen[r.Prefilter] {
			seen[r.Prefilter] = true
			out = append(out, r.Prefilter)
		}
	}
	return out
}

// levelPlan is what the Engine tries on a record of one level: the message
// rows and standalone cause rows that apply to it, in table order, each with
// the index of its prefilter in the plan's automaton.
type levelPlan struct {
	// m searches a text for the prefilters of rows and causes; nil when no
	// row applies to the level (DEBUG and TRACE records cost nothing).
	m      *litMatcher
	rows   []planRow
	causes []planRow
	// rowLits and causeLits are the literals of rows and of causes.
	rowLits, causeLits litSet
}

// planRow is a row of a levelPlan.
type planRow struct {
	r   *Rule
	lit int
	// prefix and musts are literals every match of the row's pattern has:
	// at the start of the message (a pattern anchored with ^), and anywhere.
	// They reject most prefilter hits that are no match without running the
	// pattern.
	prefix string
	musts  []string
}

// mayMatch reports whether msg has the literals every match of the row's
// pattern has; false means the pattern cannot match.
func (pr *planRow) mayMatch(msg string) bool {
	if !strings.HasPrefix(msg, pr.prefix) {
		return false
	}
	for _, l := range pr.musts {
		if !strings.Contains(msg, l) {
			return false
		}
	}
	return true
}

// requiredLiterals returns literals that every match of pattern contains: the
// literal that starts a pattern anchored at the beginning of the text, and
// the other case-sensitive literals of its top-level sequence (looking
// through capture groups) that are at least four bytes long and not part of
// the prefilter, which the matcher has already found. A pattern that does not
// parse gives none.
func requiredLiterals(pattern, prefilter string) (prefix string, musts []string) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", nil
	}
	var seq []*syntax.Regexp
	var flatten func(*syntax.Regexp)
	flatten = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpConcat:
			for _, sub := range r.Sub {
				flatten(sub)
			}
		case syntax.OpCapture:
			flatten(r.Sub[0])
		default:
			seq = append(seq, r)
		}
	}
	flatten(re)
	for i, r := range seq {
		if r.Op != syntax.OpLiteral || r.Flags&syntax.FoldCase != 0 {
			continue
		}
		lit := string(r.Rune)
		if i == 1 && seq[0].Op == syntax.OpBeginText {
			prefix = lit
			continue
		}
		if len(lit) >= 4 && !strings.Contains(prefilter, lit) {
			musts = append(musts, lit)
		}
	}
	return prefix, musts
}

// Indexes of Engine.plans.
const (
	planTrace = iota
	planDebug
	planInfo
	planWarn
	planError
	planAny // records without a known level: every row applies
	numPlans
)

// planIndex maps a levelMask from levelOf (lvAll for an unknown level) to an
// index of Engine.plans.
func planIndex(lv levelMask) int {
	switch lv {
	case lvTrace:
		return planTrace
	case lvDebug:
		return planDebug
	case lvInfo:
		return planInfo
	case lvWarn:
		return planWarn
	case lvError:
		return planError
	}
	return planAny
}

// newPlan selects the rows of the table that apply to records of level lv
// (lvAll for an unknown level) and builds their automaton: message rows in
// table order, then the standalone cause rows in priority order, which the
// Engine tries only on warnings and errors.
func newPlan(rows []Rule, lv levelMask) (levelPlan, error) {
	var (
		p    levelPlan
		lits []string
		idx  = map[string]int{}
	)
	lit := func(s string) int {
		i, ok := idx[s]
		if !ok {
			i = len(lits)
			idx[s] = i
			lits = append(lits, s)
		}
		return i
	}
	for i := range rows {
		r := &rows[i]
		if r.Cause || r.levels&lv == 0 {
			continue
		}
		pr := planRow{r: r, lit: lit(r.Prefilter)}
		if r.re != nil {
			pr.prefix, pr.musts = requiredLiterals(r.Pattern, r.Prefilter)
		}
		p.rowLits.add(pr.lit)
		p.rows = append(p.rows, pr)
	}
	if lv&(lvWarn|lvError) != 0 {
		for i := range rows {
			r := &rows[i]
			if !r.Cause || !r.standalone || r.levels&lv == 0 {
				continue
			}
			pr := planRow{r: r, lit: lit(r.Prefilter)}
			p.causeLits.add(pr.lit)
			p.causes = append(p.causes, pr)
		}
	}
	if len(lits) == 0 {
		return p, nil
	}
	m, err := newLitMatcher(lits)
	if err != nil {
		return p, err
	}
	p.m = m
	return p, nil
}
