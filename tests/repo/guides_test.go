package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTheIntegrationGuideShowsTheCheckedCode holds docs/integrate.md to the
// merchant-side checks the tests run: the Go verifiers of the way back and
// of webhooks, and their openssl lines, must stand in the guide exactly as
// the tests that prove them have them, so that what a merchant copies is
// what was proven.
func TestTheIntegrationGuideShowsTheCheckedCode(t *testing.T) {
	guide, err := os.ReadFile("docs/integrate.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, function, shell string }{
		{"order/merchant_side_test.go", "verifyReturn", "opensslOneLiner"},
		{"webhook/merchant_side_test.go", "verifyWebhook", "opensslOneLiner"},
	} {
		src, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, tt.file, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]string{}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.Name == tt.function {
					found[tt.function] = string(src[fset.Position(d.Pos()).Offset:fset.Position(d.End()).Offset])
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok || len(vs.Names) != 1 || vs.Names[0].Name != tt.shell || len(vs.Values) != 1 {
						continue
					}
					if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
						found[tt.shell], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
		for _, name := range []string{tt.function, tt.shell} {
			code, ok := found[name]
			if !ok {
				t.Errorf("%s has no %s", tt.file, name)
				continue
			}
			if !strings.Contains(string(guide), code) {
				t.Errorf("docs/integrate.md does not show %s of %s as the test has it:\n%s", name, tt.file, code)
			}
		}
	}
}
