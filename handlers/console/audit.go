package console

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
	auditviews "github.com/paybybank/checkout/views/console/audit"
)

// sayAudit is an audit line as a sentence in l's language: "Anna rolled the
// webhook secret; the old one keeps signing for 24 hours". A line kept
// before events were, with only its English action, reads as it was
// written.
func sayAudit(l *i18n.Localizer, e ledger.AuditEntry) string {
	if e.Event == "" {
		return e.Action
	}
	args := []any{sayActor(l, e.Actor)}
	for _, a := range e.Args {
		args = append(args, sayArg(l, a))
	}
	return l.T("audit."+e.Event, args...)
}

// auditParts is sayAudit as the audit page shows it: each value that is
// one word of at most 40 characters (an order's or a refund's id, a
// token's prefix) apart, to be kept on one line, where a hyphen in it
// would otherwise let it break.
func auditParts(l *i18n.Localizer, e ledger.AuditEntry) []auditviews.Part {
	if e.Event == "" {
		return []auditviews.Part{{Text: e.Action}}
	}
	values := []string{sayActor(l, e.Actor)}
	for _, a := range e.Args {
		values = append(values, sayArg(l, a))
	}
	marks := make([]any, len(values))
	for i := range values {
		marks[i] = "\x00" + strconv.Itoa(i) + "\x00"
	}
	var parts []auditviews.Part
	for i, piece := range strings.Split(l.T("audit."+e.Event, marks...), "\x00") {
		if i%2 == 0 {
			if piece != "" {
				parts = append(parts, auditviews.Part{Text: piece})
			}
			continue
		}
		n, _ := strconv.Atoi(piece)
		v := values[n]
		parts = append(parts, auditviews.Part{Text: v, Keep: !strings.ContainsRune(v, ' ') && utf8.RuneCountInString(v) <= 40})
	}
	return parts
}

// sayActor is who did it: a person by their e-mail, the merchants file,
// the command line, a start of the app or a refund's payer by name.
func sayActor(l *i18n.Localizer, actor string) string {
	if name, ok := settings.Actors[actor]; ok {
		return l.T("audit.actor." + name)
	}
	if actor == refunds.ByPayer {
		// A payer typing their account on their refund page.
		return l.T("audit.actor.payer")
	}
	return actor
}

// sayArg writes one value of a line as l's language does.
func sayArg(l *i18n.Localizer, a ledger.AuditArg) string {
	switch a.Kind {
	case ledger.ArgRole:
		return l.T("console.role." + a.Value)
	case ledger.ArgFields:
		return sayFields(l, a.Value)
	case ledger.ArgDuration:
		s, _ := strconv.ParseInt(a.Value, 10, 64)
		d := time.Duration(s) * time.Second
		if d > 0 && d%time.Hour == 0 {
			return l.T("audit.hours", int(d/time.Hour))
		}
		return duration(l, d)
	case ledger.ArgTime:
		ms, _ := strconv.ParseInt(a.Value, 10, 64)
		return l.DateTime(time.UnixMilli(ms)) + " UTC"
	case ledger.ArgCount:
		n, _ := strconv.ParseInt(a.Value, 10, 64)
		return l.Number(n)
	case ledger.ArgLanguage:
		if _, ok := i18n.Base(a.Value); ok {
			return i18n.Name(a.Value)
		}
	case ledger.ArgReason:
		return l.T("audit.reason." + a.Value)
	case ledger.ArgDevice:
		return deviceIn(l, a.Value)
	}
	return a.Value
}

// sayFields lists the fields of a change as their pages name them, a
// secret's with what happened to it: "Webhook URL, Webhook secret (new)".
func sayFields(l *i18n.Localizer, list string) string {
	if list == "" {
		return l.T("audit.field.none")
	}
	var out []string
	for _, f := range strings.Split(list, ",") {
		name, what, secret := strings.Cut(f, ":")
		key, ok := fieldLabels[name]
		if !ok {
			key = "audit.field." + name
		}
		said := l.T(key)
		if secret {
			said = l.T("audit.secret."+what, said)
		}
		out = append(out, said)
	}
	return strings.Join(out, l.T("audit.listSeparator"))
}

// argsOf is a line's values as the CSV gives them to programs: a JSON list
// of the values, in the sentence's order after the actor.
func argsOf(e ledger.AuditEntry) string {
	if len(e.Args) == 0 {
		return ""
	}
	values := make([]string, len(e.Args))
	for i, a := range e.Args {
		values[i] = a.Value
	}
	raw, _ := json.Marshal(values)
	return string(raw)
}

// fieldLabels are the catalog keys of the fields a page of the console
// names; the others are said from "audit.field.<name>".
var fieldLabels = map[string]string{
	"name":            "console.settings.name",
	"return_origins":  "console.settings.returnOrigins",
	"frame_ancestors": "console.settings.frameAncestors",
	"popular_banks":   "console.settings.popularBanks",
	"ip_verification": "console.settings.ipVerification",
	"legal_name":      "console.settings.legalName",
	"contact_email":   "console.settings.contactEmail",
	"contact_phone":   "console.settings.contactPhone",
	"contact_url":     "console.settings.contactURL",
	"terms_url":       "console.settings.termsURL",
	"privacy_url":     "console.settings.privacyURL",
	"time_zone":       "console.settings.timeZone",
	"webhook_url":     "console.developers.webhook",
	"link_keys":       "console.developers.keys",
	"title":           "console.branding.field.title",
	"logoUrl":         "console.branding.field.logoUrl",
	"logoHeight":      "console.branding.field.logoHeight",
	"primaryColor":    "console.branding.field.primaryColor",
	"bgColor":         "console.branding.field.bgColor",
	"spacing":         "console.branding.field.spacing",
	"radius":          "console.branding.field.radius",
	"modalShadow":     "console.branding.field.modalShadow",
}
