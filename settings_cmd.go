package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
)

// openSettings opens the ledger and the settings it holds, for a command
// run beside the app. The caller closes the ledger.
func openSettings(ctx context.Context, cfg config, stderr io.Writer) (*settings.Store, error) {
	l, err := ledger.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	keys, err := sealingKeys(cfg, log)
	if err != nil {
		l.Close()
		return nil, err
	}
	return &settings.Store{Ledger: l, Keys: keys, Dir: merchant.Empty(), Sandbox: cfg.sandboxMode(), Log: log}, nil
}

// operatorAdd is `operator add EMAIL`: it reads a password from standard
// input and writes an operator, who sees every merchant in the console,
// into the ledger. An operator who exists gets the new password, and their
// sessions end. This is how a deployment without a merchants file gets its
// first person.
func operatorAdd(ctx context.Context, args []string, cfg config, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "add" {
		return errors.New("usage: operator add EMAIL (the password on standard input)")
	}
	email := strings.TrimSpace(args[1])
	if rules.CheckEmail("email", email) != nil {
		return fmt.Errorf("operator add: %q is not a plain e-mail address like ops@pay.example", email)
	}
	pw, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	phc, err := password.Hash(pw, password.Default)
	if err != nil {
		return fmt.Errorf("operator add: %w", err)
	}
	s, err := openSettings(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.Ledger.Close()
	existed, err := s.AddOperator(ctx, email, phc)
	if err != nil {
		return fmt.Errorf("operator add: %w", err)
	}
	if existed {
		fmt.Fprintf(stdout, "Operator %s has a new password; their sessions have ended. Every instance knows within a second.\n", strings.ToLower(email))
	} else {
		fmt.Fprintf(stdout, "Operator %s added: they sign in at /console and see every merchant. Every instance knows within a second.\n", strings.ToLower(email))
	}
	return nil
}

// merchantsImport is `merchants import FILE`: the file's merchants are
// managed in the console from then on, and the file can be dropped.
func merchantsImport(ctx context.Context, args []string, cfg config, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "import" {
		return errors.New("usage: merchants import FILE")
	}
	file, err := merchant.Load(args[1])
	if err != nil {
		return err
	}
	s, err := openSettings(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.Ledger.Close()
	imported, skipped, err := s.Import(ctx, file)
	if errors.Is(err, settings.ErrNoKeys) {
		return errors.New("merchants import: SETTINGS_KEYS is required: the merchants' link keys and webhook secrets are sealed under it in the ledger")
	}
	if err != nil {
		return fmt.Errorf("merchants import: %w", err)
	}
	for _, id := range imported {
		fmt.Fprintf(stdout, "imported %s: managed in the console from now on\n", id)
	}
	for _, id := range skipped {
		fmt.Fprintf(stdout, "skipped %s: already managed in the console\n", id)
	}
	fmt.Fprintln(stdout, "Remove these merchants from MERCHANTS_FILE (or drop the file) at your next deployment: while the file holds them, their entries are ignored with a warning.")
	return nil
}

// commandTimeout bounds a command's work on the ledger.
const commandTimeout = time.Minute

// sealingKeys are the keys merchants' secrets are sealed under: SETTINGS_KEYS,
// or in sandbox mode without it a key file beside the SQLite ledger, made
// at the first start. Outside sandbox mode without SETTINGS_KEYS there are
// none: only the merchants file's merchants are served, their secrets kept
// in the file.
func sealingKeys(cfg config, log *slog.Logger) (*settings.Keys, error) {
	if cfg.SettingsKeys != nil || !cfg.sandboxMode() {
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
