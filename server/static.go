package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/assets"
)

// assets serves the embedded css, js and vendored files; nothing comes from
// a CDN. Files are small and change only with a release, so an hour of
// caching is safe.
func (s *Server) assets() echo.HandlerFunc {
	fs := http.StripPrefix("/assets/", http.FileServer(http.FS(assets.FS)))
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		fs.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

func (s *Server) favicon(c echo.Context) error {
	return c.Redirect(http.StatusMovedPermanently, "/assets/favicon.svg")
}
