package slack

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// validateWebhookURL accepts an absolute https URL, or http for a loopback
// host (local tests and proxies). Its errors never quote the URL.
func validateWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("slack webhook URL does not parse as a URL")
	}
	if u.Host == "" {
		return errors.New("slack webhook URL has no host")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("slack webhook URL must use https (http is accepted only for a loopback host)")
	}
	return errors.New("slack webhook URL must use https")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateToken accepts a bot (xoxb-) or user (xoxp-) token. Its errors never
// quote the token.
func validateToken(token string) error {
	if !strings.HasPrefix(token, "xoxb-") && !strings.HasPrefix(token, "xoxp-") {
		return errors.New("slack token must be a bot (xoxb-) or user (xoxp-) token")
	}
	if len(token) < 10 || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return errors.New("slack token is malformed (too short, or contains whitespace or non-ASCII)")
	}
	return nil
}
