package i18n

import (
	"embed"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/nicksnyder/go-i18n/v2/i18n/template"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// files hold every string people read, in go-i18n's JSON format, one file
// per language and audience: messages/shopper/de.json is the shopper's
// pages in German, messages/console/de.json the console's. Translators edit
// them, by hand or in a translation platform (docs/translate.md); English is
// the reference the tests hold every other language to.
//
//go:embed messages
var files embed.FS

// A catalog is one audience's strings in every language it speaks.
type catalog struct {
	// messages are the strings by language and key.
	messages map[string]map[string]*goi18n.Message
	// bundle holds the same messages for go-i18n, which picks the plural
	// form of a counted sentence by its language's CLDR rules.
	bundle *goi18n.Bundle
}

var (
	shopperCatalog = load("shopper")
	staffCatalog   = load("console")
)

// load reads the catalog of messages/name; a file that does not parse
// stops the program at start.
func load(name string) catalog {
	c := catalog{messages: map[string]map[string]*goi18n.Message{}, bundle: goi18n.NewBundle(language.English)}
	paths, err := fs.Glob(files, "messages/"+name+"/*.json")
	if err != nil || len(paths) == 0 {
		panic("i18n: no messages/" + name)
	}
	for _, p := range paths {
		file, err := c.bundle.LoadMessageFileFS(files, p)
		if err != nil {
			panic("i18n: " + p + ": " + err.Error())
		}
		byKey := make(map[string]*goi18n.Message, len(file.Messages))
		for _, m := range file.Messages {
			byKey[m.ID] = m
		}
		c.messages[strings.TrimSuffix(path.Base(p), ".json")] = byKey
	}
	return c
}

// localizers are c's Localizer of each language it speaks, English's
// strings standing in for any a language lacks.
func (c catalog) localizers() map[string]*Localizer {
	out := make(map[string]*Localizer, len(c.messages))
	for lang, messages := range c.messages {
		tag := language.MustParse(lang)
		digits := message.NewPrinter(tag)
		out[lang] = &Localizer{lang: lang, tag: tag, messages: messages, fallback: c.messages["en"],
			plural: goi18n.NewLocalizer(c.bundle, lang), digits: digits, amounts: newAmountDigits(digits)}
	}
	return out
}

// keys are the keys of c's English strings, sorted.
func (c catalog) keys() []string { return slices.Sorted(maps.Keys(c.messages["en"])) }

// counts says whether m is a counted sentence: one with plural forms.
func counts(m *goi18n.Message) bool {
	return m.Zero != "" || m.One != "" || m.Two != "" || m.Few != "" || m.Many != ""
}

// verbs finds the fmt verbs of a sentence: its placeholders.
var verbs = regexp.MustCompile(`%[-+# 0]*[0-9]*[a-zA-Z%]`)

// count is the number a counted sentence counts: the argument of its first
// %d; nil when it has none.
func count(format string, args []any) any {
	i := 0
	for _, v := range verbs.FindAllString(format, -1) {
		switch {
		case v == "%%":
			continue
		case v == "%d" && i < len(args):
			return args[i]
		}
		i++
	}
	return nil
}

// form is the plural form of the counted sentence key for n, as the CLDR
// rules of the language (or of English, for a sentence it lacks) choose
// it; "" when n is no count.
func (l *Localizer) form(key string, n any) string {
	// The forms are fmt formats, never templates: the identity parser
	// keeps them as they are.
	s, _ := l.plural.Localize(&goi18n.LocalizeConfig{MessageID: key, PluralCount: n, TemplateParser: template.IdentityParser{}})
	return s
}
