package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/settings"
)

// backupLedger is `backup FILE`: a consistent copy of the SQLite ledger,
// taken while the app runs, and where the key its merchants' secrets are
// sealed under is, since the copy is of no use without it. It is not bound
// by commandTimeout: a big ledger takes as long as it takes to copy, and
// Ctrl-C stops it.
func backupLedger(ctx context.Context, args []string, cfg app.Config, stdout io.Writer) error {
	if len(args) != 1 || args[0] == "" || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: backup FILE (a new file: a copy of the SQLite ledger, taken while the app runs)")
	}
	file := args[0]
	path, ok := ledger.SQLitePath(cfg.DatabaseURL)
	if !ok {
		return fmt.Errorf("backup: %w", ledger.BackupWithPgDump(file))
	}
	// Opening a ledger makes one where there is none: a wrong folder or
	// DATABASE_URL would give an empty copy and no word of it.
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("backup: no ledger at %s (DATABASE_URL names it; %s when empty, from the folder the command runs in)", path, ledger.DefaultPath)
	} else if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	l, err := ledger.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer l.Close()
	if err := l.Backup(ctx, file); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up the ledger (%s) to %s (%s).\n", l.Where, absolute(file), byteSize(info.Size()))
	fmt.Fprintln(stdout, sealingKeyNote(cfg))
	return nil
}

// sealingKeyNote says where the key of the ledger's sealed secrets is and
// why it must be kept with the copy, never its value.
func sealingKeyNote(cfg app.Config) string {
	const keep = "Keep it too, and apart from the copy (whoever holds both holds every secret): " +
		"a ledger restored without it opens none of its merchants' secrets: they are not served."
	switch {
	case cfg.SettingsKeys != nil:
		return "Its merchants' secrets are sealed under the SETTINGS_KEYS you run with (every key in it). " + keep
	case cfg.SandboxMode():
		path, _ := ledger.SQLitePath(cfg.DatabaseURL)
		key := absolute(filepath.Join(filepath.Dir(path), settings.KeyFile))
		if _, err := os.Stat(key); err != nil {
			return "Its merchants' secrets are sealed under the key in " + key + " (SETTINGS_KEYS is not set), and that file is missing: " +
				"find it, for without it this ledger's secrets do not open."
		}
		return "Its merchants' secrets are sealed under the key in " + key + " (SETTINGS_KEYS is not set). " + keep
	}
	return "Its merchants' secrets are not in it: it holds fingerprints of those in MERCHANTS_FILE (" + absolute(cfg.MerchantsFile) + "). " +
		"Keep that file too: a ledger restored without it serves none of its merchants."
}

// absolute is path from the root, so that the words stay true wherever
// they are read; path as it is when the folder cannot be known.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// byteSize is n bytes as people read a file's size.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
