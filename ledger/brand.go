package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Branding: a merchant's draft look, the looks it published and the logos
// its designers uploaded. A draft is no setting: shoppers never see it, so
// saving one moves no settings version. Publishing is a
// settings change (the merchant's customization) that also writes the
// version here, in the same transaction.

// BrandDraft is a merchant's draft look: customization is its JSON.
type BrandDraft struct {
	Customization string
	// Version counts the draft's saves from 1: a save names the version it
	// was made from, and loses to any newer one.
	Version   int64
	Updated   time.Time
	UpdatedBy string
}

// ErrDraftConflict means the draft was saved meanwhile by someone else.
var ErrDraftConflict = errors.New("ledger: the draft was saved meanwhile")

// BrandDraft reads a merchant's draft; false when none was saved.
func (l *Ledger) BrandDraft(ctx context.Context, merchantID string) (BrandDraft, bool, error) {
	return brandDraft(ctx, l.db, merchantID)
}

// BrandDraft reads a merchant's draft inside the change.
func (s *SettingsTx) BrandDraft(ctx context.Context, merchantID string) (BrandDraft, bool, error) {
	return brandDraft(ctx, s.tx, merchantID)
}

func brandDraft(ctx context.Context, q querier, merchantID string) (BrandDraft, bool, error) {
	var d BrandDraft
	var at int64
	err := q.QueryRowContext(ctx, `SELECT customization, version, updated_at, updated_by FROM brand_drafts WHERE merchant_id = $1`,
		merchantID).Scan(&d.Customization, &d.Version, &at, &d.UpdatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	d.Updated = time.UnixMilli(at)
	return d, err == nil, err
}

// PutBrandDraft saves a merchant's draft as the version after from (0 for
// the first), in a change of the settings that writes no setting (its
// audit line at most): ErrDraftConflict when the draft is at another
// version by now. It returns the version written.
func (s *SettingsTx) PutBrandDraft(ctx context.Context, merchantID, customization string, from int64, by string) (int64, error) {
	at := s.at.UnixMilli()
	if from == 0 {
		res, err := s.tx.ExecContext(ctx, `INSERT INTO brand_drafts (merchant_id, customization, version, updated_at, updated_by)
			VALUES ($1, $2, 1, $3, $4) ON CONFLICT (merchant_id) DO NOTHING`, merchantID, customization, at, by)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return 0, cmpErr(err, ErrDraftConflict)
		}
		return 1, nil
	}
	res, err := s.tx.ExecContext(ctx, `UPDATE brand_drafts SET customization = $2, version = version + 1, updated_at = $4, updated_by = $5
		WHERE merchant_id = $1 AND version = $3`, merchantID, customization, from, at, by)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, cmpErr(err, ErrDraftConflict)
	}
	return from + 1, nil
}

// BrandVersion is a look a merchant published.
type BrandVersion struct {
	MerchantID    string
	Version       int64
	Customization string
	// Changed names the fields that differ from the version before.
	Changed string
	// RevertedFrom is the older version this one made live again; 0 when
	// it was a draft published.
	RevertedFrom int64
	Published    time.Time
	PublishedBy  string
}

// LatestBrandVersion is the number of the merchant's live look inside the
// change; 0 when it never published one.
func (s *SettingsTx) LatestBrandVersion(ctx context.Context, merchantID string) (int64, error) {
	var v int64
	err := s.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM brand_versions WHERE merchant_id = $1`, merchantID).Scan(&v)
	return v, err
}

// AddBrandVersion records a published look.
func (s *SettingsTx) AddBrandVersion(ctx context.Context, v BrandVersion) error {
	s.changed = true
	_, err := s.tx.ExecContext(ctx, `INSERT INTO brand_versions (merchant_id, version, customization, changed, reverted_from, published_at, published_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, v.MerchantID, v.Version, v.Customization, v.Changed, v.RevertedFrom, s.at.UnixMilli(), v.PublishedBy)
	return err
}

const brandVersionColumns = `merchant_id, version, customization, changed, reverted_from, published_at, published_by`

func scanBrandVersion(row interface{ Scan(...any) error }) (BrandVersion, error) {
	var v BrandVersion
	var at int64
	err := row.Scan(&v.MerchantID, &v.Version, &v.Customization, &v.Changed, &v.RevertedFrom, &at, &v.PublishedBy)
	v.Published = time.UnixMilli(at)
	return v, err
}

// BrandVersions lists the looks a merchant published, newest first.
func (l *Ledger) BrandVersions(ctx context.Context, merchantID string) ([]BrandVersion, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT `+brandVersionColumns+` FROM brand_versions WHERE merchant_id = $1 ORDER BY version DESC`, merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []BrandVersion
	for rows.Next() {
		v, err := scanBrandVersion(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

// NewestBrandVersion reads the merchant's live look, the newest published;
// ErrNotFound when it never published one.
func (l *Ledger) NewestBrandVersion(ctx context.Context, merchantID string) (BrandVersion, error) {
	v, err := scanBrandVersion(l.db.QueryRowContext(ctx, `SELECT `+brandVersionColumns+` FROM brand_versions WHERE merchant_id = $1
		ORDER BY version DESC LIMIT 1`, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return v, ErrNotFound
	}
	return v, err
}

// BrandVersion reads one published look; ErrNotFound when there is none.
func (l *Ledger) BrandVersion(ctx context.Context, merchantID string, version int64) (BrandVersion, error) {
	return brandVersion(ctx, l.db, merchantID, version)
}

// BrandVersion reads one published look inside the change.
func (s *SettingsTx) BrandVersion(ctx context.Context, merchantID string, version int64) (BrandVersion, error) {
	return brandVersion(ctx, s.tx, merchantID, version)
}

func brandVersion(ctx context.Context, q querier, merchantID string, version int64) (BrandVersion, error) {
	v, err := scanBrandVersion(q.QueryRowContext(ctx, `SELECT `+brandVersionColumns+` FROM brand_versions WHERE merchant_id = $1 AND version = $2`,
		merchantID, version))
	if errors.Is(err, sql.ErrNoRows) {
		return v, ErrNotFound
	}
	return v, err
}

// Logo is an uploaded logo: its name is the hash of its bytes with the
// extension of its kind, so that the same image is one row and its
// address never changes meaning.
type Logo struct {
	Name        string
	MerchantID  string
	ContentType string
	Width       int
	Height      int
	Data        []byte
	Created     time.Time
	CreatedBy   string
}

// PutLogo keeps an uploaded logo, in a change of the settings that writes
// no setting; the same bytes uploaded again are the row there is.
func (s *SettingsTx) PutLogo(ctx context.Context, logo Logo) error {
	_, err := s.tx.ExecContext(ctx, `INSERT INTO brand_logos (name, merchant_id, content_type, width, height, data, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name) DO NOTHING`,
		logo.Name, logo.MerchantID, logo.ContentType, logo.Width, logo.Height, logo.Data, s.at.UnixMilli(), logo.CreatedBy)
	return err
}

// Logo reads an uploaded logo by name; ErrNotFound when there is none.
func (l *Ledger) Logo(ctx context.Context, name string) (Logo, error) {
	var logo Logo
	var at int64
	err := l.db.QueryRowContext(ctx, `SELECT name, merchant_id, content_type, width, height, data, created_at, created_by FROM brand_logos WHERE name = $1`,
		name).Scan(&logo.Name, &logo.MerchantID, &logo.ContentType, &logo.Width, &logo.Height, &logo.Data, &at, &logo.CreatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return logo, ErrNotFound
	}
	logo.Created = time.UnixMilli(at)
	return logo, err
}
