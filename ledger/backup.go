package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// SQLitePath is the file a DATABASE_URL value names when it names a SQLite
// ledger (DefaultPath when empty); ok is false for PostgreSQL.
func SQLitePath(databaseURL string) (path string, ok bool) {
	if databaseURL != "" && !strings.HasPrefix(databaseURL, "sqlite:") {
		return "", false
	}
	if path = strings.TrimPrefix(databaseURL, "sqlite:"); path == "" {
		path = DefaultPath
	}
	return path, true
}

// Backup writes a copy of a SQLite ledger to path, a file that must not
// exist, while the app goes on writing. A copy of the file alone would
// miss what is still in its write-ahead log (checkout.db-wal); VACUUM INTO
// copies one read transaction's view instead, the log's committed pages
// included, and never blocks a writer. The copy is written under another
// name, synced, checked, and only then linked to path, so that path is
// never a half-written copy. A PostgreSQL ledger is refused: pg_dump is
// its backup.
func (l *Ledger) Backup(ctx context.Context, path string) error {
	if l.dialect == postgres {
		return fmt.Errorf("%s: %w", l.Where, BackupWithPgDump(path))
	}
	if strings.ContainsAny(path, "?#") {
		return fmt.Errorf("%s: a file path without ? or #", path)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s already exists: a backup never writes over a file", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// VACUUM INTO fills an empty file as well as a missing one, so the
	// temporary name is taken first.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if _, err := l.db.ExecContext(ctx, `VACUUM INTO $1`, tmp.Name()); err != nil {
		return fmt.Errorf("copying %s: %w", l.Where, err)
	}
	// VACUUM INTO leaves the copy to the operating system's cache.
	if err := syncFile(tmp.Name()); err != nil {
		return err
	}
	if err := quickCheck(ctx, tmp.Name()); err != nil {
		return fmt.Errorf("the copy does not read back: %w", err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists: a backup never writes over a file", path)
	} else if err != nil {
		return err
	}
	// The folder's entry for path reaches the disk too; not every system
	// syncs a folder, and the copy itself is already there.
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// quickCheck opens a SQLite file read-only and asks SQLite whether its
// pages and indexes hold together.
func quickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&result); err != nil {
		return err
	}
	if result != "ok" {
		return errors.New(result)
	}
	return nil
}

// BackupWithPgDump is Backup's refusal of a PostgreSQL ledger, with the
// command that backs it up to path instead; a caller that knows the ledger
// is PostgreSQL need not connect to hear it.
func BackupWithPgDump(path string) error {
	return fmt.Errorf("PostgreSQL is backed up with its own tools: pg_dump -Fc -f %s \"$DATABASE_URL\", restored with pg_restore, as docs/operate.md says", shellWord(path))
}

// shellWord quotes s for a POSIX shell when it needs it, so that a command
// printed for an operator can be pasted as it is.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)
