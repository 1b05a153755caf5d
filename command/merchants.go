package command

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
)

// merchantsImport is `merchants import FILE`: the file's merchants are
// managed in the console from then on, and the file can be dropped.
func merchantsImport(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "import" {
		return errors.New("usage: merchants import FILE")
	}
	file, err := merchant.Load(args[1])
	if err != nil {
		return err
	}
	s, err := app.OpenSettings(ctx, cfg, stderr)
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
