package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/handlers"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// makeLink is the `link` command: it prints a signed /checkout link, so a
// merchant can try the flow without writing code (the link format is in
// docs/integrate.md).
func makeLink(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("link", flag.ContinueOnError)
	fs.SetOutput(stdout)
	merchantID := fs.String("merchant", merchant.DemoID, "merchant id")
	l := order.Link{}
	fs.StringVar(&l.ID, "order", "", "the merchant's order id (merchant_order_id)")
	fs.StringVar(&l.Amount, "amount", "", "amount in EUR, like 49.90")
	fs.StringVar(&l.Currency, "currency", "EUR", "currency")
	fs.StringVar(&l.ReturnURL, "return-url", "", "where the shopper goes back to; the demo shop when empty")
	fs.StringVar(&l.Email, "email", "", "the shopper's e-mail (optional)")
	fs.StringVar(&l.Country, "country", "", "the bank's country, to skip that step (optional)")
	fs.StringVar(&l.Bank, "bank", "", "the bank's institution_id, to skip that step (optional, needs -country)")
	fs.StringVar(&l.LastBank, "last-bank", "", "the institution_id the shopper paid with last time, offered first (optional, needs -country)")
	fs.StringVar(&l.Lang, "lang", "", "the shopper's language (optional)")
	fs.StringVar(&l.KID, "kid", "", "link key id; the newest when empty")
	fs.DurationVar(&l.TTL, "ttl", 24*time.Hour, "how long the link stays valid")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(cfg.Addr)
	cfg = cfg.WithPort(port)
	m, err := linkMerchant(ctx, cfg, *merchantID, stderr)
	if err != nil {
		return err
	}
	if l.ReturnURL == "" && m.ID == merchant.DemoID {
		l.ReturnURL = cfg.BaseURL + handlers.RouteDemoShop
	}
	if l.KID == "" {
		l.KID = m.NewestKID()
	}
	if l.ID == "" || l.Amount == "" || l.ReturnURL == "" {
		return errors.New("link: -order, -amount and -return-url are required")
	}
	if err := l.Check(m); err != nil {
		return fmt.Errorf("link: %w", err)
	}
	link, err := l.URL(cfg.BaseURL, m, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, link)
	return nil
}

// linkMerchant finds the merchant a link is made for: in the merchants
// file when it holds it, else among the merchants the ledger keeps, else
// (sandbox mode, before the first start) the demo merchant.
func linkMerchant(ctx context.Context, cfg app.Config, id string, stderr io.Writer) (*merchant.Merchant, error) {
	if cfg.MerchantsFile != "" {
		file, err := merchant.Load(cfg.MerchantsFile)
		if err != nil {
			return nil, err
		}
		if m, ok := file.Get(id); ok {
			return m, nil
		}
	}
	s, err := app.OpenSettings(ctx, cfg, stderr)
	if err != nil {
		return nil, err
	}
	defer s.Ledger.Close()
	if err := s.Load(ctx); err != nil {
		return nil, err
	}
	if m, ok := s.Dir.Get(id); ok && m.Unopened != "" {
		// The others' links are still made; this one's key does not open.
		return nil, fmt.Errorf("-merchant: %s", m.Unopened)
	} else if ok {
		return m, nil
	}
	if id == merchant.DemoID && cfg.SandboxMode() && cfg.MerchantsFile == "" {
		demo, err := merchant.Demo(cfg.BaseURL)
		if err != nil {
			return nil, err
		}
		m, _ := demo.Get(id)
		return m, nil
	}
	return nil, fmt.Errorf("-merchant: no merchant %q", id)
}
