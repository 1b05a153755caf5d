package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// RouteContract serves the API's OpenAPI 3.1 document, with no token.
const RouteContract = "/api/v1/openapi.json"

// Contract is the API's OpenAPI 3.1 document (openapi.json), served as it
// is in the repository. Tests validate every answer of the API and every
// webhook body against it.
//
//go:embed openapi.json
var Contract []byte

// ShowContract answers GET /api/v1/openapi.json.
func (h *API) ShowContract(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, Contract)
}
