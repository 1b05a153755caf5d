package settings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"time"

	"golang.org/x/image/webp"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// Branding: designers save a draft of their merchant's look, which no
// shopper sees, publish it (a settings change, live on every instance within
// a poll) and make an older published look live again.

// Draft is a merchant's draft look. With none saved it is the live look, at
// version 0.
type Draft struct {
	Custom    rules.Customization
	Version   int64
	Updated   time.Time
	UpdatedBy string
}

// DraftConflictError says the draft was saved meanwhile, by whom, and what
// it holds now.
type DraftConflictError struct{ Newer Draft }

func (e *DraftConflictError) Error() string { return "draft saved meanwhile by " + e.Newer.UpdatedBy }

// PublishConflictError says another look was published meanwhile.
type PublishConflictError struct{ Newer Published }

func (e *PublishConflictError) Error() string {
	return fmt.Sprintf("version %d published meanwhile by %s", e.Newer.Version, e.Newer.By)
}

// ErrNothingToPublish refuses to publish the look that is live already.
var ErrNothingToPublish = errors.New("the draft is the live look: nothing to publish")

// Published is a look a merchant published.
type Published struct {
	Version int64
	Custom  rules.Customization
	// Changed names the fields that differ from the version before.
	Changed      []string
	RevertedFrom int64
	At           time.Time
	By           string
}

// Draft is the merchant's draft look: the one saved, or its live look when
// none was.
func (s *Store) Draft(ctx context.Context, m *merchant.Merchant) (Draft, error) {
	row, ok, err := s.Ledger.BrandDraft(ctx, m.ID)
	if err != nil || !ok {
		d := Draft{}
		if m.Customization != nil {
			d.Custom = *m.Customization
		}
		return d, err
	}
	d := Draft{Version: row.Version, Updated: row.Updated, UpdatedBy: row.UpdatedBy}
	return d, json.Unmarshal([]byte(row.Customization), &d.Custom)
}

// CheckLook applies the rules a look must keep to be saved: the provider's for
// the customization (docs/provider.md), and outside sandbox mode a logo over
// https. Each refusal names its field ("customization.primaryColor").
func (s *Store) CheckLook(c rules.Customization) []rules.FieldError {
	errs := c.Check()
	if !s.Sandbox && c.LogoURL != "" && !strings.HasPrefix(c.LogoURL, "https://") {
		errs = append(errs, rules.FieldError{Field: "customization.logoUrl", Reason: rules.ReasonNotAllowed, Message: "must be an https URL outside sandbox mode"})
	}
	return errs
}

// SaveDraft saves the merchant's draft as the version after from (the
// version the designer's form was made from): a *DraftConflictError with
// the newer draft when someone saved since, a *rules.ValidationError when
// a value breaks the rules. A draft equal to the one saved writes nothing.
// It returns the draft's version.
func (s *Store) SaveDraft(ctx context.Context, by Actor, id string, from int64, c rules.Customization) (int64, error) {
	if errs := s.CheckLook(c); len(errs) > 0 {
		return 0, &rules.ValidationError{Fields: errs}
	}
	raw, _ := json.Marshal(c)
	version := from
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := changeableMerchant(ctx, tx, id); err != nil {
			return err
		}
		old, ok, err := tx.BrandDraft(ctx, id)
		if err != nil {
			return err
		}
		var before rules.Customization
		if ok {
			if old.Version != from {
				return draftConflict(old)
			}
			if old.Customization == string(raw) {
				return nil
			}
			json.Unmarshal([]byte(old.Customization), &before)
		}
		if !ok && from != 0 {
			return ErrNoMerchant
		}
		if version, err = tx.PutBrandDraft(ctx, id, string(raw), from, by.Name); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventBrandDraftSaved, ledger.Fields(lookChanges(&before, &c)...)).line(by, id))
	})
	return version, err
}

func draftConflict(row ledger.BrandDraft) error {
	newer := Draft{Version: row.Version, Updated: row.Updated, UpdatedBy: row.UpdatedBy}
	if err := json.Unmarshal([]byte(row.Customization), &newer.Custom); err != nil {
		return err
	}
	return &DraftConflictError{Newer: newer}
}

// Publish makes c the merchant's live look, as the version after live (the
// one the designer saw live): a *PublishConflictError with the newer one
// when another was published since. It returns the version published.
func (s *Store) Publish(ctx context.Context, by Actor, id string, live int64, c rules.Customization) (int64, error) {
	if errs := s.CheckLook(c); len(errs) > 0 {
		return 0, &rules.ValidationError{Fields: errs}
	}
	return s.publish(ctx, by, id, live, c, 0)
}

// Revert makes the published version live again, as a new version after
// live.
func (s *Store) Revert(ctx context.Context, by Actor, id string, version, live int64) (int64, error) {
	old, err := s.Ledger.BrandVersion(ctx, id, version)
	if err != nil {
		return 0, err
	}
	var c rules.Customization
	if err := json.Unmarshal([]byte(old.Customization), &c); err != nil {
		return 0, err
	}
	return s.publish(ctx, by, id, live, c, version)
}

func (s *Store) publish(ctx context.Context, by Actor, id string, live int64, c rules.Customization, from int64) (int64, error) {
	var published int64
	err := s.changeIn(ctx, by, id, 0, func(tx *ledger.SettingsTx, m *merchant.Merchant) (said, error) {
		latest, err := tx.LatestBrandVersion(ctx, id)
		if err != nil {
			return said{}, err
		}
		if latest != live {
			newer, err := tx.BrandVersion(ctx, id, latest)
			if err != nil {
				return said{}, err
			}
			return said{}, &PublishConflictError{Newer: publishedOf(newer)}
		}
		changes := lookChanges(m.Customization, &c)
		if len(changes) == 0 {
			return said{}, ErrNothingToPublish
		}
		m.Customization = nil
		if c != (rules.Customization{}) {
			m.Customization = &c
		}
		published = latest + 1
		raw, _ := json.Marshal(c)
		if err := tx.AddBrandVersion(ctx, ledger.BrandVersion{MerchantID: id, Version: published, Customization: string(raw),
			Changed: strings.Join(changes, ", "), RevertedFrom: from, PublishedBy: by.Name}); err != nil {
			return said{}, err
		}
		if from != 0 {
			// The editor starts from the look made live again: a draft of
			// the look reverted away from would undo the revert when
			// published.
			if draft, ok, err := tx.BrandDraft(ctx, id); err != nil {
				return said{}, err
			} else if ok && draft.Customization != string(raw) {
				if _, err := tx.PutBrandDraft(ctx, id, string(raw), draft.Version, by.Name); err != nil {
					return said{}, err
				}
			}
			return say(EventBrandReverted, ledger.Count(published), ledger.Count(from)), nil
		}
		return say(EventBrandPublished, ledger.Count(published), ledger.Fields(changes...)), nil
	})
	return published, err
}

// History lists the looks the merchant published, newest first.
func (s *Store) History(ctx context.Context, id string) ([]Published, error) {
	rows, err := s.Ledger.BrandVersions(ctx, id)
	var list []Published
	for _, r := range rows {
		list = append(list, publishedOf(r))
	}
	return list, err
}

// Live is the merchant's live look as published from the console: its
// newest version; the zero Published when it never published one.
func (s *Store) Live(ctx context.Context, id string) (Published, error) {
	row, err := s.Ledger.NewestBrandVersion(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return Published{}, nil
	} else if err != nil {
		return Published{}, err
	}
	return publishedOf(row), nil
}

// PublishedVersion reads one published look.
func (s *Store) PublishedVersion(ctx context.Context, id string, version int64) (Published, error) {
	row, err := s.Ledger.BrandVersion(ctx, id, version)
	return publishedOf(row), err
}

func publishedOf(r ledger.BrandVersion) Published {
	p := Published{Version: r.Version, RevertedFrom: r.RevertedFrom, At: r.Published, By: r.PublishedBy}
	json.Unmarshal([]byte(r.Customization), &p.Custom)
	if r.Changed != "" {
		p.Changed = strings.Split(r.Changed, ", ")
	}
	return p
}

// lookChanges names the fields of the customization (by the provider's
// names) that differ between a and b; nil for none.
func lookChanges(a, b *rules.Customization) []string {
	fa, fb := LookValues(a), LookValues(b)
	var names []string
	for _, name := range LookFields {
		if fa[name] != fb[name] {
			names = append(names, name)
		}
	}
	return names
}

// LookFields are the customization's fields, by the provider's names, in the
// order the Branding page shows them.
var LookFields = []string{"title", "logoUrl", "logoHeight", "primaryColor", "bgColor", "spacing", "radius", "modalShadow"}

// LookValues are a look's fields by their LookFields names; none for nil.
func LookValues(c *rules.Customization) map[string]string {
	if c == nil {
		return map[string]string{}
	}
	return map[string]string{
		"title": c.Title, "logoUrl": c.LogoURL, "logoHeight": c.LogoHeight,
		"primaryColor": c.PrimaryColor, "bgColor": c.BgColor,
		"spacing": c.Spacing, "radius": c.Radius, "modalShadow": c.ModalShadow,
	}
}

// Limits of a logo uploaded on the Branding page.
const (
	MaxLogoBytes = 512 << 10
	// MaxLogoSide bounds a logo's width and height, read from its header
	// before the image is decoded. It bounds what decoding it takes, which
	// the file's size does not: a 49 KB PNG of 2000×2000 pixels at 16 bits
	// a channel decodes to 32 MB, and a progressive CMYK JPEG takes about
	// 20 bytes a pixel. At 1024 a side one upload takes at most about
	// 20 MiB while it is checked, a usual PNG 4 MiB. That is still twice
	// what the checkout shows, for sharp screens: its header is 576 px
	// wide, and a logo at most 200 px high.
	MaxLogoSide = 1024
)

// LogoError says why an upload is not a logo we keep: Reason in English,
// Key and Args for the console to say it in its person's language
// ("console.reason." + Key).
type LogoError struct {
	Reason string
	Key    string
	Args   []any
}

func logoRefused(key string, args []any, format string, fargs ...any) *LogoError {
	return &LogoError{Reason: fmt.Sprintf(format, fargs...), Key: key, Args: args}
}

func (e *LogoError) Error() string { return "logo refused: " + e.Reason }

// logoKinds are the images a logo may be, with the name's extension and
// the decoder that proves it.
var logoKinds = []struct {
	format, contentType, ext string
	decode                   func([]byte) (image.Image, error)
	config                   func([]byte) (image.Config, error)
}{
	{"png", "image/png", "png", func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) },
		func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }},
	{"jpeg", "image/jpeg", "jpg", func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) },
		func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) }},
	{"webp", "image/webp", "webp", func(b []byte) (image.Image, error) { return webp.Decode(bytes.NewReader(b)) },
		func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) }},
}

// ReadLogo checks an upload by decoding it, whatever its name or declared
// type says: a PNG, JPEG or WebP image of at most MaxLogoBytes and
// MaxLogoSide pixels a side, its size read from its header before
// anything is decoded. SVG is refused: it can carry script. The logo's
// name is the SHA-256 of its bytes with its kind's extension.
func ReadLogo(data []byte) (ledger.Logo, error) {
	if len(data) == 0 {
		return ledger.Logo{}, logoRefused("logoEmpty", nil, "the file is empty")
	}
	if len(data) > MaxLogoBytes {
		return ledger.Logo{}, logoRefused("logoTooBig", []any{(len(data) + 1023) / 1024, MaxLogoBytes >> 10}, "the file is %d KB; a logo may be %d KB at most", (len(data)+1023)/1024, MaxLogoBytes>>10)
	}
	head := strings.ToLower(string(data[:min(len(data), 512)]))
	if strings.Contains(head, "<svg") || strings.Contains(head, "<?xml") {
		return ledger.Logo{}, logoRefused("logoSVG", nil, "SVG is not taken: it can carry script. Export the logo as PNG, JPEG or WebP")
	}
	for _, k := range logoKinds {
		cfg, err := k.config(data)
		if err != nil {
			continue
		}
		if cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide {
			return ledger.Logo{}, logoRefused("logoSide", []any{cfg.Width, cfg.Height, MaxLogoSide}, "the image is %d×%d pixels; a logo may be %d pixels a side at most", cfg.Width, cfg.Height, MaxLogoSide)
		}
		// The whole image decodes, not only its header: a broken file
		// would show as a broken image to shoppers.
		if _, err := k.decode(data); err != nil {
			return ledger.Logo{}, logoRefused("logoDamaged", []any{strings.ToUpper(k.format)}, "the %s image is damaged and cannot be shown", strings.ToUpper(k.format))
		}
		sum := sha256.Sum256(data)
		return ledger.Logo{Name: hex.EncodeToString(sum[:]) + "." + k.ext, ContentType: k.contentType,
			Width: cfg.Width, Height: cfg.Height, Data: data}, nil
	}
	return ledger.Logo{}, logoRefused("logoKind", nil, "the file is not a PNG, JPEG or WebP image")
}

// PutLogo keeps an uploaded logo for the merchant, read by ReadLogo.
func (s *Store) PutLogo(ctx context.Context, by Actor, id string, logo ledger.Logo) error {
	logo.MerchantID, logo.CreatedBy = id, by.Name
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := changeableMerchant(ctx, tx, id); err != nil {
			return err
		}
		if err := tx.PutLogo(ctx, logo); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventLogoUploaded, ledger.Text(logo.Name), ledger.Text(logo.ContentType),
			ledger.Count(int64(logo.Width)), ledger.Count(int64(logo.Height)), ledger.Count(int64(len(logo.Data)))).line(by, id))
	})
	return err
}

// LogoKinds names the kinds of image a logo may be, for the upload's
// accept attribute.
func LogoKinds() string {
	var types []string
	for _, k := range logoKinds {
		types = append(types, k.contentType)
	}
	return strings.Join(types, ",")
}
