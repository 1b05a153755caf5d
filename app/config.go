package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/telemetry"
)

// Config is the app's environment, read once at start (README.md and
// docs/operate.md list every variable).
type Config struct {
	Addr string
	// BaseURL is the app's public URL; empty means http://localhost:<port>,
	// filled in once the listener knows its port.
	BaseURL       string
	PISBaseURL    string
	PISAPIKey     string
	MerchantsFile string
	// SessionKeys are the secrets of SESSION_KEYS, newest first; random
	// when the variable is empty (SessionKeysRandom).
	SessionKeys       [][]byte
	SessionKeysRandom bool
	InstitutionsTTL   time.Duration
	// SettingsKeys seal merchants' secrets in the ledger (SETTINGS_KEYS);
	// nil when unset.
	SettingsKeys *settings.Keys
	// Mailer sends invitations through SMTP_URL's server; nil without it.
	Mailer *mailer.Mailer
	// MailBounds are the limits of the e-mails sent to payers
	// (MAIL_PER_LINK_DAY, MAIL_PER_ADDRESS_DAY, MAIL_PER_MERCHANT_HOUR);
	// the ledger is set when the app is built.
	MailBounds mailer.Bounds
	// ReceivedWithin is how many bank days after it is paid an order's
	// money should be on the shop's account before the console's overview
	// counts it as not seen (RECEIVED_WITHIN_BANK_DAYS, 3).
	ReceivedWithin int
	// StudioTokenSet tells that STUDIO_TOKEN is set: it opened the studio,
	// which the console's Branding page replaced; it is ignored, with a
	// warning.
	StudioTokenSet bool
	// TrustedProxies are the networks whose X-Forwarded-For is believed.
	TrustedProxies []*net.IPNet
	// DatabaseURL names the payments ledger: empty for the SQLite file
	// data/checkout.db, sqlite:PATH, or postgres://… (several instances).
	DatabaseURL string
	// FollowRate bounds the status reads per second of every instance
	// together (FOLLOW_RATE).
	FollowRate rate.Limit
	// APIRate is the API requests a second each token may make, with
	// bursts of twice that (API_RATE).
	APIRate rate.Limit
	// EventRetention is how long events and their deliveries are kept
	// (EVENT_RETENTION).
	EventRetention time.Duration
	// BankHealth says when a bank is degraded (BANK_HEALTH_MIN_FINISHED,
	// BANK_HEALTH_MIN_SUCCESS).
	BankHealth bankhealth.Thresholds
	// BankHealthEvery is how often bank health is read
	// (BANK_HEALTH_REFRESH).
	BankHealthEvery time.Duration
	Knobs           sandbox.Knobs
	// Tracing is on when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; the exporter reads the
	// other OTEL_* variables itself.
	Tracing bool
}

// MinKeyLength is the shortest SESSION_KEYS secret accepted.
const MinKeyLength = 32

// SandboxMode reports whether the built-in sandbox is the provider.
func (c Config) SandboxMode() bool { return c.PISBaseURL == "" }

// LoadConfig reads the environment. A bad value stops start-up with a message
// that names the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:            or(getenv("ADDR"), ":8080"),
		BaseURL:         strings.TrimRight(getenv("BASE_URL"), "/"),
		PISBaseURL:      strings.TrimRight(getenv("PIS_BASE_URL"), "/"),
		PISAPIKey:       or(getenv("PIS_API_KEY"), sandbox.DefaultAPIKey),
		MerchantsFile:   getenv("MERCHANTS_FILE"),
		StudioTokenSet:  getenv("STUDIO_TOKEN") != "",
		InstitutionsTTL: 5 * time.Minute,
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("ADDR: %q is not host:port, like :8080", c.Addr)
	}
	if c.BaseURL != "" {
		if _, ok := rules.WebURL(c.BaseURL); !ok {
			return c, fmt.Errorf("BASE_URL: %q is not an http(s) URL like https://pay.example.com", c.BaseURL)
		}
	}
	if c.PISBaseURL != "" {
		if _, ok := rules.WebURL(c.PISBaseURL); !ok {
			return c, fmt.Errorf("PIS_BASE_URL: %q is not an http(s) URL", c.PISBaseURL)
		}
		if c.MerchantsFile == "" && getenv("SETTINGS_KEYS") == "" {
			return c, errors.New("MERCHANTS_FILE or SETTINGS_KEYS: one is required with a real provider (PIS_BASE_URL): merchants come from the file, or are made in the console with their secrets sealed under SETTINGS_KEYS; the demo merchant exists only in sandbox mode")
		}
		if getenv("PIS_API_KEY") == "" {
			return c, errors.New("PIS_API_KEY: required with a real provider (PIS_BASE_URL)")
		}
	}
	if v := getenv("INSTITUTIONS_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return c, fmt.Errorf("INSTITUTIONS_TTL: %q is not a duration of at least 1s, like 5m", v)
		}
		c.InstitutionsTTL = d
	}
	if v := getenv("SESSION_KEYS"); v != "" {
		for i, k := range strings.Split(v, ",") {
			k = strings.TrimSpace(k)
			if len(k) < MinKeyLength {
				return c, fmt.Errorf("SESSION_KEYS: key %d is shorter than %d characters", i+1, MinKeyLength)
			}
			c.SessionKeys = append(c.SessionKeys, []byte(k))
		}
	}
	if v := getenv("SETTINGS_KEYS"); v != "" {
		keys, err := settings.ParseKeys(v)
		if err != nil {
			return c, err
		}
		c.SettingsKeys = keys
	}
	if v := getenv("SMTP_URL"); v != "" {
		m, err := mailer.Parse(v)
		if err != nil {
			return c, err
		}
		c.Mailer = m
	}
	if v := getenv("TRUSTED_PROXIES"); v != "" {
		for _, cidr := range strings.Split(v, ",") {
			cidr = strings.TrimSpace(cidr)
			if !strings.Contains(cidr, "/") {
				if ip := net.ParseIP(cidr); ip != nil && ip.To4() != nil {
					cidr += "/32"
				} else {
					cidr += "/128"
				}
			}
			_, n, err := net.ParseCIDR(cidr)
			if err != nil {
				return c, fmt.Errorf("TRUSTED_PROXIES: %q is not an address or a network like 10.0.0.0/8", cidr)
			}
			c.TrustedProxies = append(c.TrustedProxies, n)
		}
	}
	c.DatabaseURL = getenv("DATABASE_URL")
	if err := checkDatabaseURL(c.DatabaseURL); err != nil {
		return c, fmt.Errorf("DATABASE_URL: %w", err)
	}
	c.FollowRate = payment.DefaultFollowRate
	if v := getenv("FOLLOW_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0.1 || f > 1000 {
			return c, fmt.Errorf("FOLLOW_RATE: %q is not a number of status reads per second from 0.1 to 1000", v)
		}
		c.FollowRate = rate.Limit(f)
	}
	c.APIRate = api.DefaultRate
	if v := getenv("API_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 || f > merchant.MaxAPIRate {
			return c, fmt.Errorf("API_RATE: %q is not a number of API requests a second per token from 1 to %d", v, merchant.MaxAPIRate)
		}
		c.APIRate = rate.Limit(f)
	}
	c.EventRetention = ledger.DefaultEventRetention
	if v := getenv("EVENT_RETENTION"); v != "" {
		d, err := parseDays(v)
		if err != nil || d < time.Hour || d > 10*365*24*time.Hour {
			return c, fmt.Errorf("EVENT_RETENTION: %q is not a duration from 1h to 3650d, like 90d or 720h", v)
		}
		c.EventRetention = d
	}
	c.BankHealth = bankhealth.DefaultThresholds
	if v := getenv("BANK_HEALTH_MIN_FINISHED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1_000_000 {
			return c, fmt.Errorf("BANK_HEALTH_MIN_FINISHED: %q is not a number of payments from 1 to 1000000", v)
		}
		c.BankHealth.MinFinished = n
	}
	if v := getenv("BANK_HEALTH_MIN_SUCCESS"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return c, fmt.Errorf("BANK_HEALTH_MIN_SUCCESS: %q is not a share from 0 to 1, like 0.5", v)
		}
		c.BankHealth.MinSuccess = f
	}
	c.MailBounds = mailer.Bounds{PerThing: mailer.DefaultPerThing, PerAddress: mailer.DefaultPerAddress, PerMerchant: mailer.DefaultPerMerchant}
	for _, bound := range []struct {
		name string
		n    *int
	}{{"MAIL_PER_LINK_DAY", &c.MailBounds.PerThing}, {"MAIL_PER_ADDRESS_DAY", &c.MailBounds.PerAddress}, {"MAIL_PER_MERCHANT_HOUR", &c.MailBounds.PerMerchant}} {
		if v := getenv(bound.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100_000 {
				return c, fmt.Errorf("%s: %q is not a number of e-mails from 1 to 100000", bound.name, v)
			}
			*bound.n = n
		}
	}
	c.ReceivedWithin = 3
	if v := getenv("RECEIVED_WITHIN_BANK_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 30 {
			return c, fmt.Errorf("RECEIVED_WITHIN_BANK_DAYS: %q is not a number of bank days from 1 to 30", v)
		}
		c.ReceivedWithin = n
	}
	c.BankHealthEvery = bankhealth.RefreshEvery
	if v := getenv("BANK_HEALTH_REFRESH"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > time.Minute {
			return c, fmt.Errorf("BANK_HEALTH_REFRESH: %q is not a duration from 1s to 1m, like 30s", v)
		}
		c.BankHealthEvery = d
	}
	knobs, err := sandbox.KnobsFromEnv(getenv)
	if err != nil {
		return c, err
	}
	c.Knobs = knobs
	c.Tracing = telemetry.TracingWanted(getenv)
	return c, nil
}

// parseDays reads a duration as Go writes them ("720h") or in whole days
// ("90d").
func parseDays(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("not a number of days: %q", v)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}

// WithListener fills in what depends on the port actually bound.
func (c Config) WithListener(addr net.Addr) Config {
	_, port, _ := net.SplitHostPort(addr.String())
	return c.WithPort(port)
}

// WithPort gives BASE_URL its default, http://localhost:<port>, when unset.
func (c Config) WithPort(port string) Config {
	if c.BaseURL == "" {
		c.BaseURL = "http://localhost:" + port
	}
	return c
}

func or(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

// checkDatabaseURL refuses a DATABASE_URL that names no database we know,
// before anything tries to reach it.
func checkDatabaseURL(v string) error {
	switch {
	case v == "":
		return nil
	case strings.HasPrefix(v, "sqlite:"):
		if strings.TrimPrefix(v, "sqlite:") == "" {
			return errors.New(`"sqlite:" needs a file path, like sqlite:data/checkout.db`)
		}
		return nil
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		if u, err := url.Parse(v); err != nil || (u.Host == "" && u.Query().Get("host") == "") {
			return errors.New("not a URL like postgres://user:password@host:5432/dbname")
		}
		return nil
	}
	return errors.New("must be empty (SQLite file data/checkout.db), sqlite:PATH or postgres://user:password@host:5432/dbname")
}
