// Package contracttest holds the API's answers and the webhooks' bodies to
// its OpenAPI document (handlers/api/openapi.json) in tests, with
// libopenapi-validator, so that the document cannot drift from the code.
package contracttest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/paybybank/checkout/handlers/api"
)

// contract is the document read once per test binary.
type contract struct {
	mu       sync.Mutex
	validate validator.Validator
	model    *v3.Document
	webhooks map[string]*base.Schema
}

var (
	loaded  *contract
	loadErr error
	once    sync.Once
)

// Load reads the document and checks it against the OpenAPI 3.1
// specification.
func Load(t testing.TB) *v3.Document {
	t.Helper()
	return load(t).model
}

func load(t testing.TB) *contract {
	t.Helper()
	once.Do(func() { loaded, loadErr = read() })
	if loadErr != nil {
		t.Fatalf("handlers/api/openapi.json: %v", loadErr)
	}
	return loaded
}

func read() (*contract, error) {
	doc, err := libopenapi.NewDocument(api.Contract)
	if err != nil {
		return nil, err
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("not a valid OpenAPI document: %s", describe(verrs))
	}
	c := &contract{validate: v, model: &model.Model, webhooks: map[string]*base.Schema{}}
	if model.Model.Webhooks != nil {
		for name, item := range model.Model.Webhooks.FromOldest() {
			if item.Post == nil || item.Post.RequestBody == nil {
				return nil, fmt.Errorf("webhook %s: no POST body", name)
			}
			media := item.Post.RequestBody.Content.GetOrZero("application/json")
			if media == nil || media.Schema == nil {
				return nil, fmt.Errorf("webhook %s: no application/json schema", name)
			}
			c.webhooks[name] = media.Schema.Schema()
		}
	}
	return c, nil
}

// Wrap is next with every answer to a GET or POST under /api/v1/ checked
// against the document: its status must be documented for the route (or
// fall under default) and its body must match the schema.
func Wrap(t testing.TB, next http.Handler) http.Handler {
	c := load(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v1/") || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		res := rec.Result()
		body := rec.Body.Bytes()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		w.Write(body)

		plain := body
		if res.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err == nil {
				plain, err = io.ReadAll(zr)
			}
			if err != nil {
				t.Errorf("%s %s: a gzip answer that does not decompress: %v", r.Method, r.URL.Path, err)
				return
			}
		}
		res.Header.Del("Content-Encoding")
		res.Body = io.NopCloser(bytes.NewReader(plain))
		c.mu.Lock()
		ok, errs := c.validate.ValidateHttpResponse(r, res)
		c.mu.Unlock()
		if !ok {
			t.Errorf("%s %s answered %d, which the API's contract (handlers/api/openapi.json) does not allow: %s\nbody: %.500s",
				r.Method, r.URL.Path, res.StatusCode, describe(errs), plain)
		}
	})
}

// CheckWebhook checks a webhook body against the document's webhook of
// its type; it reports whether the body matches.
func CheckWebhook(t testing.TB, body []byte) bool {
	t.Helper()
	c := load(t)
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		t.Errorf("a webhook body that is not JSON: %v", err)
		return false
	}
	schema, ok := c.webhooks[head.Type]
	if !ok {
		t.Errorf("a webhook of type %q, which the API's contract does not list under webhooks", head.Type)
		return false
	}
	c.mu.Lock()
	valid, errs := schema_validation.NewSchemaValidator().ValidateSchemaBytes(schema, body)
	c.mu.Unlock()
	if !valid {
		t.Errorf("a %s webhook the API's contract does not allow: %s\nbody: %s", head.Type, describe(errs), body)
	}
	return valid
}

// describe lists validation errors, with the schema's own words.
func describe(errs []*errors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s at %s", se.Reason, se.FieldPath)
		}
	}
	return b.String()
}
