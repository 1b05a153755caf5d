package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
)

// OpenSettings opens the ledger and the settings it holds, for a command
// run beside the app. The caller closes the ledger.
func OpenSettings(ctx context.Context, cfg Config, stderr io.Writer) (*settings.Store, error) {
	l, err := ledger.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	keys, err := SealingKeys(cfg, log)
	if err != nil {
		l.Close()
		return nil, err
	}
	return &settings.Store{Ledger: l, Keys: keys, Dir: merchant.Empty(), Sandbox: cfg.SandboxMode(), Log: log}, nil
}

// SealingKeys are the keys merchants' secrets are sealed under: SETTINGS_KEYS,
// or in sandbox mode without it a key file beside the SQLite ledger, made
// at the first start. Outside sandbox mode without SETTINGS_KEYS there are
// none: only the merchants file's merchants are served, their secrets kept
// in the file.
func SealingKeys(cfg Config, log *slog.Logger) (*settings.Keys, error) {
	if cfg.SettingsKeys != nil || !cfg.SandboxMode() {
		return cfg.SettingsKeys, nil
	}
	dir := filepath.Dir(ledger.DefaultPath)
	if path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:"); ok {
		dir = filepath.Dir(path)
	}
	keys, path, made, err := settings.SandboxKeys(dir)
	if err != nil {
		return nil, fmt.Errorf("SETTINGS_KEYS is not set and the sandbox's key file cannot be used: %w", err)
	}
	if made {
		log.Warn("SETTINGS_KEYS is not set: merchants' secrets are sealed under a key made in a file for this machine (fine for development only; set SETTINGS_KEYS in production)", "file", path)
	}
	return keys, nil
}
