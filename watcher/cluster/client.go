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
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Seeds...),
		kgo.ClientID(cfg.ClientID),
		kgo.SoftwareNameAndVersion("mm2-watchdog", "0"),
		kgo.RequestTimeoutOverhead(cfg.RequestTimeout),
		kgo.RetryTimeout(cfg.APITimeout),
		kgo.DialTimeout(cfg.DialTimeout),
		kgo.DisableClientMetrics(),
		kgo.WithLogger(kgoLogger{logger}),
		kgo.WithHooks(stats),
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
	return &Client{cfg: cfg, logger: logger, opts: opts, kgo: cl, adm: adm, stats: stats, now: time.Now}, nil
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
		return c.wrap("connecting", err)
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

// opContext bounds ctx by the APITimeout unless it already ends earlier.
func (c *Client) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= c.cfg.APITimeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.cfg.APITimeout)
}

// wrap turns err into an *Error for this cluster, classified, with the
// SASL/TLS context only this client knows.
func (c *Client) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Alias: c.cfg.Alias, Op: op, Reason: classify(err, c.cfg.SASL != nil, c.cfg.TLS != nil), Err: err}
}

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
