package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/assets"
)

// assets serves the embedded css, js and vendored files; nothing comes from
// a CDN. The catalog decides the caching: a year for content-hashed URLs
// (what the pages link to), revalidation for anything else.
func (s *Server) assets() echo.HandlerFunc {
	return echo.WrapHandler(assets.Default().Handler())
}

// favicon points old browsers at the current favicon. The target changes
// with each release, so the redirect is not permanent.
func (s *Server) favicon(c echo.Context) error {
	return c.Redirect(http.StatusFound, assets.URL("favicon.svg"))
}
