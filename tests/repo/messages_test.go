package repo

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paybybank/checkout/i18n"
)

// TestEveryMessageGetsTheValuesItNames reads every place the code says a
// message by a key written out (l.T("key", …), i18n.T(ctx, "key", …), the
// console's t(ec, "key", …), the refusals' .Says("key", …), a page error's
// Key and Args; the .templ pages through their generated Go) and holds the
// values it passes to the message in English and in every translation:
// as many as the sentence has placeholders, no fewer (a reader would see
// "%!s(MISSING)") and no more. Then it renders each message at each place
// in every language and fails on any "%!" fmt leaves in the text.
func TestEveryMessageGetsTheValuesItNames(t *testing.T) {
	catalogs := map[string]*messageCatalog{
		"shopper": loadCatalog(t, "shopper", i18n.New),
		"console": loadCatalog(t, "console", i18n.Staff),
	}
	sites := messageSites(t)
	if len(sites) < 900 {
		t.Fatalf("found %d places that say a message; the patterns no longer match the code", len(sites))
	}
	for _, s := range sites {
		found := false
		for _, name := range slices.Sorted(maps.Keys(catalogs)) {
			c := catalogs[name]
			if _, ok := c.langs["en"][s.key]; !ok {
				continue
			}
			found = true
			var wrong []string
			for _, lang := range slices.Sorted(maps.Keys(c.langs)) {
				forms := c.langs[lang][s.key]
				for _, form := range slices.Sorted(maps.Keys(forms)) {
					if n := len(placeholders(forms[form])); n != len(s.args) {
						wrong = append(wrong, fmt.Sprintf("%s (%s) names %d: %q", lang, form, n, forms[form]))
					}
				}
			}
			if len(wrong) > 0 {
				t.Errorf("%s: %s is given %d value(s) here; in the %s catalog its sentence names another number:\n  %s",
					s.pos, s.key, len(s.args), name, strings.Join(wrong, "\n  "))
				continue
			}
			for _, lang := range slices.Sorted(maps.Keys(c.langs)) {
				for _, args := range s.values(placeholders(c.langs["en"][s.key]["other"])) {
					if got := c.localizer(lang).T(s.key, args...); strings.Contains(got, "%!") || strings.Contains(got, i18n.Missing) {
						t.Errorf("%s: %s in %s reads %q", s.pos, s.key, lang, got)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: no catalog has the message %s", s.pos, s.key)
		}
	}
}

// messageCatalog is one audience's message files as translators write
// them: each key's sentence by language and plural form ("other" for a
// sentence that counts nothing).
type messageCatalog struct {
	langs     map[string]map[string]map[string]string
	localizer func(lang string) *i18n.Localizer
}

func loadCatalog(t *testing.T, audience string, localizer func(string) *i18n.Localizer) *messageCatalog {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("i18n", "messages", audience, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no message files for %s: %v", audience, err)
	}
	c := &messageCatalog{langs: map[string]map[string]map[string]string{}, localizer: localizer}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		messages := map[string]map[string]string{}
		for key, entry := range entries {
			var plain string
			if json.Unmarshal(entry, &plain) == nil {
				messages[key] = map[string]string{"other": plain}
				continue
			}
			var forms map[string]string
			if err := json.Unmarshal(entry, &forms); err != nil {
				t.Fatalf("%s: %s: %v", file, key, err)
			}
			delete(forms, "description")
			messages[key] = forms
		}
		c.langs[strings.TrimSuffix(filepath.Base(file), ".json")] = messages
	}
	return c
}

// verbs are fmt's verbs as the message files write them.
var verbs = regexp.MustCompile(`%[-+# 0]*[0-9]*[a-zA-Z%]`)

// placeholders are the verbs of a sentence that take a value ("%%" is a
// percent sign).
func placeholders(sentence string) []string {
	return slices.DeleteFunc(verbs.FindAllString(sentence, -1), func(v string) bool { return v == "%%" })
}

// messageSite is one place in the code that says a message.
type messageSite struct {
	pos  string
	key  string
	args []ast.Expr
}

// values are the values the site passes, as the sentence's verbs take
// them: a literal as written, another value as its verb would print it
// (text for %s and %q, a whole number for %d, at every count that picks
// another plural form).
func (s messageSite) values(verbs []string) [][]any {
	counts := []int{7}
	if slices.Contains(verbs, "%d") {
		counts = []int{0, 1, 2, 3, 5, 11, 22, 101, 1000000}
	}
	var out [][]any
	for _, n := range counts {
		args := make([]any, len(s.args))
		for i, expr := range s.args {
			verb := ""
			if i < len(verbs) {
				verb = verbs[i]
			}
			args[i] = valueOf(expr, verb, n)
		}
		out = append(out, args)
	}
	return out
}

func valueOf(expr ast.Expr, verb string, n int) any {
	if lit, ok := expr.(*ast.BasicLit); ok {
		switch lit.Kind {
		case token.INT:
			if v, err := strconv.Atoi(lit.Value); err == nil {
				return v
			}
		case token.STRING:
			if v, err := strconv.Unquote(lit.Value); err == nil {
				return v
			}
		}
	}
	if verb == "%d" {
		return n
	}
	return "Kitchen & Co"
}

// messageSites finds every place in the program's Go sources (the .templ
// pages' generated Go included, tests left out) that names a message by a
// key written out, with the values it passes; places that pass a slice
// of values (args...) are left out, as their count is known only when
// they run.
func messageSites(t *testing.T) []messageSite {
	t.Helper()
	var sites []messageSite
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		add := func(node ast.Node, key ast.Expr, prefix string, args []ast.Expr) {
			if k, ok := stringLit(key); ok {
				sites = append(sites, messageSite{pos: fset.Position(node.Pos()).String(), key: prefix + k, args: args})
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if n.Ellipsis.IsValid() {
					return true
				}
				switch fun := n.Fun.(type) {
				case *ast.SelectorExpr:
					switch {
					case fun.Sel.Name == "T" && isIdent(fun.X, "i18n") && len(n.Args) >= 2:
						// i18n.T(ctx, "key", …), in the views.
						add(n, n.Args[1], "", n.Args[2:])
					case fun.Sel.Name == "T" && len(n.Args) >= 1:
						// l.T("key", …), on a localizer.
						add(n, n.Args[0], "", n.Args[1:])
					case fun.Sel.Name == "Says" && len(n.Args) >= 1:
						// A refusal of settings, said by the console.
						add(n, n.Args[0], "console.reason.", n.Args[1:])
					}
				case *ast.Ident:
					switch {
					case fun.Name == "t" && len(n.Args) >= 2:
						// The console's t(ec, "key", …).
						add(n, n.Args[1], "", n.Args[2:])
					case (fun.Name == "refuse" || fun.Name == "logoRefused") && len(n.Args) >= 2:
						// A password's or a logo's refusal: its key and
						// the values the console says, as a slice.
						if args, ok := sliceOrNil(n.Args[1]); ok {
							add(n, n.Args[0], "console.reason.", args)
						}
					}
				}
			case *ast.CompositeLit:
				// A page error: its heading (Key) says nothing of its
				// values, its text (Key.text) says Args.
				if !isType(n.Type, "PageError") {
					return true
				}
				var key ast.Expr
				var args []ast.Expr
				argsKnown := true
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					switch {
					case isIdent(kv.Key, "Key"):
						key = kv.Value
					case isIdent(kv.Key, "Args"):
						args, argsKnown = sliceOrNil(kv.Value)
					}
				}
				if key != nil {
					add(n, key, "", nil)
					if argsKnown {
						if k, ok := stringLit(key); ok {
							sites = append(sites, messageSite{pos: fset.Position(n.Pos()).String(), key: k + ".text", args: args})
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isType says whether e names the type name, of this package or another.
func isType(e ast.Expr, name string) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == name
	case *ast.SelectorExpr:
		return e.Sel.Name == name
	case *ast.UnaryExpr:
		return isType(e.X, name)
	}
	return false
}

// sliceOrNil reads values written as []any{…} or nil.
func sliceOrNil(e ast.Expr) ([]ast.Expr, bool) {
	if isIdent(e, "nil") {
		return nil, true
	}
	if lit, ok := e.(*ast.CompositeLit); ok {
		if _, ok := lit.Type.(*ast.ArrayType); ok {
			return lit.Elts, true
		}
	}
	return nil, false
}
