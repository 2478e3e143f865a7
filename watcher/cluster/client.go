package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Client is a connection to one Kafka cluster: a franz-go kgo client and a
// kadm admin client over it, plus request accounting. It is safe for
// concurrent use. Build it with New or Dial; Close it when done.
type Client struct {
	cfg    Config
	logger *slog.Logger
	opts   []kgo.Opt // base options, reused for the short-lived read clients
	kgo    *kgo.Client
	adm    *kadm.Client
	stats  *requestStats
	watch  *connWatch
	now    func() time.Time
}

// New builds a Client from cfg without contacting the cluster. It fails
// only on an unusable Config (no alias, no seeds). Connection problems show
// up on the first request; use Dial to surface them at once.
//
// logger receives franz-go's own log lines with the component and alias
// attached; franz-go's errors and warnings are logged at Warn, everything
// else at Debug. A nil logger discards them.
func New(cfg Config, logger *slog.Logger) (*Client, error) {
	if cfg.Alias == "" {
		return nil, errors.New("cluster config has no alias")
	}
	if len(cfg.Seeds) == 0 {
		return nil, fmt.Errorf("cluster %q: bootstrap.servers: no seed brokers", cfg.Alias)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "cluster", "cluster", cfg.Alias)
	if cfg.ClientID == "" {
		cfg.ClientID = DefaultClientID
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.APITimeout <= 0 {
		cfg.APITimeout = DefaultAPITimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}

	stats := &requestStats{}
	watch := &connWatch{ops: map[*opState]struct{}{}, withSASL: cfg.SASL != nil, withTLS: cfg.TLS != nil}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Seeds...),
		kgo.ClientID(cfg.ClientID),
		kgo.SoftwareNameAndVersion("mm2-watchdog", "0"),
		kgo.RequestTimeoutOverhead(cfg.RequestTimeout),
		kgo.RetryTimeout(cfg.APITimeout),
		kgo.DialTimeout(cfg.DialTimeout),
		kgo.DisableClientMetrics(),
		kgo.WithLogger(kgoLogger{logger}),
		kgo.WithHooks(stats, watch),
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.Dialer(tlsDialer(cfg.TLS, cfg.DialTimeout)))
	}
	if cfg.SASL != nil {
		switch cfg.SASL.Mechanism {
		case MechanismPlain:
			opts = append(opts, kgo.SASL(plain.Auth{User: cfg.SASL.Username, Pass: cfg.SASL.Password.Reveal()}.AsMechanism()))
		case MechanismScramSHA256:
			opts = append(opts, kgo.SASL(scram.Auth{User: cfg.SASL.Username, Pass: cfg.SASL.Password.Reveal()}.AsSha256Mechanism()))
		case MechanismScramSHA512:
			opts = append(opts, kgo.SASL(scram.Auth{User: cfg.SASL.Username, Pass: cfg.SASL.Password.Reveal()}.AsSha512Mechanism()))
		default:
			return nil, fmt.Errorf("cluster %q: sasl.mechanism: %s is unsupported", cfg.Alias, cfg.SASL.Mechanism)
		}
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: building client: %w", cfg.Alias, err)
	}
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(cfg.RequestTimeout / time.Millisecond))
	return &Client{cfg: cfg, logger: logger, opts: opts, kgo: cl, adm: adm, stats: stats, watch: watch, now: time.Now}, nil
}

// Dial builds a Client and checks that the cluster answers a metadata
// request, within ctx and the APITimeout. On failure it closes the client
// and returns an *Error whose Reason says why (see Classify).
func Dial(ctx context.Context, cfg Config, logger *slog.Logger) (*Client, error) {
	c, err := New(cfg, logger)
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Ping checks that a broker answers, with a metadata request for no topics.
// Errors are *Error values with a Reason.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	if err := c.kgo.Ping(ctx); err != nil {
		return c.wrap(ctx, "connecting", err)
	}
	return nil
}

// Alias returns the MM2 cluster alias this client talks to.
func (c *Client) Alias() string { return c.cfg.Alias }

// Admin returns the kadm client, for callers that need a request this
// package does not wrap. Prefer Snapshot and the read helpers.
func (c *Client) Admin() *kadm.Client { return c.adm }

// Close closes every connection. Requests in flight fail with
// kgo.ErrClientClosed.
func (c *Client) Close() { c.kgo.Close() }

// opContext bounds ctx by the APITimeout unless it already ends earlier,
// and follows the connection failures franz-go reports while the operation
// runs (see connWatch): wrap then reports the last of them rather than a
// bare deadline, and a failure that retrying cannot fix (rejected
// credentials, a TLS mismatch) ends the operation early.
func (c *Client) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	var cancelT context.CancelFunc
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= c.cfg.APITimeout {
		cancelT = func() {}
	} else {
		ctx, cancelT = context.WithTimeout(ctx, c.cfg.APITimeout)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	st := &opState{start: c.now(), cancel: cancel}
	if dl, ok := ctx.Deadline(); ok {
		st.timeout = dl.Sub(st.start)
	}
	c.watch.add(st)
	return context.WithValue(ctx, opKey{}, st), func() {
		c.watch.remove(st)
		cancel(nil)
		cancelT()
	}
}

// wrap turns err into an *Error for this cluster, classified, with the
// SASL/TLS context only this client knows. When the operation of ctx ended
// at its deadline, or was given up early, after a connection failed, the
// error reports that connection failure, the one a person can act on,
// instead of the deadline.
func (c *Client) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	reason := classify(err, c.cfg.SASL != nil, c.cfg.TLS != nil)
	if st, ok := ctx.Value(opKey{}).(*opState); ok && ctx.Err() != nil {
		if last, attempts := c.watch.last(st); last != nil {
			var gaveUp *gaveUpError
			switch {
			case errors.As(context.Cause(ctx), &gaveUp):
				err = &retriedError{last: last, end: err, note: fmt.Sprintf("not retried further: %d connection attempts failed in a way retrying does not fix", attempts)}
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				err = &retriedError{last: last, end: err, note: fmt.Sprintf("after retrying until the %s timeout", roundTimeout(st.timeout))}
			default:
				return &Error{Alias: c.cfg.Alias, Op: op, Reason: reason, Err: err}
			}
			reason = classify(last, c.cfg.SASL != nil, c.cfg.TLS != nil)
		}
	}
	return &Error{Alias: c.cfg.Alias, Op: op, Reason: reason, Err: err}
}

// roundTimeout rounds an operation's time limit for a message: the
// deadline is measured from when the operation started, a little after
// the caller set it.
func roundTimeout(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// failFastAfter is how many connection attempts must fail with a reason
// that retrying cannot fix (permanent) before an operation is given up
// early. franz-go tries twice in quick succession, then backs off; three
// failures span one backoff (about 250 ms), so a broker that was
// restarting gets a second chance while a rejected password does not
// hold a check until its deadline.
const failFastAfter = 3

// permanent reports whether a connection failing for r will fail the same
// way until the configuration (of the client or the listener) changes.
func permanent(r Reason) bool {
	switch r {
	case ReasonAuthFailed, ReasonSASLMechanism, ReasonSASLRequired, ReasonTLSUnknownCA,
		ReasonTLSHostname, ReasonTLSHandshake, ReasonTLSRequired, ReasonTLSNotExpected:
		return true
	}
	return false
}

// opKey is the context key of an operation's *opState.
type opKey struct{}

// opState is what connWatch records for one operation in flight.
type opState struct {
	start   time.Time
	timeout time.Duration // from start to the deadline; 0 when none
	cancel  context.CancelCauseFunc

	// Guarded by connWatch.mu.
	lastErr  error // the last connection failure seen while it ran
	attempts int   // connection attempts failed for a permanent reason
}

// connWatch is a franz-go HookBrokerConnect that records, for every
// operation in flight, the last failure to set up a broker connection:
// dialling, the TLS handshake, ApiVersions and SASL (franz-go reports the
// error of each attempt, including those it retries on its own until the
// deadline and never returns). It gives up an operation with a
// *gaveUpError once failFastAfter attempts failed for a permanent reason.
type connWatch struct {
	withSASL, withTLS bool

	mu  sync.Mutex
	ops map[*opState]struct{}
}

var _ kgo.HookBrokerConnect = (*connWatch)(nil)

func (w *connWatch) add(st *opState) {
	w.mu.Lock()
	w.ops[st] = struct{}{}
	w.mu.Unlock()
}

func (w *connWatch) remove(st *opState) {
	w.mu.Lock()
	delete(w.ops, st)
	w.mu.Unlock()
}

// last returns the last connection failure seen during st and the number
// of attempts that failed for a permanent reason.
func (w *connWatch) last(st *opState) (error, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return st.lastErr, st.attempts
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (w *connWatch) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) {
		// Nothing failed, or the failure is the operation ending.
		return
	}
	fatal := permanent(classify(err, w.withSASL, w.withTLS))
	w.mu.Lock()
	defer w.mu.Unlock()
	for st := range w.ops {
		st.lastErr = err
		if !fatal {
			continue
		}
		st.attempts++
		if st.attempts >= failFastAfter {
			st.cancel(&gaveUpError{err: err})
		}
	}
}

// gaveUpError is the cause of an operation given up early by connWatch.
type gaveUpError struct{ err error }

func (e *gaveUpError) Error() string { return "given up: " + e.err.Error() }
func (e *gaveUpError) Unwrap() error { return e.err }

// retriedError is an operation that ended (at its deadline, or given up)
// while connections kept failing: last is the last connection failure,
// end what the operation itself returned. Its message is last's, with a
// note on the retrying; errors.Is and errors.As see both.
type retriedError struct {
	last, end error
	note      string
}

func (e *retriedError) Error() string   { return e.last.Error() + " (" + e.note + ")" }
func (e *retriedError) Unwrap() []error { return []error{e.last, e.end} }

// requestStats counts requests and sums their round-trip times with
// franz-go's HookBrokerE2E, which fires once per request written (failed
// writes included) before the response is handed back. HookBrokerWrite
// would fire too, but after the write returns, which can be after the
// caller already has its response, so counts read right after a call could
// miss it. Counts are per client and include franz-go's own requests
// (ApiVersions and SASL on each new connection, metadata refreshes).
type requestStats struct {
	mu    sync.Mutex
	total int64
	byKey map[int16]int
	e2e   time.Duration
}

var _ kgo.HookBrokerE2E = (*requestStats)(nil)

// OnBrokerE2E implements kgo.HookBrokerE2E.
func (s *requestStats) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	d := e2e.DurationE2E()
	s.mu.Lock()
	s.total++
	if s.byKey == nil {
		s.byKey = make(map[int16]int)
	}
	s.byKey[key]++
	s.e2e += d
	s.mu.Unlock()
}

type statsMark struct {
	writes int64
	byKey  map[int16]int
	e2e    time.Duration
}

func (s *requestStats) mark() statsMark {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := statsMark{writes: s.total, byKey: make(map[int16]int, len(s.byKey)), e2e: s.e2e}
	for k, v := range s.byKey {
		m.byKey[k] = v
	}
	return m
}

// since returns the requests, per-key counts and summed round-trip time
// since m.
func (s *requestStats) since(m statsMark) (int, map[int16]int, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	by := make(map[int16]int)
	for k, v := range s.byKey {
		if d := v - m.byKey[k]; d > 0 {
			by[k] = d
		}
	}
	return int(s.total - m.writes), by, s.e2e - m.e2e
}

// tlsDialer dials TCP and then does the TLS handshake itself, so that a
// handshake failure is marked as one (*handshakeError) and can be told
// apart from a failure after the handshake. The host part of the address
// is the ServerName when cfg has none, as kgo.DialTLSConfig does.
func tlsDialer(cfg *tls.Config, timeout time.Duration) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		raw, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				c.ServerName = h
			}
		}
		hctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn := tls.Client(raw, c)
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, &handshakeError{err: err}
		}
		return conn, nil
	}
}

// handshakeError marks an error of the TLS handshake.
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return "TLS handshake: " + e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }

// kgoLogger adapts franz-go's logger interface to slog. franz-go's errors
// are mostly transient connection failures that the caller also sees as a
// returned error, so they are logged at Warn; the rest is chatter at Debug.
type kgoLogger struct{ l *slog.Logger }

func (k kgoLogger) Level() kgo.LogLevel {
	if k.l.Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelWarn
}

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	if level <= kgo.LogLevelWarn && level != kgo.LogLevelNone {
		lv = slog.LevelWarn
	}
	k.l.Log(context.Background(), lv, msg, keyvals...)
}
